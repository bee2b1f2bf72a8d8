"""Importing the library has no side effects on JAX: it switches nothing on (float64 is the user's choice) and
creates no array (arrays made at import would be committed to the default device before the user picks one, and
their dtype fixed before ``jax_enable_x64`` is set). Run in a fresh interpreter: this suite's conftest enables x64."""

import subprocess
import sys

SCRIPT = """
import jax
before = len(jax.live_arrays())
import difimpact
print(len(jax.live_arrays()) - before, jax.config.jax_enable_x64, jax.config.jax_debug_nans)
"""


def test_import_creates_no_array_and_sets_no_flag():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=120)
    arrays, x64, nans = out.stdout.split()
    assert arrays == "0", f"importing difimpact created {arrays} JAX arrays"
    assert x64 == "False" and nans == "False"


LAZY = """
import sys
import difimpact as di
heavy = ("diffrax", "optax")
print(*[m in sys.modules for m in heavy])
missing = [n for n in di.__all__ if n not in dir(di)]
di.frictional_impact, di.CrutchWalker  # the impact's names: no heavy library either
print(*[m in sys.modules for m in heavy], len(missing))
values = {n: getattr(di, n) for n in di.__all__}  # every public name resolves (the lazy ones imported now)
from difimpact import compliant_impact, kelly_gait  # noqa: F401
print(*[m in sys.modules for m in heavy], values["compliant_impact"] is di._compliant.compliant_impact)
"""


def test_import_leaves_the_gaits_libraries_until_used():
    """``import difimpact`` loads neither diffrax nor optax (the compliant phase's and the optimisation's), nor does
    a first impact map; reading a name of theirs imports them; ``dir`` and ``__all__`` list every public name, and
    ``difimpact.papers`` is an attribute as it was when the package imported it itself."""
    out = subprocess.run([sys.executable, "-c", LAZY], capture_output=True, text=True, check=True, timeout=120)
    lines = out.stdout.split("\n")
    assert lines[0] == "False False" and lines[1] == "False False 0"
    assert lines[2] == "True True True"
    papers = "import difimpact as di; print(di.papers.__name__)"  # the subpackage as an attribute, as before
    out = subprocess.run([sys.executable, "-c", papers], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "difimpact.papers"
