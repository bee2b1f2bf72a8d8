"""The entry points' top-level programs, which JAX's persistent compilation cache can keep: JAX stores no program
with a host callback, and `equinox.error_if` is one. Called from Python, an entry point's program returns its
checks' flags and the entry point raises after it (`difimpact._check.program`), with the messages of the checks;
inside a caller's own `jit`, `vmap` or `grad` the checks are `error_if` in the caller's program. A second process
finds the programs in the cache (JAX's cache hit, not a timing).

The programs are lowered, not compiled, except where an error is raised: those are the programs the bad-input
tests compile too, on the same small crutch-walker problem."""

import json
import math
import os
import subprocess
import sys

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact import _check

from ._programs import host_callbacks

TRACED = (eqx.EquinoxRuntimeError, jax.errors.JaxRuntimeError)
CW = di.CrutchWalker()
Q, QDOT = CW.pre_impact_state(math.radians(12.0), -0.2)
Q_AIR = Q.at[1].set(0.1)  # the tip 10 cm above the ground
M, A = CW.mass_matrix(Q), CW.contact_jacobian(Q, "Q")
LAW = di.HuntCrossley(di.hertz_stiffness(0.05, 0.1e9, 0.5, 30e9, 0.2), 1e7)
WALKER = di.SimplestWalker(0.009)
KUO = di.SimplestWalker(0.0)  # Kuo's point-mass walker at heel strike, inter-leg angle 0.6
X0 = jnp.array([-0.2, 0.2, 0.016])


ENTRY_POINTS = {
    "constrained_impact": lambda: (di.constrained_impact, (M, A, QDOT), {}),
    "impact": lambda: (di.impact, (CW, Q, QDOT), dict(stick=("Q",))),
    "frictional_impact": lambda: (di.frictional_impact, (CW, Q, QDOT, "Q"), dict(friction=di.Coulomb(0.75))),
    "pushoff_impact": lambda: (di.pushoff_impact, (KUO, KUO.stance_configuration(jnp.array([0.3, 0.6])),
                                                   jnp.array([0.0, 0.0, 0.5, 0.0]), jnp.asarray(0.01)),
                               dict(massless="keep")),
    "compliant_impact": lambda: (di.compliant_impact, (CW, Q, QDOT, "Q"), dict(normal=LAW,
                                                                               friction=di.Coulomb(0.75))),
    "stride": lambda: (di.stride, (di.CompassGait(), jnp.array([-0.27, 1.09, 0.72])), {}),
    "periodic_gait": lambda: (di.periodic_gait, (WALKER, X0), {}),
}


SLOW = [pytest.mark.slow, pytest.mark.stage2]  # the periodic gait's: a Newton loop on a differentiated stride


@pytest.mark.parametrize("name", [pytest.param(n, marks=SLOW if n == "periodic_gait" else []) for n in ENTRY_POINTS])
def test_top_level_program_holds_no_host_callback(name):
    """The program of a call from Python, lowered (not compiled): no host callback in it."""
    entry, args, kwargs = ENTRY_POINTS[name]()
    assert host_callbacks(entry.recorded.lower(*args, **kwargs).as_text()) == 0


def test_check_at_top_level_raises_after_the_program():
    """A check on the program's inputs is raised in Python after it, with its message (the exception type that
    `error_if` raises); the same call inside a caller's `jit`, the input traced or a constant, raises it there."""
    match = "contact point 'Q' is not on the ground"
    with pytest.raises(eqx.EquinoxRuntimeError, match=match):
        di.impact(CW, Q_AIR, QDOT, stick=("Q",))
    with pytest.raises(TRACED, match=match):
        jax.block_until_ready(jax.jit(lambda q: di.impact(CW, q, QDOT, stick=("Q",)).qdot_plus)(Q_AIR))
    with pytest.raises(TRACED, match=match):
        jax.block_until_ready(jax.jit(lambda: di.impact(CW, Q_AIR, QDOT, stick=("Q",)).qdot_plus)())


