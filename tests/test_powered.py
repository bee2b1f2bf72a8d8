"""Powered gaits: the transcription's sparsity against dense derivatives, the legs' relabelling against the
kinematics, gradients of optimal gaits against finite differences of re-solved optima, batches with failed
members, and bad input."""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact._nlp.sparsity import hessian, values_and_jacobians
from difimpact._collocation import stance
from difimpact._powered.optimal import make_problem

ALPHA = math.asin(0.25 / 0.8)
GUESS = jnp.array([-ALPHA, -2 * ALPHA, -ALPHA])  # seed 003's biped just after heel strike, torso upright


def _walker(m=5.0, m_T=10.0, l=0.8):
    return di.biped_torso_walker(di.BipedWithTorso(m=m, m_H=20.0 - m_T, m_T=m_T, l=l))


def _problem(walker, **kw):
    args = dict(step_length=0.5, step_time=0.5, speed=None, method="hermite-simpson", segments=3,
                cost="torque-squared", normalise="none", angle_bounds=None, rate_bounds=None, torque_bounds=None,
                time_bounds=(0.1, 2.0), joint_limits=(), rate_limits=(), friction=None, clearance=None,
                foot_velocity=False, lift_off="report", smoothing=1e-3, dtype=jnp.float64)
    return make_problem(walker, **(args | kw))


@pytest.mark.parametrize("kw", [
    dict(method="trapezoid", segments=4, friction=0.8, clearance=0.01, lift_off="impose"),
    pytest.param(dict(step_time=None, speed=1.0, cost="positive-work", normalise="transport", foot_velocity=True),
                 marks=pytest.mark.slow),
    pytest.param(dict(step_length=None, normalise="distance", joint_limits=(("torso", None, -1.0, 1.0),),
                      rate_limits=(("left_leg", "torso", -9.0, 9.0),)), marks=pytest.mark.slow),
])
def test_sparse_derivatives_equal_dense(kw):
    p = stance.from_gait_problem(_problem(_walker(), **kw))  # what optimal_gait solves
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


def test_relabelling_is_the_mirror_image():
    """After heel strike the new stance foot is the old swing foot: the relabelled posture seen from it has every
    body where the mirror's partner was."""
    w = _walker()
    tree = w.model.tree()
    theta = jnp.array([0.3, 0.55, 0.2])  # pre-impact: stance leg leaning forward, swing leg ahead
    q = w.configuration(theta)
    q_new = w.configuration(w.relabel(theta))
    foot = tree.point_position(q, "P_L")
    for old, new in (("P_R", "P_L"), ("H", "H"), ("T", "T"), ("P_L", "P_R")):
        np.testing.assert_allclose(tree.point_position(q_new, new) + foot, tree.point_position(q, old), atol=1e-14)
    np.testing.assert_allclose(w.relabel(w.relabel(theta)), theta, atol=1e-14)


def _cost(m, l, L):
    """The optimum's cost and ξ_I at its heel strike, twice: differentiated, and as ``jacrev``'s aux."""
    g = di.optimal_gait(_walker(m=m, l=l), GUESS, step_length=L, step_time=L / 1.0, segments=4,
                        normalise="distance")
    return (g.cost, g.xi_I), (g.cost, g.xi_I)


@functools.cache
def _jacobian_and_value():
    """``(∂(cost, ξ_I)/∂(m, l, L), (cost, ξ_I))`` by reverse mode (the implicit function theorem): one compiled
    program for the Jacobian and the re-solved values."""
    return jax.jit(jax.jacrev(_cost, argnums=(0, 1, 2), has_aux=True))


@pytest.mark.slow
@pytest.mark.stage2
def test_gradients_of_the_optimum_match_re_solved_optima():
    """∂(cost, ξ_I)/∂(m, l, L) of the optimum against central differences of re-solved optima (the re-solves
    run the same compiled program, their Jacobians unused)."""
    solve = _jacobian_and_value()
    x = (5.0, 0.8, 0.5)
    grads, _ = solve(*x)
    for k in range(3):
        h = 1e-4 * x[k]
        up = list(x)
        down = list(x)
        up[k] += h
        down[k] -= h
        fd = [(a - b) / (2 * h) for a, b in zip(solve(*up)[1], solve(*down)[1])]
        np.testing.assert_allclose(grads[0][k], fd[0], rtol=1e-5)  # the optimal cost
        np.testing.assert_allclose(grads[1][k], fd[1], rtol=1e-5, atol=1e-9)  # ξ_I at the optimal heel strike


