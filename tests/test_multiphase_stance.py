"""A step in single support as a phase of the multi-phase transcription (:mod:`difimpact._collocation.stance`):
its sparsity (built from the constraint objects' footprints) against dense derivatives, and its cost and rows
against :func:`~difimpact.optimal_gait`'s transcription at the same point, for every cost, normalisation and
constraint object."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact._collocation import stance
from difimpact._nlp.sparsity import hessian, values_and_jacobians
from difimpact._powered.optimal import initial_guess, make_problem

ALPHA = math.asin(0.25 / 0.8)
GUESS = jnp.array([-ALPHA, -2 * ALPHA, -ALPHA])  # seed 003's biped just after heel strike, torso upright
CASES = [
    {"method": "trapezoid", "segments": 4, "friction": 0.8, "clearance": 0.01, "lift_off": "impose"},
    pytest.param({"step_time": None, "speed": 1.0, "cost": "positive-work", "normalise": "transport",
                  "foot_velocity": True}, marks=pytest.mark.slow),
    pytest.param({"step_length": None, "normalise": "distance", "joint_limits": (("torso", None, -1.0, 1.0),),
                  "rate_limits": (("left_leg", "torso", -9.0, 9.0),)}, marks=pytest.mark.slow),
]

pytestmark = pytest.mark.slow  # by hand (`-m slow`), as the multi-phase layer's other layouts


def _problems(**kw):
    walker = di.biped_torso_walker(di.BipedWithTorso(m=5.0, m_H=10.0, m_T=10.0, l=0.8))
    args = {"step_length": 0.5, "step_time": 0.5, "speed": None, "method": "hermite-simpson", "segments": 3,
            "cost": "torque-squared", "normalise": "none", "angle_bounds": None, "rate_bounds": None,
            "torque_bounds": None, "time_bounds": (0.1, 2.0), "joint_limits": (), "rate_limits": (),
            "friction": None, "clearance": None, "foot_velocity": False, "lift_off": "report", "smoothing": 1e-3,
            "dtype": jnp.float64}
    old = make_problem(walker, **(args | kw))
    return old, stance.from_gait_problem(old)


def _point(old, new, rng):
    """A point off the optimum in both layouts: the same angles, rates, torques and step time."""
    z_old = initial_guess(old, GUESS, 0.5) + 0.05 * jnp.asarray(rng.standard_normal(old.layout.size))
    x, u, T = old.unpack(z_old)
    s = jnp.asarray(new.times())[:, None]
    ones = jnp.ones_like(s)
    z_new = jnp.concatenate([x, T * s, T * ones, u], axis=1)
    return z_old, z_new.reshape(-1)


@pytest.mark.parametrize("kw", CASES)
def test_sparse_derivatives_equal_dense(kw):
    _, p = _problems(**kw)
    rng = np.random.default_rng(0)
    z = stance.initial_guess(p, GUESS, 0.5) + 0.05 * jnp.asarray(rng.standard_normal(p.size))
    sp = stance.sparsity(p)

    def cd(z):
        c, d = p.constraints(z)
        return c, jnp.zeros(0) if d is None else d

    c, d = jax.eval_shape(cd, z)  # traced, not run
    lc, ld = (jnp.asarray(rng.standard_normal(v.shape[0])) for v in (c, d))

    @jax.jit
    def both(z):
        def dense(m):
            return m if isinstance(m, jax.Array) else m.dense()

        return [(tuple(map(dense, values_and_jacobians(p.objective, cd, z, s)[1])),
                 hessian(p.objective, cd, z, lc, ld, s).dense()) for s in (None, sp)]

    (dense, h_dense), (sparse, h_sparse) = both(z)
    for a, b in zip(dense, sparse):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h_sparse, h_dense, rtol=1e-11, atol=1e-10)


@pytest.mark.parametrize("kw", CASES)
def test_same_transcription_as_optimal_gait(kw):
    """At the same angles, rates, torques and step time: the same cost, the same inequalities in the same order
    with the same bounds, the same defects of the angles and rates (phase time: ``h = 1/N``, the field times
    ``τ``), periodicity and end rows."""
    old, new = _problems(**kw)
    z_old, z_new = _point(old, new, np.random.default_rng(1))
    j, G = old.biped.joints, old.layout.points
    np.testing.assert_allclose(new.objective(z_new), old.objective(z_old), rtol=1e-13)
    (c_old, d_old), (c_new, d_new) = old.constraints(z_old), new.constraints(z_new)
    np.testing.assert_allclose(d_new, d_old, rtol=1e-13, atol=1e-13)
    for a, b in zip(new.inequality_bounds(jnp.float64), old.inequality_bounds(jnp.float64)):
        np.testing.assert_array_equal(a, b)
    S, rows = new.layout.states, G - 1  # defect rows: 2 per Hermite–Simpson segment, 1 per trapezoid
    defects = c_new[:rows * S].reshape(rows, S)[:, :2 * j]
    np.testing.assert_allclose(defects.reshape(-1), c_old[:rows * 2 * j], rtol=1e-12, atol=1e-13)
    ends_old = c_old[rows * 2 * j:]
    ends_new = c_new[rows * S:]
    np.testing.assert_allclose(ends_new[:2 * j], ends_old[:2 * j], atol=1e-13)  # periodicity
    fixed = int(new.duration is not None)
    np.testing.assert_allclose(ends_new[2 * j + 1 + fixed:], ends_old[2 * j:], atol=1e-13)  # foot on the ground