def test_checks_as_nan_makes_a_users_program_keepable():
    """`difimpact.checks_as_nan` around the traced body of a user's `jit`: no host callback in the program (the
    cache can keep it), NaN where the check fails, the same values where it passes; without it the check raises
    there; a call from Python with concrete arguments inside the context still raises."""
    def qdot_plus(q, nan=True):
        if not nan:
            return di.impact(CW, q, QDOT, stick=("Q",)).qdot_plus
        with di.checks_as_nan():
            return di.impact(CW, q, QDOT, stick=("Q",)).qdot_plus

    program = jax.jit(qdot_plus)
    assert host_callbacks(program.lower(Q).as_text()) == 0
    assert host_callbacks(jax.jit(lambda q: qdot_plus(q, nan=False)).lower(Q).as_text()) > 0
    np.testing.assert_allclose(program(Q), di.impact(CW, Q, QDOT, stick=("Q",)).qdot_plus, rtol=1e-12, atol=1e-12)
    assert np.all(np.isnan(program(Q_AIR)))
    with pytest.raises(eqx.EquinoxRuntimeError, match="contact point 'Q' is not on the ground"), di.checks_as_nan():
        di.impact(CW, Q_AIR, QDOT, stick=("Q",))


def test_failed_result_raised_after_the_program_or_returned():
    """`throw=True`: a failed result (an overflow) raises its entry point's message after the program, at top
    level and inside a caller's `jit`; `throw=False` returns it."""
    big = QDOT * 1e200
    with pytest.raises(eqx.EquinoxRuntimeError, match="overflow"):
        di.constrained_impact(M, A, big)
    with pytest.raises(TRACED, match="overflow"):
        jax.block_until_ready(jax.jit(lambda v: di.constrained_impact(M, A, v).qdot_plus)(big))
    assert di.constrained_impact(M, A, big, throw=False).result == di.ImpactResults.nonfinite


def test_a_deep_check_made_nan_is_still_raised():
    """A massless forearm makes `M` singular: the LDLᵀ pivot check inside `frictional_impact`'s solve (a custom
    derivative, deeper than the program's top level) makes its values NaN, and the map's own check on them raises,
    naming `M`, at top level and inside a caller's `jit` alike: never a silent NaN."""
    massless = eqx.tree_at(lambda w: (w.masses, w.inertias), CW, (CW.masses.at[3].set(0.0),
                                                                   CW.inertias.at[3].set(0.0)))
    match = "`M` positive definite"
    with pytest.raises(eqx.EquinoxRuntimeError, match=match):
        di.frictional_impact(massless, Q, QDOT, "Q", friction=di.Coulomb(0.75))
    with pytest.raises(TRACED, match=match):
        jax.block_until_ready(jax.jit(lambda w: di.frictional_impact(w, Q, QDOT, "Q", friction=di.Coulomb(0.75))
                                      .qdot_plus)(massless))


def _guarded(x):
    """A check on the input at the program's top level, and one on each member inside a ``vmap``."""
    x = _check.check(x, x[0] < 0, "`x[0]` must be non-negative.")
    return jax.vmap(lambda y: _check.check(y, y > 5, "`x` must not exceed 5."))(x)


GUARDED = _check.program(_guarded)


