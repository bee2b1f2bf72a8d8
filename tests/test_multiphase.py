"""The multi-phase collocation layer (:mod:`difimpact._collocation`): a gait as data, its structure from the
layout, and a layout of one's own solved.

Fast: the layout's sparsity holds every nonzero of the constraints' Jacobian and of the Lagrangian's Hessian
(forward-mode derivatives at a random point, a layout without the flat-foot phase on a one-segment mesh); the
description's and the solve's bad arguments. Slow (CI's second stage): the seven-link human walking without the
flat-foot phase, started from the four-phase optimum by retiming, converges to IPOPT's optimum of the same
transcription (CasADi's wheel, MUMPS), its touchdown at rest and the step's periodicity holding."""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact._collocation.multiphase import sparsity
from difimpact._collocation.solve import make_problem

STEP = di.HUMAN_STEP
NO_FLAT = dataclasses.replace(STEP, phases=(STEP.phases[0], STEP.phases[1], STEP.phases[3]),
                              touchdowns=((2, "MH_R"),))
DURATIONS = ((0.03, 0.25), (0.01, 0.6), (0.05, 0.35))


def _problem(gait, segments, method="hermite-simpson"):
    return make_problem(di.SevenLinkHuman(), gait, 1.3, segments=segments, method=method, grading=1.0,
                        friction=0.8, torque_max=300.0, duration_bounds=DURATIONS if gait is NO_FLAT else
                        (0.01, 0.5))


def _random_point(problem, seed=0):
    rng = np.random.default_rng(seed)
    base = jnp.asarray([0.0, 0.9] + [0.0] * 7 + [0.0] * 9 + [0.1, 0.0, 0.2] + [0.0] * 6)
    return jnp.asarray(0.3 * rng.standard_normal(problem.size)) + jnp.tile(base, problem.offsets[-1]), rng


def _outside(values, pattern, what):
    outside = (values != 0) & ~pattern
    assert np.all(np.isfinite(values))
    assert not outside.any(), f"{what} nonzeros outside the pattern at {np.argwhere(outside)[:5]}"


def test_structure_from_the_layout_holds_every_nonzero():
    """Forward-mode Jacobian of ``[c; d]`` at a random point: no nonzero outside the layout's pattern (a missing
    one would make the colour-compressed derivatives wrong), and every row meets at most three points."""
    problem = _problem(NO_FLAT, 1, "trapezoid")
    sp = sparsity(problem)
    z, _ = _random_point(problem)
    J = np.asarray(jax.jit(jax.jacfwd(lambda z: jnp.concatenate(problem.constraints(z))))(z))
    _outside(J, sp.jacobian_pattern, "Jacobian")
    assert np.bincount(sp.jacobian.rows).max() <= 3 * problem.layout.block


@pytest.mark.slow
def test_hessian_structure_from_the_layout():
    """The Hessian of ``f + λᵀ[c; d]`` at a random point (random ``λ``): block diagonal per point, as the layout
    says (Hermite–Simpson, one segment per phase)."""
    problem = _problem(NO_FLAT, 1)
    sp = sparsity(problem)
    z, rng = _random_point(problem, 1)
    flat = lambda z: jnp.concatenate(problem.constraints(z))
    lam = jnp.asarray(rng.standard_normal(jax.eval_shape(flat, z).shape[0]))
    H = np.asarray(jax.jit(jax.hessian(lambda z: problem.objective(z) + lam @ flat(z)))(z))
    _outside(H, sp.hessian_pattern, "Hessian")


def test_the_human_problem_is_an_instance_of_the_layer():
    """The seven-link human's gait problem is the layer's, with the human's step as its data."""
    from difimpact._human_gait import gait as hg

    problem = hg.make_problem(di.SevenLinkHuman(), 1.3, segments=2, method="trapezoid", friction=0.8,
                              torque_max=300.0, duration_bounds=hg.DURATIONS)
    assert isinstance(problem, di.MultiPhaseProblem) and problem.gait == STEP


def test_contact_gait_names_what_is_wrong():
    with pytest.raises(ValueError, match="mirror"):
        dataclasses.replace(STEP, mirror=(0, 1, 2, 3, 4, 5, 6, 7, 7))
    with pytest.raises(ValueError, match="TOE"):
        dataclasses.replace(STEP, strike=(("TOE", (0,)),))
    with pytest.raises(ValueError, match="touchdowns"):
        dataclasses.replace(STEP, touchdowns=((1, "MH_R"),))  # the heel phase does not hold MH_R
    with pytest.raises(ValueError, match="qd_max"):
        dataclasses.replace(STEP, qd_max=(1.0,) * 3)
    with pytest.raises(TypeError, match="gait"):
        di.multiphase_gait(di.SevenLinkHuman(), "walk", 1.3, np.zeros(3))
    with pytest.raises(ValueError, match="duration_bounds"):
        di.multiphase_gait(di.SevenLinkHuman(), NO_FLAT, 1.3, np.zeros(3), duration_bounds=(0.3, 0.1))
    with pytest.raises(ValueError, match="segments"):
        di.multiphase_gait(di.SevenLinkHuman(), NO_FLAT, 1.3, np.zeros(3), segments=(3, 3))
    with pytest.raises(ValueError, match="guess"):
        di.multiphase_gait(di.SevenLinkHuman(), NO_FLAT, 1.3, np.zeros(3), segments=1)


@pytest.fixture(scope="module")
def four_phase():
    return di.human_gait(di.SevenLinkHuman(), 1.3)


@pytest.mark.slow
def test_own_layout_is_ipopts_optimum(four_phase):
    """Walking without the flat-foot phase, from the four-phase optimum: the library's optimum is IPOPT's on the
    same transcription from the same start; the right metatarsal heads land at rest, the step is periodic."""
    from benchmarks._human_ipopt import HumanIpopt

    segments = (3, 4, 3)
    gait = di.multiphase_gait(di.SevenLinkHuman(), NO_FLAT, 1.3, four_phase, segments=segments,
                              duration_bounds=DURATIONS)
    assert gait.result == di.NLPResults.successful
    problem = gait.problem
    z0 = di.retime(four_phase, problem)
    z, stats = HumanIpopt(problem).solve(jnp.asarray(z0))
    assert stats["success"], stats["return_status"]
    ipopt = float(problem.objective(jnp.asarray(z))) * problem.torque_unit**2
    assert abs(float(gait.cost) / ipopt - 1) < 1e-6
    c, d = eqx.filter_jit(lambda p, z: p.constraints(z))(problem, gait.solution.x)
    # the solver's tolerance is on the scaled problem (IPOPT's gradient-based row scaling): unscaled rows ~1e-6
    assert float(jnp.max(jnp.abs(c))) < 1e-5 and float(jnp.min(d)) > -1e-5
    toe = problem.offsets[2]
    tree = problem.model.tree()
    _, J, _ = tree.point_kinematics(gait.q[toe], gait.qdot[toe], "MH_R")
    assert abs(float(tree.point_position(gait.q[toe], "MH_R")[1])) < 1e-6
    assert abs(float(J[1] @ gait.qdot[toe])) < 1e-5
