"""The energy balance of powered gaits on their exact periodic orbits (:func:`difimpact.work_balance`): the
actuators' work over one step equals the kinetic energy lost at heel strike, checked by an independent
integration — scipy's DOP853 from the orbit's start under the optimum's interpolated torques (or the tracking
controller's), the work as a further state, stopped at each of the reference's knots and at the heel strike (the
swing foot's height reaching zero past half a step), then the library's heel strike — on seed 003's biped with a
torso (the experiment's quick mesh) and Kelly's five-link biped (his 6-segment mesh). The gaits are the
experiments' compiled solves, shared with ``test_powered_biped_torso.py`` and ``test_powered_kelly.py``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import difimpact as di
from difimpact.papers.font_kovecses_2008 import powered_gait as torso_experiment
from difimpact.papers.gait_classics import kelly_2017 as kelly_experiment
from difimpact._powered.tracking_system import TrackingSystem

ODE_TOL = 1e-12
BALANCE_RTOL = 1e-8


def _rhs(gait, kp, kd, clock):
    """``(θ̇, θ̈, Σ u ω)`` as a jitted function of ``(t, y)``: open loop the torques are ``gait.state(t)``'s
    (held after the step time), with gains the tracking controller's."""
    biped, j = gait.problem.biped, gait.theta.shape[1]
    B = jnp.asarray(biped.actuation()[2:])
    system = TrackingSystem(gait, jnp.full(biped.controls, kp), jnp.full(biped.controls, kd), clock)

    @jax.jit
    def rhs(t, y):
        theta, rate = y[:j], y[j:2 * j]
        if kp == 0 and kd == 0 and clock == "time":
            u = gait.state(jnp.clip(t, 0.0, gait.step_time))[2]
        else:
            u = system.control(t, theta, rate)
        acc, _ = biped.dynamics(theta, rate, u)
        return jnp.concatenate([rate, acc, (u @ (B.T @ rate))[None]])

    return rhs


def scipy_step(gait, x, kp=0.0, kd=0.0, clock="time"):
    """One step from ``x`` by DOP853 (rtol = atol = 1e-12) with the work appended, stopped at each of the
    reference's knots; the heel strike is armed once the swing foot is 1e-6 m above the ground and half a step
    ahead (a straight swing leg scuffs through the ground), then struck at zero height: ``(W, θ⁻, θ̇⁻, t)``."""
    biped, j, L = gait.problem.biped, gait.theta.shape[1], float(gait.step_length)
    rhs = _rhs(gait, kp, kd, clock)
    foot = jax.jit(lambda theta: biped.swing_foot_position(theta))

    def arm(t, y):
        p = np.asarray(foot(y[:j]))
        return min(float(p[1]) - 1e-6, float(p[0]) - 0.5 * L)

    def strike(t, y):
        return float(np.asarray(foot(y[:j]))[1])

    arm.terminal, arm.direction, strike.terminal, strike.direction = True, 1, True, -1
    T = float(gait.step_time)
    ends = [float(t) for t in np.asarray(gait.t[2::2])] + [2 * T]
    y, t, armed = np.concatenate([np.asarray(x), [0.0]]), 0.0, False
    for end in ends:  # the reference's knots, where the torques have kinks
        while t < end:
            sol = solve_ivp(lambda s, z: np.asarray(rhs(s, z)), (t, end), y, method="DOP853", rtol=ODE_TOL,
                            atol=ODE_TOL, events=strike if armed else arm)
            y, t = sol.y[:, -1], sol.t[-1]
            if sol.status == 1:
                y, t = sol.y_events[0][0], sol.t_events[0][0]
                if armed:
                    return y[-1], y[:j], y[j:2 * j], t
                armed = True
    raise AssertionError("no heel strike")


def check(gait, balance, **controller):
    """The scipy step from the orbit's start: its work equals the heel strike's loss and `balance`'s work, and
    the step returns to the start."""
    biped = gait.problem.biped
    assert balance.result == di.GaitResults.successful
    work, theta, rate, t = scipy_step(gait, balance.x, **controller)
    rates_plus, impact = biped.heel_strike(jnp.asarray(theta), jnp.asarray(rate))
    loss = float(impact.loss)
    assert abs(work / loss - 1) < BALANCE_RTOL
    assert abs(work / float(balance.work) - 1) < BALANCE_RTOL
    assert abs(loss / float(balance.impact_loss) - 1) < BALANCE_RTOL
    assert abs(t - float(balance.step_time)) < 1e-8
    np.testing.assert_allclose(np.concatenate([biped.relabel(jnp.asarray(theta)), rates_plus]), balance.x, rtol=0,
                               atol=1e-8)
    # The library's own numbers: the balance far below the mesh's, the work–energy theorem along the step.
    assert float(balance.relative_error) < BALANCE_RTOL
    assert abs(float(balance.energy_change) / float(balance.work) - 1) < BALANCE_RTOL
    assert float(balance.periodicity) < 1e-9
    return work, loss


@pytest.fixture(scope="module")
def torso():
    return torso_experiment.optimal_step(jnp.asarray(1.0), torso_experiment.QUICK_SEGMENTS)


@pytest.fixture(scope="module")
def kelly():
    return kelly_experiment.solve(kelly_experiment.HS, 6)


@pytest.mark.slow
def test_torso_open_loop(torso):
    """Seed 003's biped (μ_T = 1, 40 segments): the exact orbit under the optimum's torques, open loop, starts
    at the collocation error (~1e-6) from the collocated start, and balances its work to ~1e-12 where Simpson's
    rule on the mesh balances it to ~1e-7."""
    balance = di.work_balance(torso)
    check(torso, balance)
    assert 1e-9 < float(balance.distance) < 1e-3
    assert float(balance.relative_error) < 1e-10
    mesh = abs(float(torso.net_work) / float(torso.impact_loss) - 1)
    assert float(balance.relative_error) < 1e-3 * mesh


@pytest.mark.slow
def test_kelly(kelly):
    """Kelly's mesh (6 segments). Open loop Newton finds no periodic orbit: the replay's stride map has multipliers
    up to ~280 (the unactuated stance ankle), and so coarse an optimum's discretisation error (its replay misses
    its start by 3 rad/s) throws Newton off — a result, and ``throw=True`` raises with it. Tracked as virtual
    constraints (kp = 1000, kd = 100, stable) the closed loop's orbit balances its work to ~1e-12."""
    failed = di.work_balance(kelly, throw=False)
    assert failed.result == di.GaitResults.no_fixed_point
    with pytest.raises(Exception, match="fixed point"):
        di.work_balance(kelly)
    balance = di.work_balance(kelly, kp=1000.0, kd=100.0, clock="phase")
    check(kelly, balance, kp=1000.0, kd=100.0, clock="phase")
    assert 1e-4 < float(balance.distance) < 1e-2


def test_bad_input():
    """Checked before anything is compiled."""
    with pytest.raises(TypeError, match="OptimalGait"):
        di.work_balance(jnp.zeros(3))


@pytest.mark.slow
def test_bad_options(torso):
    with pytest.raises(ValueError, match="clock"):
        di.work_balance(torso, clock="phase-variable")
    with pytest.raises(ValueError, match="rtol"):
        di.work_balance(torso, rtol=2.0)