def test_checks_recorded_at_top_level_and_nan_deeper():
    """In a program of a call from Python a top-level check raises after it; a check inside a ``vmap`` makes its
    member NaN (which an entry point's result reports). Under a caller's ``jit`` the first raises (``error_if``),
    the second is NaN alike (one trace of a nested solver for both). The mode is restored after the trace, also
    after an error."""
    assert host_callbacks(GUARDED.recorded.lower(jnp.ones(2)).as_text()) == 0
    np.testing.assert_array_equal(GUARDED(jnp.array([1.0, 2.0])), [1.0, 2.0])
    with pytest.raises(eqx.EquinoxRuntimeError, match=r"`x\[0\]` must be non-negative"):
        GUARDED(jnp.array([-1.0, 2.0]))
    out = GUARDED(jnp.array([1.0, 6.0]))
    assert out[0] == 1.0 and np.isnan(out[1])
    with pytest.raises(TRACED, match=r"`x\[0\]` must be non-negative"):
        jax.block_until_ready(jax.jit(GUARDED)(jnp.array([-1.0, 2.0])))
    out = jax.jit(GUARDED)(jnp.array([1.0, 6.0]))
    assert out[0] == 1.0 and np.isnan(out[1])
    assert _check.mode() == "raise"
    # a concrete value raises ValueError in any mode
    with pytest.raises(ValueError, match="`x` must not exceed 5"), _check.entry_point(record=True):
        _check.check(jnp.ones(1), jnp.array([True]), "`x` must not exceed 5.")
    assert _check.mode() == "raise"


SCRIPT = """
import json, logging, math, sys
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
import difimpact as di
messages = []
handler = logging.Handler()
handler.emit = lambda record: messages.append(record.getMessage())
logger = logging.getLogger("jax._src.compiler")
logger.setLevel(logging.DEBUG)
logger.addHandler(handler)
di.use_compilation_cache(sys.argv[1])
walker = di.CrutchWalker()
q, qdot = walker.pre_impact_state(math.radians(12.0), -0.2)
law = di.HuntCrossley(di.hertz_stiffness(0.05, 0.1e9, 0.5, 30e9, 0.2), 1e7)
kuo = di.SimplestWalker(0.0)
out = dict(
    impact=float(di.impact(walker, q, qdot, stick=("Q",)).qdot_plus[2]),
    frictional_impact=float(di.frictional_impact(walker, q, qdot, "Q", friction=di.Coulomb(0.75)).normal_impulse),
    constrained_impact=float(di.constrained_impact(walker.mass_matrix(q), walker.contact_jacobian(q, "Q"),
                                                   qdot).qdot_plus[2]),
    compliant_impact=float(di.compliant_impact(walker, q, qdot, "Q", normal=law,
                                               friction=di.Coulomb(0.75)).duration),
    stride=float(di.stride(di.SimplestWalker(0.009), jnp.array([-0.2, 0.2, 0.016])).step_time),
    periodic_gait=float(di.periodic_gait(di.SimplestWalker(0.009), jnp.array([-0.2, 0.2, 0.016])).step_time),
    pushoff_impact=float(di.pushoff_impact(kuo, kuo.stance_configuration(jnp.array([0.3, 0.6])),
                                           jnp.array([0.0, 0.0, 0.5, 0.0]), 0.01, massless="keep").qdot_plus[2]),
)
hits = [m for m in messages if "cache hit for 'jit_" in m]
print(json.dumps(dict(values=out, hits=sorted({n: sum(f"'jit_{n}'" in m for m in hits) for n in out}.items()))))
"""


@pytest.mark.slow  # two processes, each compiling or loading seven programs (a minute or two on 2 cores)
@pytest.mark.stage2
def test_second_process_loads_the_programs(tmp_path):
    """A first process compiles the programs of the impact maps (push-off included), the compliant phase, a stride
    and a periodic gait (Newton on the stride map, differentiated) called from Python and stores them; a second
    finds each of them (a cache hit) and returns the same values."""
    folder = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith((
        "JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE", "JAX_ENABLE_COMPILATION_CACHE"))}

    def run():
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(folder)], env=env, capture_output=True, text=True,
                              timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.splitlines()[-1])

    first, second = run(), run()
    names = list(first["values"])
    assert dict(first["hits"]) == dict.fromkeys(names, 0)
    assert dict(second["hits"]) == dict.fromkeys(names, 1)
    assert first["values"] == second["values"]
