"""The documentation: the site builds with ``mkdocs build --strict`` (a broken link or API reference fails),
every public name is in its API reference, and the runnable examples of the README and the docs pages (the
README's impact and gradient, your own model, the importers, the grid sweep) run, give the check values of
Font-Llagunes et al. (2012), and their gradients agree with finite differences."""

import ast
import importlib.util
import math
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import jax
import numpy as np
import pytest

import difimpact

ROOT = Path(__file__).parent.parent


def _hooks():
    spec = importlib.util.spec_from_file_location("difimpact_docs", ROOT / "docs" / "_hooks" / "difimpact_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Maths must reach the reader as LaTeX inside the arithmatex elements that KaTeX renders: RST maths, raw LaTeX or
# caret notation anywhere else in a built page (prose, tables, inline code) is a failure.
MATH_CHECKS = {"rst math": re.compile(r"\.\. math::|:math:`"),
          "raw latex": re.compile(r"\$\$|\\begin\{|\\(?:frac|dot|mathrm|top|sqrt)\b"),
          "caret": re.compile(r"[\w)\]⁺⁻*]\^[-+\w({]")}


class _Prose(HTMLParser):
    """The text of a page outside <pre>, <script>, <style>, <textarea> and the arithmatex elements (each skipped
    element is closed by the end tag of its own name at its own nesting depth)."""
    SKIP = {"pre", "script", "style", "textarea"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.skip_tag, self.depth, self.text = None, 0, []

    def handle_starttag(self, tag, attrs):
        if self.skip_tag is not None:
            self.depth += tag == self.skip_tag
        elif tag in self.SKIP or {"arithmatex", "clipboard-copy-txt"} & set((dict(attrs).get("class") or "").split()):
            self.skip_tag, self.depth = tag, 1

    def handle_endtag(self, tag):
        if tag == self.skip_tag:
            self.depth -= 1
            if self.depth == 0:
                self.skip_tag = None

    def handle_data(self, data):
        if self.skip_tag is None:
            self.text.append(data)


def prose(html: str) -> str:
    parser = _Prose()
    parser.feed(html)
    return " ".join(parser.text)



def raw_math(site: Path) -> list[str]:
    """``page: kind: context`` for every piece of maths outside the rendered elements of the built site."""
    found = []
    for page in sorted(site.rglob("*.html")):
        text = prose(page.read_text())
        for kind, rx in MATH_CHECKS.items():
            found += [f"{page.relative_to(site)}: {kind}: {text[max(0, m.start() - 30):m.end() + 20]!r}"
                      for m in rx.finditer(text)]
    return found


def test_mkdocs_build_strict(tmp_path):
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                          "-d", str(site)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    api = "".join(p.read_text() for p in (site / "api").rglob("index.html"))
    names = _hooks().public_names(difimpact)
    assert len(names) > 40
    missing = [n for n in names if f'id="difimpact.{n}"' not in api]
    assert not missing, f"public names without an API entry: {missing}"
    raw = raw_math(site)
    assert not raw, "maths not written as LaTeX:\n" + "\n".join(raw[:30])
    assert "seed 00" not in "".join(p.read_text().lower() for p in site.rglob("*.html")), "papers by author and year"


_CONCEPT = re.compile(r"^# ([A-Z][\w -]*?)(?:, continued)?: ")


def _concepts() -> dict[str, list[str]]:
    """``{concept: public names}`` of ``difimpact/__init__.py``: each import (lazy ones too) under the last
    ``# Concept: …`` comment above it."""
    text = (ROOT / "difimpact" / "__init__.py").read_text()
    heads = [(i + 1, m.group(1)) for i, line in enumerate(text.splitlines()) if (m := _CONCEPT.match(line))]
    groups: dict[str, list[str]] = {}
    body = ast.parse(text).body  # the imports at the top level and in its `if TYPE_CHECKING:` blocks (lazy names)
    nodes = [n for node in body for n in (node.body if isinstance(node, ast.If) else [node])]
    for node in nodes:
        public = [a.asname or a.name for a in getattr(node, "names", ()) if not (a.asname or a.name).startswith("_")]
        if isinstance(node, ast.ImportFrom) and node.level and public:
            concept = [name for line, name in heads if line < node.lineno][-1]
            groups.setdefault(concept, []).extend(public)
    return groups


def test_the_api_index_counts_and_groups_the_public_names():
    """docs/api/index.md gives the number of public names and, by concept, the names that ``__init__.py`` imports
    under that concept's comment; together they are the namespace's public names."""
    page = (ROOT / "docs" / "api" / "index.md").read_text()
    names = _hooks().public_names(difimpact)
    assert f"**{len(names)} public names**" in page
    rows = {m.group(1): (int(m.group(2)), set(re.findall(r"`(\w+)`", m.group(3))))
            for m in re.finditer(r"^\| ([A-Z][\w -]*) \| (\d+) \| (.*) \|$", page, flags=re.M)}
    groups = _concepts()
    assert {c: (len(v), set(v)) for c, v in groups.items()} == rows
    assert sorted(n for v in groups.values() for n in v) == sorted(names)


# The files whose ``<!-- test: run -->`` blocks run, in this order, in one namespace.
RUNNABLE = ("README.md", "docs/own-model.md", "docs/importing.md", "docs/gradients.md")


def _runnable_blocks(name: str) -> list[str]:
    text = (ROOT / name).read_text()
    return re.findall(r"<!-- test: run -->\n```python\n(.*?)```", text, flags=re.S)


def test_readme_is_short():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b|\bUTC\b|\bcommit `?[0-9a-f]{7}", text), "no timestamps or hashes"
    assert not re.search(r"(?i)seed[ -]00\d", text), "papers by author and year"
    assert len(_runnable_blocks("README.md")) == 1
    block = _runnable_blocks("README.md")[0]
    assert 10 <= len(block.strip().splitlines()) <= 16


def test_readme_examples():
    blocks = {name: _runnable_blocks(name) for name in RUNNABLE}
    assert all(blocks.values()), f"every file of RUNNABLE has a <!-- test: run --> block: {blocks.keys()}"
    ns: dict = {"__name__": "readme"}
    for name in RUNNABLE:
        for block in blocks[name]:
            exec(compile(block, name, "exec"), ns)
        if name == "README.md":
            ns["readme_loss"] = ns["loss"]
    # The README's example: the check values of Font-Llagunes et al. 2012 at q3 = 12°, q̇5 = −0.2 rad/s, μ = 0.75,
    # and its gradient against central differences.
    hit = ns["hit"]
    np.testing.assert_allclose([hit.normal_impulse, hit.tangential_impulse, hit.mu_c], [14.16, -9.77, 0.675],
                               atol=6e-3)
    readme_loss, q3 = ns["readme_loss"], math.radians(12.0)
    fd = (readme_loss(q3 + 1e-6) - readme_loss(q3 - 1e-6)) / 2e-6
    np.testing.assert_allclose(jax.grad(readme_loss)(q3), fd, rtol=1e-5)
    # The grid sweep at the same state: μ = 0.75 and 1 ≥ μ_c stick, as the single call does; μ = 0.5 slides.
    P_n = ns["P_n"]
    np.testing.assert_allclose(P_n[3, 0, 1:], float(hit.normal_impulse), rtol=1e-12)
    assert P_n[3, 0, 0] < 0.5 * float(hit.normal_impulse)
    di, leg, pre_impact, with_mass = ns["di"], ns["leg"], ns["pre_impact"], ns["with_mass"]
    assert abs(float(leg.point(ns["q"], "foot")[1])) < 1e-9  # the root find put the foot on the ground

    # The README's own two gradients, evaluated as it does (eagerly: the programs it compiled are reused).
    loss = lambda q4: di.energy_loss(leg, *pre_impact(q4), stick=("foot",))  # noqa: E731
    q4, h = math.radians(15.0), 1e-6
    fd = (loss(q4 + h) - loss(q4 - h)) / (2 * h)
    np.testing.assert_allclose(jax.grad(loss)(q4), fd, rtol=1e-6)

    q, qdot, m0 = ns["q"], ns["qdot"], leg.planar_tree.mass
    mass_loss = lambda m: di.energy_loss(with_mass(m), q, qdot, stick=("foot",))  # noqa: E731
    fd = [(mass_loss(m0.at[i].add(h)) - mass_loss(m0.at[i].add(-h))) / (2 * h) for i in range(2)]
    np.testing.assert_allclose(jax.grad(mass_loss)(m0), fd, rtol=1e-6)


def test_bodies_by_name_equal_bodies_by_index():
    by_name = difimpact.PlanarTree.build(4, [
        difimpact.Body(name="a", parent=None, coord=2, mass=1.0, com=(0.3, 0.0)),
        difimpact.Body(name="b", parent="a", coord=3, mass=2.0, attach=(0.5, 0.0)),
        difimpact.Body(name="c", parent="a", coord=None, mass=0.5, attach=(0.2, 0.1))],
        [difimpact.Point(name="p", body="b", local=(0.4, 0.0))])
    by_index = difimpact.PlanarTree.build(4, [
        difimpact.Body("a", -1, 2, 1.0, com=(0.3, 0.0)), difimpact.Body("b", 0, 3, 2.0, attach=(0.5, 0.0)),
        difimpact.Body("c", 0, -1, 0.5, attach=(0.2, 0.1))], [difimpact.Point("p", 1, (0.4, 0.0))])
    assert (by_name.parent, by_name.coord, by_name.point_body) == (by_index.parent, by_index.coord,
                                                                    by_index.point_body) == ((-1, 0, 0), (2, 3, -1), (1,))
    try:
        difimpact.PlanarTree.build(4, [difimpact.Body(name="a", parent="z", coord=2, mass=1.0)],
                                   [difimpact.Point(name="p", body="a")])
    except ValueError as err:
        assert "'z'" in str(err) and "'a'" in str(err)
    else:
        raise AssertionError("an unknown parent name must raise")


@pytest.mark.slow
def test_equations_render_in_chromium(tmp_path):
    """The built site's equations render (KaTeX in headless Chromium): impulsive page and an API page."""
    if not any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")):
        pytest.skip("no chromium")
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
                   cwd=ROOT, env=env, check=True, capture_output=True, timeout=300)
    spec = importlib.util.spec_from_file_location("shots", ROOT / "docs" / "scripts" / "screenshot_equations.py")
    shots = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shots)
    assert not shots.check(site, tmp_path / "shots")
