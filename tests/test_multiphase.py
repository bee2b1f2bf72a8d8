"""The multi-phase collocation layer (:mod:`difimpact._collocation`): a gait as data, its structure from the
layout, and a layout of one's own solved.

Fast: the layout's sparsity holds every nonzero of the constraints' Jacobian and of the Lagrangian's Hessian
(forward-mode derivatives at a random point, a layout without the flat-foot phase on a one-segment mesh); the
description's and the solve's bad arguments. Slow (CI's second stage): the seven-link human walking without the
flat-foot phase, started from the four-phase optimum by retiming, converges to IPOPT's optimum of the same
transcription (CasADi's wheel, MUMPS), its touchdown at rest and the step's periodicity holding; the heel strikes
the transcriptions solve (by the Schur complement alone) equal the library's impact map; a tracked gait's
Lagrangian from one evaluation of the dynamics equals the objective's and the constraints' apart."""

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


@pytest.mark.slow
def test_transcriptions_impact_is_the_impact_map():
    """The transcription's heel strike (:meth:`~difimpact.ContactGait.impact_jump`, the Schur complement alone,
    from the rows and ``M⁻¹Aᵀ`` of the last point's dynamics or computed afresh) equals the library's impact map
    (:func:`~difimpact._impact.kkt.solve_kkt`, with its rank diagnosis) at random states, and its post-impact
    velocity satisfies ``A q̇⁺ = 0`` and the momentum balance ``M (q̇⁺ − q̇⁻) = Aᵀ P``."""
    human, rng = di.SevenLinkHuman(), np.random.default_rng(3)
    active = jnp.asarray(STEP.mask(STEP.phases[3]), float)

    @jax.jit
    def both(q, qd):
        at = STEP.point_dynamics(human, active, q, qd, jnp.zeros(6))
        return STEP.impact(human, q, qd), STEP.impact_jump(human, q, qd), STEP.impact_jump(human, q, qd, at)

    for _ in range(4):
        q = jnp.asarray([0.1, 0.9, 0.1, -0.3, 0.2, 0.1, 0.4, 0.3, -0.2]) + 0.1 * rng.standard_normal(9)
        qd = jnp.asarray(rng.standard_normal(9))
        ref, fresh, reused = both(q, qd)
        assert int(ref.result._value) == 0
        for qd_plus, impulses in (fresh, reused):
            np.testing.assert_allclose(qd_plus, ref.qdot_plus, rtol=1e-11, atol=1e-12)
            np.testing.assert_allclose(impulses, ref.impulses, rtol=1e-11, atol=1e-12)
        A = jnp.concatenate([human.contact_jacobian(q, p)[np.asarray(r)] for p, r in STEP.strike])
        np.testing.assert_allclose(A @ reused[0], 0.0, atol=1e-12)
        np.testing.assert_allclose(human.mass_matrix(q) @ (reused[0] - qd), A.T @ reused[1], atol=1e-11)


@pytest.mark.slow
def test_tracking_lagrangian_from_one_evaluation():
    """The tracked gait's objective reads the contact forces: its Lagrangian from one evaluation of the dynamics
    (:meth:`~difimpact.MultiPhaseProblem.objective_and_constraints`, what the solver differentiates twice) has the
    value and the Hessian (on the layout's pattern) of the objective and the constraints evaluated apart."""
    from difimpact._human_gait import gait as hg
    from difimpact._human_gait.tracking import tracking_target
    from difimpact._nlp.sparsity import hessian

    problem = hg.make_problem(di.SevenLinkHuman(), 1.3, segments=1, method="hermite-simpson", friction=0.8,
                              torque_max=300.0, duration_bounds=hg.DURATIONS, tracking=tracking_target())
    sp = sparsity(problem)
    z, rng = _random_point(problem, 2)
    c, d = problem.constraints(z)
    lc, ld = jnp.asarray(rng.standard_normal(c.shape[0])), jnp.asarray(rng.standard_normal(d.shape[0]))
    J, (c1, d1) = problem.objective_and_constraints(z)
    np.testing.assert_allclose(J, problem.objective(z), rtol=1e-13)
    np.testing.assert_allclose(jnp.concatenate([c1, d1]), jnp.concatenate([c, d]), rtol=1e-13, atol=1e-13)
    apart, joint = jax.jit(lambda z: (hessian(problem.objective, problem.constraints, z, lc, ld, sp).values,
                                      hessian(None, None, z, lc, ld, sp, problem.objective_and_constraints).values))(z)
    assert np.all(np.isfinite(apart))
    np.testing.assert_allclose(joint, apart, rtol=1e-10, atol=1e-9 * np.abs(apart).max())


@pytest.mark.slow
def test_a_bipeds_transcribed_heel_strike_is_the_impact_map():
    """A single-support biped's heel strike as its transcription solves it (:meth:`~difimpact.PoweredBiped.
    heel_strike` without the rank diagnosis, :func:`~difimpact._impact.kkt.solve_kkt_regular`) equals the
    library's impact map (rates, impulses, energies, ξ) at random postures of Kelly's five-link biped."""
    biped, rng = di.five_link_walker(), np.random.default_rng(5)
    strike = jax.jit(lambda th, thd: (biped.heel_strike(th, thd), biped.heel_strike(th, thd, diagnose=False)))
    for _ in range(4):
        theta, theta_dot = jnp.asarray(0.4 * rng.standard_normal(5)), jnp.asarray(rng.standard_normal(5))
        (rates, ref), (rates2, lean) = strike(theta, theta_dot)
        assert int(ref.result._value) == int(lean.result._value) == 0
        np.testing.assert_allclose(rates2, rates, rtol=1e-11, atol=1e-12)
        for name in ("qdot_plus", "impulses", "T_minus", "T_plus", "loss", "xi"):
            np.testing.assert_allclose(getattr(lean, name), getattr(ref, name), rtol=1e-11, atol=1e-12, err_msg=name)
