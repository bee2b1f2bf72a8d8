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
