"""Check that the built site's equations render: open pages of a built site in headless Chromium, let KaTeX run,
count the rendered equations and the KaTeX errors in the page's DOM, and save a screenshot of each page.

    mkdocs build -d site
    python docs/scripts/screenshot_equations.py site OUT_DIR [PAGE ...]

PAGE defaults to ``impulsive/index.html`` and ``api/contact/index.html``. Exits non-zero when a page has no
rendered equation, a KaTeX error, or an equation left as raw ``\\(`` … ``\\)``. Needs a ``chromium`` (or
``chromium-browser``/``google-chrome``) executable (Debian: ``apt-get install chromium``).
"""

import pathlib
import re
import shutil
import subprocess
import sys

PAGES = ("impulsive/index.html", "api/contact/index.html")


def browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    raise SystemExit("no chromium executable on PATH")


def check(site: pathlib.Path, out: pathlib.Path, pages=PAGES) -> list[str]:
    """Problems found (empty when every page renders); the screenshots go to ``out/PAGE.png``."""
    exe, problems = browser(), []
    out.mkdir(parents=True, exist_ok=True)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
             "--virtual-time-budget=10000", "--hide-scrollbars"]
    for page in pages:
        url = (site / page).resolve().as_uri()
        dom = subprocess.run([exe, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
        png = out / (page.replace("/index.html", "").replace("/", "-") + ".png")
        subprocess.run([exe, *flags, f"--screenshot={png}", "--window-size=1280,2400", url],
                       capture_output=True, timeout=120)
        rendered = len(re.findall(r'class="katex"', dom))
        errors = len(re.findall(r'class="katex-error"', dom))
        left = len(re.findall(r'class="arithmatex">\\\(', dom))
        print(f"{page}: {rendered} equations rendered, {errors} KaTeX errors, {left} left raw; screenshot {png}")
        if not rendered or errors or left or not png.exists():
            problems.append(f"{page}: {rendered} rendered, {errors} errors, {left} raw, screenshot {png.exists()}")
    return problems


if __name__ == "__main__":
    site, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    problems = check(site, out, sys.argv[3:] or PAGES)
    if problems:
        raise SystemExit("\n".join(problems))
