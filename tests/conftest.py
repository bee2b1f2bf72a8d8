import os
import shutil
import tempfile

# XLA compiles the tests' programs for a short compile rather than a fast run (set before JAX starts its CPU
# client, which reads XLA_FLAGS once; the processes the tests start inherit them): loop fusions through XLA's
# elemental emitter rather than its MLIR fusion emitters, and LLVM at optimisation level 0. Compiling is most
# of the suite's time; these flags cut it by about 40 % and slow a compiled run by about a third. The results
# differ from the default flags' in the last bits only (rounding: FMA contraction, operation order), which the
# tests' tolerances hold; `difimpact reproduce` and the benchmarks compile with XLA's defaults.
TEST_XLA_FLAGS = ("--xla_cpu_use_fusion_emitters=false", "--xla_backend_optimization_level=0")
_flags = os.environ.get("XLA_FLAGS", "").split()
os.environ["XLA_FLAGS"] = " ".join(_flags + [f for f in TEST_XLA_FLAGS if f.split("=")[0] not in
                                             {g.split("=")[0] for g in _flags}])

import jax  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

from difimpact._compile_cache import store_programs_with_callbacks  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")

# Example counts are controlled by profile so the property suite fits the CI budget.
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=10, deadline=None)
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# One persistent compilation cache per test run, in a fresh folder removed at the end (a run never reuses an
# earlier run's programs). It serves a program compiled again under another `jit` wrapper of the same function,
# the processes the tests start (notebook kernels, which inherit the variables; the kernels also store programs
# with run-time checks, as the test process does) and, under pytest-xdist, every worker: the controller makes
# the folder before it starts them, they inherit its name, and only the controller removes it. Every program
# is stored, the small ones too (as the CLI does): the other worker and each kernel would otherwise compile
# again the ~2700 programs of eager operations and small jitted functions, ~40 ms each.
_SHARED = "DIFIMPACT_TESTS_COMPILATION_CACHE"
if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get(_SHARED):
    _CACHE_DIR, _OWNER = os.environ[_SHARED], False
else:
    _CACHE_DIR, _OWNER = tempfile.mkdtemp(prefix="difimpact-tests-jax-cache-"), True
    os.environ[_SHARED] = _CACHE_DIR
CACHE_ENV = {"JAX_COMPILATION_CACHE_DIR": _CACHE_DIR, "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0"}
KERNEL_CACHE_ARGS = ["--IPKernelApp.exec_lines=import difimpact._compile_cache as c; c.store_programs_with_callbacks()"]


def pytest_configure(config):
    os.environ.update(CACHE_ENV)
    jax.config.update("jax_compilation_cache_dir", CACHE_ENV["JAX_COMPILATION_CACHE_DIR"])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", float(CACHE_ENV[
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"]))
    store_programs_with_callbacks()


def pytest_unconfigure(config):
    if _OWNER:
        shutil.rmtree(_CACHE_DIR, ignore_errors=True)


@pytest.fixture(scope="session")
def rng():
    import numpy as np

    return np.random.default_rng(0)
