"""The core library needs neither matplotlib nor tqdm, the extra ``difimpact[papers]``: in a fresh interpreter where
importing them fails (a ``sys.meta_path`` finder raises ``ImportError`` for them, as for a package not installed),
``import difimpact`` and the README's impact example run and import neither; what needs them (``draw_model``, the
papers' experiments) says which extra to install."""

import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"

BLOCK = """
import sys


class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("matplotlib", "tqdm"):
            raise ImportError(f"No module named {name!r} (blocked: the core library must not need it)")
        return None


sys.meta_path.insert(0, _NotInstalled())
"""

CHECK = """
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("matplotlib", "tqdm"))
print("LOADED", loaded)
try:
    di.draw_model(di.CompassGait(), [0.0, 0.0, 0.1, 0.2])
except ImportError as err:
    print("DRAW", err)
from difimpact import _cli
try:
    _cli.require_papers_extra()
except ImportError as err:
    print("REPRODUCE", err)
"""


def _impact_example() -> str:
    """The README's first runnable example: the crutch walker's impact and its gradient."""
    section = README.read_text(encoding="utf-8").split("## An impact and its gradient", 1)[1]
    return re.findall(r"<!-- test: run -->\n```python\n(.*?)```", section, flags=re.S)[0]


def test_the_core_runs_without_matplotlib_and_tqdm():
    code = BLOCK + _impact_example() + CHECK
    assert "import difimpact as di" in code
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "slide-stick" in run.stdout  # the example ran
    assert "LOADED []" in run.stdout
    draw = next(line for line in run.stdout.splitlines() if line.startswith("DRAW"))
    reproduce = next(line for line in run.stdout.splitlines() if line.startswith("REPRODUCE"))
    assert "difimpact[papers]" in draw and "matplotlib" in draw
    assert "difimpact[papers]" in reproduce
