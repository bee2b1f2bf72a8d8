import gc
import os
import shutil
import tempfile

# The tests' programs are compiled for a short compile rather than a fast run: compiling is most of the suite's
# time, and these settings cut it by about 40 % (a compiled run is up to a third slower). The processes the
# tests start (the CLI, the float32 runs) inherit them; a variable already set is left as it is.
# - JAX (read when it is imported): no Python tracebacks in the programs' locations, as `difimpact reproduce`
#   does (only XLA's own error messages would show them); tracing takes about a quarter less.
# - XLA (read when JAX starts its CPU client; on the jaxlib versions where the flags were measured): loop
#   fusions through XLA's elemental emitter rather than its MLIR fusion emitters, as `difimpact reproduce`
#   does; LLVM at optimisation level 0; and each program's LLVM code compiled whole, not split for a parallel
#   compile (the two workers keep both cores busy; splitting costs about 12 % more CPU). The results differ
#   from those of XLA's defaults in the last bits (rounding: FMA contraction, operation order), which the
#   tests' tolerances hold.
# - LAPACK (OpenBLAS, read when it loads): one thread. Single optimal-gait solves factor their Newton matrices
#   with LAPACK; two workers with two OpenBLAS threads each on two cores spin against each other (a 320 × 320
#   factorisation then takes 100× longer).
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("JAX_INCLUDE_FULL_TRACEBACKS_IN_LOCATIONS", "0")
os.environ.setdefault("JAX_TRACEBACK_IN_LOCATIONS_LIMIT", "0")

import jax  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

from difimpact import use_compilation_cache  # noqa: E402
from difimpact._cli import add_xla_flags, collect_and_freeze, defer_full_collections  # noqa: E402

add_xla_flags(("--xla_cpu_use_fusion_emitters=false", "--xla_backend_optimization_level=0",
               "--xla_cpu_parallel_codegen_split_count=1", "--xla_cpu_experimental_ynn_fusion_type="))

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")

# Example counts are controlled by profile so the property suite fits the CI budget.
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=10, deadline=None)
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# One persistent compilation cache per test run, in a fresh folder removed at the end (a run never reuses an
# earlier run's programs). It serves a program compiled again under another `jit` wrapper of the same function,
# the processes the tests start (which inherit the variables) and, under pytest-xdist, every worker: the
# controller makes the folder before it starts them, they inherit its name, and only the controller removes it.
# Every program is stored, the small ones too (as the CLI does): the other worker would otherwise compile again
# the ~2700 programs of eager operations and small jitted functions, ~40 ms each. JAX stores none with host
# callbacks (the run-time checks of `equinox.error_if`): each process compiles those itself. On three modules
# under `-n 2` the cache took about 7 % less CPU than none (JAX_ENABLE_COMPILATION_CACHE=false turns it off).
_SHARED = "DIFIMPACT_TESTS_COMPILATION_CACHE"
if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get(_SHARED):
    _CACHE_DIR, _OWNER = os.environ[_SHARED], False
else:
    _CACHE_DIR, _OWNER = tempfile.mkdtemp(prefix="difimpact-tests-jax-cache-"), True
    os.environ[_SHARED] = _CACHE_DIR
CACHE_ENV = {"JAX_COMPILATION_CACHE_DIR": _CACHE_DIR, "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
             "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"}


# The modules from the longest to the shortest (measured with `--durations`; those of a few seconds after them in
# their usual order): under pytest-xdist's `--dist loadfile` each worker takes the next module when it is free,
# and the two then end together. xdist would otherwise order the modules by their number of tests, and a long
# module of few tests (the notebook) would start last.
_LONGEST_FIRST = ("test_powered_kelly.py", "test_powered.py", "test_powered_biped_torso.py", "test_compliant.py",
                  "test_impact_constrained.py", "test_notebooks.py", "test_optimise.py", "test_gait.py",
                  "test_objectives.py", "test_bad_input.py", "test_docs.py", "test_sweep.py",
                  "test_linalg.py", "test_impact_frictional.py", "test_gait_reproduce.py",
                  "test_properties_tree.py", "test_io.py", "test_hybrid.py", "test_precision.py", "test_models.py",
                  "test_seven_link_human.py", "test_measured.py", "test_heelstrike_seed002.py")
# Modules that `--dist loadfile` sends to the worker of another module, whose compiled programs they call: the
# `difimpact reproduce` experiments of seeds 002 and 003 run the impacts that the physics tests of those seeds
# compile, which another worker would trace and lower again.
_SAME_WORKER = {"tests/test_reproduce_seed002.py": "tests/test_heelstrike_seed002.py",
                "tests/test_reproduce_seed003.py": "tests/test_impact_constrained.py",
                "tests/test_ros_statements.py": "tests/test_heelstrike_seed002.py"}


# Full garbage collections at the end of each test module rather than during its traces, whose objects they would
# walk again and again.
defer_full_collections()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield
    if nextitem is None or nextitem.path != item.path:  # the module's last test and its fixtures are done
        collect_and_freeze()


# CI's second stage (`.ci/run`: `-m stage2`): the slow checks that guard the gaits against IPOPT and the programs
# kept across processes. Besides the tests marked `stage2` where they are, every slow test of these modules but the
# continuation in speed (8 minutes) and periodic_gait's known callbacks. The other slow tests (the multi-phase
# layer's own layouts against IPOPT and its gradients through the solve among them) are run by hand: CI's 30 minutes
# hold no more.
_STAGE2_MODULES = ("test_human_gait.py", "test_human_tracking.py", "test_gait_cache.py", "test_program_cache.py",
                   "test_exported_programs.py")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if (item.path.name in _STAGE2_MODULES and item.get_closest_marker("slow")
                and "continuation" not in item.name and "periodic_gait" not in item.name):
            item.add_marker(pytest.mark.stage2)
    rank = {name: i for i, name in enumerate(_LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the order within a module stays


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown without it
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile`, with the modules of `_SAME_WORKER` joined to their partners' work units."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid):
            module = super()._split_scope(nodeid)
            return _SAME_WORKER.get(module, module)

    return Scheduling(config, log)


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist: keep the order above
        config.option.loadscopereorder = False
    os.environ.update(CACHE_ENV)  # the processes the tests start (a `use_compilation_cache()` there keeps it)
    # before the first compile of this process (its collection comes after); XLA's programs only: the exported
    # programs' store (tests/test_exported_programs.py has its own folders) costs the suite ~7 % more CPU
    use_compilation_cache(_CACHE_DIR, programs=False)


def pytest_unconfigure(config):
    gc.freeze()  # pytest's last collections (for unraisable exceptions) would walk the whole heap five times
    if _OWNER:
        shutil.rmtree(_CACHE_DIR, ignore_errors=True)


@pytest.fixture(scope="session")
def rng():
    import numpy as np

    return np.random.default_rng(0)
