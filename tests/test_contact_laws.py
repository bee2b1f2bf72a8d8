"""Contact laws: closed forms of Hertz/Mindlin, restitution rules against an independent 1-DOF integration
(scipy), never-pulling forces, finite gradients at first contact, validation."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import difimpact as di


def test_hertz_stiffness_seed000_nominal():
    # seed 000, eqs. 36–37 with the §5 materials, evaluated by hand in NumPy.
    E_star = 1.0 / ((1 - 0.5**2) / 0.1e9 + (1 - 0.2**2) / 30e9)
    expected = 4.0 / 3.0 * E_star * np.sqrt(0.05)
    k_n = di.hertz_stiffness(0.05, 0.1e9, 0.5, 30e9, 0.2)
    assert np.isclose(k_n, expected, rtol=1e-14)
    assert np.isclose(k_n, 3.9585e7, rtol=1e-4)
    law = di.HuntCrossley.from_materials(0.05, 0.1e9, 0.5, 30e9, 0.2, 1e7)
    assert np.isclose(law.stiffness, expected, rtol=1e-14) and law.damping == 1e7


@pytest.mark.parametrize("nu", [0.0, 0.3, 0.5])
def test_mindlin_to_hertz_ratio(nu):
    # Identical materials: dF_t/dz over dF_n/dδ = 2(1 − ν)/(2 − ν) (Mindlin 1949), i.e. k_t/k_n = 3(1 − ν)/(2 − ν).
    E, R = 2e9, 0.03
    ratio = di.mindlin_stiffness(R, E, nu, E, nu) / di.hertz_stiffness(R, E, nu, E, nu)
    assert np.isclose(ratio, 3 * (1 - nu) / (2 - nu), rtol=1e-13)


def test_hunt_crossley_formula_and_clipping():
    law = di.HuntCrossley(4e7, 1e7)
    d, dd = 1.3e-3, 0.7
    assert np.isclose(law.force(d, dd), 4e7 * d**1.5 + 1e7 * d**1.5 * dd, rtol=1e-14)
    deltas = jnp.linspace(-2e-3, 2e-3, 41)
    rates = jnp.linspace(-10.0, 10.0, 41)
    F = jax.vmap(jax.vmap(law.force, (None, 0)), (0, None))(deltas, rates)
    assert bool(jnp.all(F >= 0))  # never pulls
    assert bool(jnp.all(F[deltas <= 0] == 0))  # nothing out of contact
    # The clip acts exactly where k + χ δ̇ < 0.
    assert float(law.force(d, -4.01)) == 0.0 and float(law.force(d, -3.99)) > 0.0


def test_kelvin_voigt_formula_and_clipping():
    law = di.KelvinVoigt(1e5, 200.0)
    assert np.isclose(law.force(2e-3, 0.5), 1e5 * 2e-3 + 200 * 0.5, rtol=1e-14)
    assert float(law.force(1e-3, -0.6)) == 0.0  # damping would pull: clipped
    assert float(law.force(-1e-3, 5.0)) == 0.0


@pytest.mark.parametrize("law", [di.HuntCrossley(4e7, 1e7), di.KelvinVoigt(1e5, 200.0)])
def test_gradients_finite_at_first_contact(law):
    for d in (0.0, -1e-4):
        g = jax.grad(lambda p, x, v: p.force(x, v), argnums=(0, 1, 2))(law, d, 0.5)
        leaves = jax.tree_util.tree_leaves(g)
        assert all(bool(jnp.all(jnp.isfinite(x))) for x in leaves)


def _restitution_1dof(k, chi, v0, m=2.0):
    """A mass ``m`` hitting the Hunt–Crossley half-space at ``v0``: returns −v_out / v_in (scipy Radau)."""

    def rhs(t, y):
        d, v = y
        F = max(k * max(d, 0.0) ** 1.5 * (1 + chi / k * v), 0.0)
        return [v, -F / m]

    def out(t, y):
        return y[0]

    out.terminal, out.direction = True, -1
    sol = solve_ivp(rhs, (0, 1.0), [1e-12, v0], method="Radau", rtol=1e-11, atol=1e-14, events=out)
    return -sol.y_events[0][0][1] / v0


@pytest.mark.parametrize("rule, e, tol", [("lankarani_nikravesh", 0.99, 5e-4), ("lankarani_nikravesh", 0.95, 5e-3),
                                          ("flores", 0.9, 0.01), ("flores", 0.5, 0.07)])
def test_damping_from_restitution(rule, e, tol):
    # Both rules are approximations (measured: LN gives 0.913 for e = 0.9 and 0.725 for e = 0.5, Flores 0.894
    # and 0.470): LN is derived for e → 1, Flores et al. hold over the whole range.
    k, v0 = 4e7, 1.2
    chi = di.damping_from_restitution(k, e, v0, rule)
    assert abs(_restitution_1dof(k, float(chi), v0) - e) < tol * e


def test_restitution_rules_elastic_limit_and_low_restitution():
    k, v0 = 4e7, 1.2
    assert np.isclose(_restitution_1dof(k, 0.0, v0), 1.0, atol=1e-7)
    errors = {rule: abs(_restitution_1dof(k, float(di.damping_from_restitution(k, 0.5, v0, rule)), v0) - 0.5)
              for rule in ("lankarani_nikravesh", "flores")}
    assert errors["flores"] < errors["lankarani_nikravesh"] / 3


def test_friction_laws():
    Fn = 100.0
    coulomb = di.Coulomb(0.5)
    assert float(coulomb.force(Fn, -0.3, 0.0, 1e-3)) == 50.0 and isinstance(coulomb, di.AbstractExactStickLaw)
    reg = di.RegularisedCoulomb(0.5, 1e-3)
    assert np.isclose(reg.force(Fn, 1.0, 0.0, 1e-3), -50.0, rtol=1e-12)  # saturated far from v = 0
    assert np.isclose(reg.force(Fn, 1e-6, 0.0, 1e-3), -50 * np.tanh(1e-3), rtol=1e-12)
    assert isinstance(coulomb, di.AbstractStickSlipLaw) and isinstance(reg, di.AbstractSmoothFrictionLaw)
    assert not isinstance(reg, di.AbstractStickSlipLaw)
    spring = di.TangentialSpring(4e7, 0.5)
    # regimes as phases, elastic stick (no multiplier)
    assert isinstance(spring, di.AbstractElasticStickLaw) and not isinstance(spring, di.AbstractExactStickLaw)
    d, z = 1e-3, 1e-6
    assert np.isclose(spring.force(Fn, 0.0, z, d), -4e7 * np.sqrt(d) * z, rtol=1e-12)  # seed 001, eq. 17
    assert float(spring.displacement_rate(Fn, 0.2, z, d)) == 0.2  # ż = v_t in stick
    # Entering stick from sliding: the displacement whose elastic force is the sliding force ±μF_n.
    for friction in (-50.0, 50.0):
        z_stick = spring.stick_displacement(friction, d)
        assert np.isclose(spring.force(Fn, 0.0, z_stick, d), friction, rtol=1e-12)
    assert float(coulomb.displacement_rate(Fn, 0.2, 0.0, d)) == 0.0  # no displacement state
    # Out of contact the division by √δ is never taken, so gradients stay finite.
    assert float(jax.grad(spring.stick_displacement, argnums=1)(50.0, 0.0)) == 0.0


@pytest.mark.parametrize("make, name", [
    (lambda: di.HuntCrossley(0.0, 1e7), "stiffness"),
    (lambda: di.HuntCrossley(-1.0), "stiffness"),
    (lambda: di.HuntCrossley(1e7, -1.0), "damping"),
    (lambda: di.KelvinVoigt(0.0), "stiffness"),
    (lambda: di.Coulomb(-0.1), "mu"),
    (lambda: di.RegularisedCoulomb(0.5, 0.0), "velocity_scale"),
    (lambda: di.TangentialSpring(0.0, 0.5), "stiffness"),
    (lambda: di.hertz_stiffness(0.05, 0.1e9, 1.0, 30e9, 0.2), "nu1"),
    (lambda: di.hertz_stiffness(0.0, 0.1e9, 0.5, 30e9, 0.2), "radius"),
    (lambda: di.damping_from_restitution(4e7, 1.5, 1.0), "restitution"),
    (lambda: di.damping_from_restitution(4e7, 0.5, 0.0), "impact_velocity"),
])
def test_bad_parameters(make, name):
    with pytest.raises(ValueError, match=f"`{name}`"):
        make()


def test_bad_parameters_under_jit_and_vmap():
    force = eqx.filter_jit(jax.vmap(lambda k: di.HuntCrossley(k, 1e7).force(1e-3, 0.0)))
    assert bool(jnp.all(force(jnp.array([1e7, 2e7])) > 0))
    with pytest.raises(eqx.EquinoxRuntimeError, match="`stiffness` must be positive"):
        force(jnp.array([1e7, 0.0]))
    with pytest.raises(ValueError, match="`rule`"):
        di.damping_from_restitution(4e7, 0.5, 1.0, rule="nope")
