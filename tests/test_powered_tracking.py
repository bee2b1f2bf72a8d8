"""Tracking an optimal gait by PD feedback (seed 003's biped with a torso; Kelly's five-link biped in the slow
tests): the optimum's torques replayed open loop against the collocation error and its convergence with the mesh,
the closed-loop stride map's Jacobian against central differences, and the Floquet multipliers of the two clocks:
tracking the optimal joint trajectory in time is unstable at every gain, tracking it as virtual constraints of the
stance angle is stable at high gains."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact._powered import tracking_floquet, tracking_stride

from .helpers import central_difference

A = math.asin(0.25 / 0.8)  # seed 003: legs of 0.8 m, a step of 0.5 m


def seed3_gait(segments=10, guess=None):
    walker = di.biped_torso_walker(di.BipedWithTorso.from_ratios(mu=0.5, mu_T=1.0))
    return di.optimal_gait(walker, jnp.array([-A, -2 * A, -A]) if guess is None else guess, step_length=0.5,
                           step_time=0.5, segments=segments, normalise="distance")


def start(gait):
    """The optimum's post-impact state ``(θ(0), θ̇(0))``."""
    return jnp.concatenate([gait.theta[0], gait.theta_dot[0]])


@pytest.fixture(scope="module")
def gait():
    return seed3_gait()


@pytest.fixture(scope="module")
def stable(gait):
    """Seed 003's optimum tracked as virtual constraints with high gains."""
    return tracking_floquet(gait, kp=1000.0, kd=30.0, clock="phase", throw=True)


@pytest.mark.slow
@pytest.mark.stage2
def test_open_loop_replay_returns_to_the_start(gait):
    """With zero gains the optimum's own torques, replayed open loop from its start, walk one step back to the
    start, but for the collocation error (Hermite–Simpson, 10 segments: the step is 0.7 ms long, the rates
    are 0.016 rad/s off, the angles 3e-3 rad)."""
    x0 = start(gait)
    x1, info = tracking_stride(gait, x0, throw=True)
    assert info.result == di.GaitResults.successful
    assert abs(float(info.step_time) - 0.5) < 2e-3
    assert abs(float(info.step_length) - 0.5) < 5e-3
    np.testing.assert_allclose(x1[:3], x0[:3], atol=5e-3)
    np.testing.assert_allclose(x1[3:], x0[3:], atol=3e-2)
    assert float(jnp.max(jnp.abs(x1 - x0))) > 1e-4  # not periodic to the integration's accuracy
    # The heel strike is the end of the optimum's step: the swing foot on the ground, descending.
    assert abs(float(gait.problem.biped.swing_foot_position(info.theta_minus)[1])) < 1e-9
    assert float(gait.problem.biped.swing_foot_velocity(info.theta_minus, info.theta_dot_minus)[1]) < 0


@pytest.mark.slow
@pytest.mark.stage2
def test_phase_tracking_is_stable(gait, stable):
    """Virtual constraints at kp = 1000 N m/rad, kd = 30 N m s/rad: a fixed point within the collocation error of
    the optimum's start, periodic to Newton's tolerance, spectral radius 0.46; two multipliers are zero (the
    post-impact surface, and the flow direction of an autonomous closed loop)."""
    assert stable.result == di.GaitResults.successful and bool(stable.stable)
    assert 0.3 < float(stable.spectral_radius) < 0.6
    np.testing.assert_allclose(float(stable.spectral_radius), float(jnp.max(jnp.abs(stable.multipliers))))
    moduli = np.abs(np.asarray(stable.multipliers))
    assert np.all(np.diff(moduli) <= 0) and np.all(moduli[-2:] < 1e-12)
    np.testing.assert_allclose(stable.x, start(gait), atol=2e-3)
    x1, info = tracking_stride(gait, stable.x, kp=1000.0, kd=30.0, clock="phase")
    np.testing.assert_allclose(x1, stable.x, atol=1e-7)
    assert abs(float(info.step_time) - 0.5) < 2e-3 and float(info.lift_off_speed) > 0
    # The post-impact surface: the trailing foot on the ground.
    assert abs(float(gait.problem.biped.swing_foot_position(stable.x[:3])[1])) < 1e-9


@pytest.mark.slow
@pytest.mark.stage2
def test_stride_jacobian_against_central_differences(gait, stable):
    """∂P/∂x by forward mode through the closed-loop step (the event time by the implicit-function theorem)
    against central differences of the stride map (step 1e-4: the integration's noise, ~1e-9, divided by the step
    stays below the truncation error)."""
    fd = central_difference(lambda x: tracking_stride(gait, x, kp=1000.0, kd=30.0, clock="phase")[0], stable.x,
                            h=1e-4)
    np.testing.assert_allclose(stable.jacobian, fd, rtol=1e-3, atol=1e-3)
    assert float(jnp.max(jnp.abs(stable.jacobian))) > 1.0


