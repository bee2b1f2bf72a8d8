"""The seven-link human's predicted gait (:func:`difimpact._human_gait.human_gait`) against independent checks: the
phases' dynamics hold their contacts and balance power; the optimal step integrated forward by scipy's DOP853
under its interpolated torques returns through the heel strike to its first state, with the actuators' work
equal to the change of mechanical energy; the heel strike's trailing foot stays by the library's unilateral
enumeration; and Ros et al.'s blocking cases at the gait's heel strike.

The solve (Hermite–Simpson, 3/2/4/3 segments per phase, compiled once per module) takes about three minutes of CPU
to compile: the tests that need it are ``slow``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from difimpact import SevenLinkHuman
from difimpact._experiments import gait_human as experiment
from difimpact._human_gait import phases as ph
from difimpact._human_gait.replay import replay


def scipy_integrate(rhs, span, y0):
    f = jax.jit(rhs)
    sol = solve_ivp(lambda t, y: np.asarray(f(t, jnp.asarray(y))), span, y0, method="DOP853", rtol=1e-12,
                    atol=1e-12)
    assert sol.success
    return sol.y[:, -1]


@pytest.fixture(scope="module")
def gait():
    return experiment.solve(experiment.QUICK_SEGMENTS)


@pytest.fixture(scope="module")
def replayed(gait):
    return replay(gait, scipy_integrate)


def test_phase_dynamics_hold_contacts_and_balance_power():
    """For every phase at a random state: the held rows' accelerations ``A q̈ + Ȧ q̇`` vanish, and the power
    balance ``dE/dt = u·θ̇ + λ·A q̇`` holds (``E = T + V`` differentiated by JAX)."""
    human = SevenLinkHuman()
    rng = np.random.default_rng(1)
    q = jnp.asarray([0.1, 0.9, 0.05, -0.3, 0.2, 0.1, 0.25, 0.3, -0.1]) + 0.01 * rng.standard_normal(9)
    qd, u = jnp.asarray(rng.standard_normal(9)), jnp.asarray(50 * rng.standard_normal(6))

    @jax.jit
    def residuals(active):
        qdd, lam, _ = ph.dynamics(human, active, q, qd, u)
        tree = human.tree()
        kin = [tree.point_kinematics(q, qd, p) for p in ph.FEET]
        A = jnp.concatenate([J[::-1] for _, J, _ in kin])
        bias = jnp.concatenate([b[::-1] for _, _, b in kin])
        _, dE = jax.jvp(lambda x, v: ph.energy(human, x, v), (q, qd), (qd, qdd))
        return (A @ qdd + bias) * active, dE - u @ qd[3:] - lam @ ((A * active[:, None]) @ qd)

    for phase in ph.PHASES:
        held, power = residuals(jnp.asarray(ph.mask(phase), float))
        assert float(jnp.max(jnp.abs(held))) < 1e-10
        assert abs(float(power)) < 1e-9 * float(jnp.sum(jnp.abs(u)))


@pytest.mark.slow
def test_gait_converges_and_is_a_walk(gait):
    assert int(gait.result._value) == 0
    assert 1.3 - 1e-9 < float(gait.speed) < 1.3 + 1e-9
    assert 0.3 < float(gait.step_length) < 1.0
    assert np.all(np.asarray(gait.durations) > 0)
    assert float(jnp.min(gait.grf[:, :, 1])) > -1e-6  # normal forces ≥ 0


@pytest.mark.slow
def test_closure_by_scipy(gait, replayed):
    """The integrated step returns to its first state through the heel strike within the collocation's error
    on this coarse mesh (the full mesh: the experiment)."""
    assert replayed["closure"] < 5e-2


@pytest.mark.slow
def test_energy_balance_of_the_integrated_step(replayed):
    """Along the integrated step the actuators' and contacts' work equal the change of ``T + V`` (to 1e-8);
    the contacts' work is small (they hold at rest but for the collocation's drift)."""
    r = replayed
    assert abs(r["work"] + r["contact_work"] - r["energy_change"]) < 1e-8 * abs(r["work"])
    assert abs(r["contact_work"]) < 1e-2 * abs(r["work"])


@pytest.mark.slow
def test_collocated_work_equals_impact_loss(gait):
    """A periodic step on level ground: net actuator work per step = heel-strike loss (quadrature on the mesh)."""
    assert abs(float(gait.net_work) / float(gait.impact.loss) - 1) < 0.05


@pytest.mark.slow
def test_heel_strike_of_the_gait(gait):
    """The gait imposes the trailing foot's staying (normal impulse ≥ 0); the library's unilateral enumeration at
    the same state agrees, and blocking more leading joints raises ξ (Ros et al. §4.3)."""
    ros = experiment.blocking(gait)
    assert ros["trailing"]["none"] == "stays"
    assert abs(ros["xi"]["none"] - float(gait.impact.xi)) < 1e-9
    assert ros["xi"]["ankle"] < ros["xi"]["ankle+knee"] < ros["xi"]["ankle+knee+hip"]