@pytest.mark.slow  # its own batched program (~27 s of compile): CI's second stage keeps the README's 7 minutes
@pytest.mark.stage2
def test_batch_flags_failed_members_without_nan():
    solve = jax.jit(jax.vmap(lambda L: di.optimal_gait(_walker(), GUESS, step_length=L, step_time=0.5, segments=4,
                                                       torque_bounds=(-40.0, 40.0), throw=False)))
    g = solve(jnp.array([0.5, 1.58]))  # the legs are 0.8 m long: a 1.58 m step is out of reach
    assert np.all(np.isfinite(g.cost)) and np.all(np.isfinite(g.theta))
    failed = di.failures(g.result)
    assert [i for i, _ in failed] == [1]


def test_bad_input():
    w = _walker()
    with pytest.raises(ValueError, match="exactly one of `step_time`"):
        di.optimal_gait(w, GUESS, step_length=0.5)
    with pytest.raises(ValueError, match="`speed` needs `step_length`"):
        di.optimal_gait(w, GUESS, speed=1.0)
    with pytest.raises(ValueError, match="method"):
        di.optimal_gait(w, GUESS, step_length=0.5, step_time=0.5, method="euler")
    with pytest.raises(ValueError, match="segments"):
        di.optimal_gait(w, GUESS, step_length=0.5, step_time=0.5, segments=0)
    with pytest.raises(ValueError, match="unknown body"):
        di.optimal_gait(w, GUESS, step_length=0.5, step_time=0.5, joint_limits=(("knee", None, 0.0, 1.0),))
    with pytest.raises(ValueError, match="guess"):
        di.optimal_gait(w, jnp.zeros(5), step_length=0.5, step_time=0.5)
    with pytest.raises(ValueError, match="step_length"):
        di.optimal_gait(w, GUESS, step_length=-0.5, step_time=0.5)
    with pytest.raises(ValueError, match="unknown point"):
        di.PoweredBiped(w.model, "heel", "P_L", w.actuators, w.mirror)
    with pytest.raises(ValueError, match="mirror"):
        di.PoweredBiped(w.model, "P_R", "P_L", w.actuators, (("torso", "torso"),))
    with pytest.raises(TypeError, match="`constraints`"):
        di.optimal_gait(w, GUESS, step_length=0.5, step_time=0.5, constraints=("hip below 0.79 m",))
    with pytest.raises(ValueError, match="`lower` must be at most `upper`"):
        di.PointwiseConstraint(lambda b, th, thd, F: th[:1], 1.0, 0.0)
    with pytest.raises(TypeError, match="`fn` must be a function"):
        di.PointwiseConstraint(0.79, -jnp.inf, 0.79)
    with pytest.raises(ValueError, match="finite bound"):
        di.PointwiseConstraint(lambda b, th, thd, F: th[:1], -jnp.inf, jnp.inf)


def _hip(biped, theta, theta_dot, force):
    return biped.model.tree().point_position(biped.configuration(theta), "H")[1:]


@pytest.mark.slow
@pytest.mark.stage2
def test_a_pointwise_constraint_of_ones_own():
    """A path constraint of one's own (:class:`~difimpact.PointwiseConstraint`): the hip at most 0.79 m high on
    every point (it vaults to 0.8 m unconstrained, the stance leg vertical at mid-stance). The hip's height read
    by a closed form (``l cos θ_stance``, not the constraint's function) holds the bound and meets it, the cost
    rises, and the bound's value is a leaf: one program for both solves."""
    w = _walker()
    solve = jax.jit(lambda hi: di.optimal_gait(w, GUESS, step_length=0.5, step_time=0.5, segments=4,
                                               constraints=(di.PointwiseConstraint(_hip, -jnp.inf, hi),)))
    free, crouched = solve(10.0), solve(0.79)  # 10 m: never met
    height = lambda g: 0.8 * np.cos(np.asarray(g.theta[:, 0]))  # noqa: E731  (the stance leg from the vertical)
    np.testing.assert_allclose(height(free), np.asarray(jax.vmap(lambda th: _hip(w, th, None, None))(
        free.theta))[:, 0], atol=1e-12)  # the closed form is the model's hip
    assert height(free).max() > 0.795
    assert height(crouched).max() <= 0.79 + 1e-8 and height(crouched).max() > 0.79 - 1e-6
    assert float(crouched.cost) > float(free.cost)