@pytest.mark.slow
@pytest.mark.stage2
def test_bad_input(gait):
    x0 = start(gait)
    with pytest.raises(ValueError, match="clock"):
        tracking_stride(gait, x0, clock="phase-variable")
    with pytest.raises(ValueError, match="kp"):
        tracking_stride(gait, x0, kp=jnp.ones(3))
    with pytest.raises(ValueError, match="kd"):
        tracking_stride(gait, x0, kd=-1.0)
    with pytest.raises(ValueError, match="`x`"):
        tracking_stride(gait, x0[:3])
    with pytest.raises(TypeError, match="OptimalGait"):
        tracking_floquet(x0)


@pytest.mark.slow
def test_open_loop_error_converges_with_the_mesh(gait):
    """The open-loop replay's return error is the collocation error: it falls at least eightfold when the mesh
    is doubled (Hermite–Simpson's state error is fourth order)."""
    fine = seed3_gait(20, guess=gait)

    def miss(g):
        x0 = start(g)
        return float(jnp.max(jnp.abs(tracking_stride(g, x0, throw=True)[0] - x0)))

    assert miss(fine) < miss(gait) / 8


SEED3_GAINS = [(0.0, 10.0), (100.0, 10.0), (300.0, 30.0), (1000.0, 30.0), (10000.0, 30.0)]


@pytest.mark.slow
def test_seed3_gains(gait):
    """Seed 003's optimum: tracking in time is unstable at every gain (spectral radius 15–30, tending to ~22 as
    the gains grow: the unactuated stance leg falls off its schedule); as virtual constraints it is stable from
    kp ≈ 300, kd ≈ 30 on, tending to ~0.68, the hybrid zero dynamics' multiplier, independent of kd."""
    for kp, kd in SEED3_GAINS:
        r = tracking_floquet(gait, kp=kp, kd=kd)
        assert r.result == di.GaitResults.successful and float(r.spectral_radius) > 10, (kp, kd)
    radius = {}
    for kp, kd in SEED3_GAINS:
        r = tracking_floquet(gait, kp=kp, kd=kd, clock="phase")
        assert r.result == di.GaitResults.successful, (kp, kd)
        radius[kp, kd] = float(r.spectral_radius)
    assert radius[0.0, 10.0] > 1 and radius[100.0, 10.0] > 1
    assert radius[300.0, 30.0] < 1 and radius[1000.0, 30.0] < 1 and radius[10000.0, 30.0] < 1
    high = float(tracking_floquet(gait, kp=10000.0, kd=100.0, clock="phase").spectral_radius)
    assert abs(high - radius[10000.0, 30.0]) < 0.01


@pytest.mark.slow
def test_vmap_over_gains_equals_a_loop(gait):
    """A batch of gains, one compiled program: the members equal single calls to Newton's tolerance (a member
    that has converged goes on iterating with the others) and the multipliers to the forward-mode tangents'
    accuracy, ~1e-5 in ∂P/∂x."""
    kd = jnp.array([10.0, 30.0, 100.0])
    batch = jax.vmap(lambda d: tracking_floquet(gait, kp=1000.0, kd=d, clock="phase"))(kd)
    for i, d in enumerate(kd):
        one = tracking_floquet(gait, kp=1000.0, kd=d, clock="phase")
        np.testing.assert_allclose(batch.x[i], one.x, atol=1e-8)
        np.testing.assert_allclose(batch.spectral_radius[i], one.spectral_radius, rtol=1e-4)


@pytest.mark.slow
def test_kelly_gains():
    """Kelly's five-link biped (knees; the stance ankle unactuated): in time unstable at every gain (spectral
    radius above 5), as virtual constraints stable at kp = 3000, kd ≥ 10 and kp = 1000, kd = 100."""
    g = di.kelly_gait()
    for kp, kd in [(100.0, 0.0), (300.0, 30.0), (3000.0, 30.0)]:
        r = tracking_floquet(g, kp=kp, kd=kd)
        assert r.result == di.GaitResults.successful and float(r.spectral_radius) > 5, (kp, kd)
    for kp, kd, stable in [(300.0, 30.0, False), (1000.0, 100.0, True), (3000.0, 30.0, True)]:
        r = tracking_floquet(g, kp=kp, kd=kd, clock="phase")
        assert r.result == di.GaitResults.successful and bool(r.stable) == stable, (kp, kd)
