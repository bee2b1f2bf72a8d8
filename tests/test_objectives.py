"""Gradients of the objectives against central finite differences at random test points (issue 5, item 1).

Each objective is composed with a model's differentiable pre-impact state, so the derivatives include the
change of the contact geometry. One compiled function per objective returns the value and its ``jacfwd``
(``jax.grad`` for the compliant one), evaluated over a batch with ``vmap``; the finite differences reuse it.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact.papers.font_llagunes_2012.crutch_tip import tip_contact


def _uniform(rng, lows, highs, n=3):
    return rng.uniform(lows, highs, size=(n, len(lows)))


def _check(fn, points, rtol):
    """``jax.jacfwd(fn)`` against central differences of ``fn`` at every point (rows), step ``eps^(1/3)``
    relative. The points and their finite-difference neighbours go through one compiled, vmapped function, which
    traces ``fn`` once: its value is the primal of the forward-mode derivative."""
    n, d = points.shape
    h = np.finfo(float).eps ** (1 / 3) * np.maximum(1.0, np.abs(points))
    shifts = np.einsum("ni,ij->nij", h, np.eye(d))
    batch = np.concatenate([points, (points[:, None] + shifts).reshape(-1, d),
                            (points[:, None] - shifts).reshape(-1, d)])
    jacs, values = jax.jit(jax.vmap(jax.jacfwd(lambda x: (fn(x),) * 2, has_aux=True)))(jnp.asarray(batch))
    values, jacs = np.asarray(values), np.asarray(jacs)
    per_shift = (n, d) + values.shape[1:]
    plus, minus = values[n:n + n * d].reshape(per_shift), values[n + n * d:].reshape(per_shift)
    fd = np.moveaxis((plus - minus) / h.reshape((n, d) + (1,) * (values.ndim - 1)), 1, -1)
    for jac, ref in zip(jacs[:n], fd):
        scale = np.max(np.abs(ref))
        assert scale > 0
        np.testing.assert_allclose(jac, ref / 2, rtol=0, atol=rtol * scale / 2)
    return values[:n]


def test_energy_loss_and_impulses_compass(rng):
    """Seed 001 walker: loss and impulses vs foot radius R and stance angle q3 (the contact point moves on
    the arc with both)."""

    def fn(x):
        model = di.CompassGait(R=x[0])
        q, qdot = model.pre_impact_state(x[1])
        opts = dict(stick=("swing_foot",))
        return jnp.concatenate([di.energy_loss(model, q, qdot, **opts)[None], di.impulses(model, q, qdot, **opts)])

    values = _check(fn, _uniform(rng, [0.1, math.radians(5)], [0.9, math.radians(25)]), 1e-6)
    assert np.all(values[:, 0] > 0) and np.all(values[:, 1] > 0)  # energy lost, normal impulse pushes up


def test_biped_indexes_and_lift_off(rng):
    """Seed 003 biped: ξ_I, ξ and v_Sn⁺ vs torso angle q5, mass ratio μ_T and inter-leg angle q4."""

    def fn(x):
        m_H = 20.0 / (1.0 + x[1])
        model = di.BipedWithTorso(m=5.0, m_H=m_H, m_T=x[1] * m_H)
        q, qdot = model.pre_impact_state(x[2], x[0])
        opts = dict(stick=("P_L",), massless="keep")
        return jnp.stack([di.constrained_energy_index(model, q, qdot, **opts),
                          di.energy_index(model, q, qdot, **opts),
                          di.post_impact_velocity(model, q, qdot, "P_R", **opts)[1]])

    values = _check(fn, _uniform(rng, [0.0, 0.2, math.radians(20)], [math.radians(30), 2.0, math.radians(40)]),
                    1e-6)
    np.testing.assert_allclose(values[:, 0], values[:, 1], rtol=1e-12)  # b⁺ = 0: ξ = ξ_I (seed 003, eq. 21)


def test_energy_index_partial_blocking(rng):
    """Seed 002 human: ξ vs the prescribed ankle rate (eq. 10) and the push-off rate ω0 (eq. 3)."""
    model = di.SevenLinkHuman()

    def fn(x):
        q, qdot = model.heel_strike_state(x[1])
        return di.energy_index(model, q, qdot, stick=("CAL_R",), unilateral=("MH_L",),
                               blocked={"theta_A_R": x[0]})

    _check(fn, _uniform(rng, [-10.0, -1.5], [-1.0, -0.5]), 1e-6)


def test_sliding_margin_crutch(rng):
    """Seed 000 crutch walker: μ − μ_c vs q3, q4 (the tip placement q6 moves with both) and q̇5."""
    model = di.CrutchWalker()

    def fn(x):
        q, qdot = model.pre_impact_state(x[0], x[2], q4=x[1])
        return di.sliding_margin(model, q, qdot, "Q", friction=di.Coulomb(0.75))

    values = _check(fn, _uniform(rng, [math.radians(3), 0.0, -0.2], [math.radians(21), math.radians(20), 0.4]),
                    1e-6)
    q, qdot = model.pre_impact_state(math.radians(12.0), -0.2)
    np.testing.assert_allclose(di.sliding_margin(model, q, qdot, "Q", friction=di.Coulomb(0.75)),
                               0.75 - 0.675, atol=1e-3)  # CONVENTIONS check
    assert values.shape == (3,)


def test_sticking_margin_crutch(rng):
    """μ − μ_stick (the impact ends stuck) against central differences, and its sign against the regime of
    ``frictional_impact`` over random postures, pre-impact rates and μ; at q3 = 12°, q̇5 = −0.2 it is the issue's
    0.69012 (μ_c = 0.67547: μ = μ_c + 0.005 keeps a stick but ends sliding)."""
    model = di.CrutchWalker()

    def parts(x):
        q, qdot = model.pre_impact_state(x[0], x[2], q4=x[1])
        law = di.Coulomb(x[3])
        hit = di.frictional_impact(model, q, qdot, "Q", friction=law)
        return di.sticking_margin(model, q, qdot, "Q", friction=law), hit.regime

    _check(lambda x: parts(x)[0], _uniform(rng, [math.radians(3), 0.0, -0.2, 0.4],
                                           [math.radians(21), math.radians(20), 0.4, 1.2]), 1e-6)
    x = _uniform(rng, [math.radians(3), 0.0, -0.4, 0.3], [math.radians(21), math.radians(20), 0.6, 1.2], 64)
    margin, regime = jax.jit(jax.vmap(parts))(jnp.asarray(x))
    stuck = np.asarray((regime == di.FrictionalRegime.stick) | (regime == di.FrictionalRegime.slide_stick))
    np.testing.assert_array_equal(stuck, np.asarray(margin) >= 0)
    assert 0 < stuck.mean() < 1
    q, qdot = model.pre_impact_state(math.radians(12.0), -0.2)
    hit = di.frictional_impact(model, q, qdot, "Q", friction=di.Coulomb(0.68))
    np.testing.assert_allclose([hit.mu_c, hit.mu_stick], [0.67547, 0.69012], atol=1e-5)
    assert hit.regime_name == "slide" and di.sliding_margin(model, q, qdot, "Q", friction=di.Coulomb(0.68)) > 0


def test_crutch_peak_force_constraint_ends_stuck():
    """``crutch_peak_force``'s constraint ``μ ≥ μ_c + margin`` (a stick once reached is kept) also ends the impact
    stuck over its whole feasible set, as its docstring says: ``μ − μ_stick ≥ margin − 0.022`` on a 41 × 41 grid."""
    model, contact = di.CrutchWalker(), tip_contact(mu=0.75)

    def hit(x):
        q, qdot = model.pre_impact_state(x[0], -0.2, q4=x[1])
        return di.frictional_impact(model, q, qdot, "Q", friction=contact.friction_law)

    axes = np.meshgrid(np.radians(np.linspace(3, 21, 41)), np.radians(np.linspace(0, 20, 41)), indexing="ij")
    r = jax.jit(jax.vmap(hit))(jnp.asarray(np.stack(axes, -1).reshape(-1, 2)))
    feasible = np.asarray(0.75 - r.mu_c) >= 0.05
    assert 0.2 < feasible.mean() < 0.9
    assert np.all(np.asarray(r.regime == di.FrictionalRegime.slide_stick)[feasible])
    assert np.all(np.asarray(0.75 - r.mu_stick)[feasible] >= 0.05 - 0.022)


@pytest.mark.slow
def test_peak_contact_force_gradient(rng):
    """Compliant crutch tip (seed 000, Hunt–Crossley + Coulomb): the interpolated peak force vs q3 and q4 at a
    random point and the default tolerances, reverse mode through the diffrax solve and its events."""
    model, contact = di.CrutchWalker(), tip_contact()

    def fn(x):
        q, qdot = model.pre_impact_state(x[0], -0.2, q4=x[1])
        return di.peak_contact_force(model, q, qdot, "Q", normal=contact.normal_law, friction=contact.friction_law)

    value_and_grad = jax.jit(jax.value_and_grad(fn))
    x = _uniform(rng, [math.radians(8), math.radians(5)], [math.radians(16), math.radians(15)], n=1)[0]
    value, grad = value_and_grad(jnp.asarray(x))
    # Measured 2.5e-6 and 5e-7 relative (q3, q4) at h = 1e-4; at h = 1e-5, 1e-3 the finite differences
    # themselves move by 8e-6 and 1.6e-5 (adaptive-step noise, truncation).
    h = 1e-4
    fd = np.array([(value_and_grad(jnp.asarray(x + h * e))[0] - value_and_grad(jnp.asarray(x - h * e))[0]) / (2 * h)
                   for e in np.eye(2)])
    np.testing.assert_allclose(grad, fd, rtol=1e-4)
    assert 3e3 < value < 1e4  # the range of seed 000's peak tip forces [N]


def test_margins_name_the_point_and_its_law():
    """The margins take a point's name and its :class:`Coulomb` law (a :class:`Contact`, 0.1's form, is removed)."""
    model = di.CrutchWalker()
    q, qdot = model.pre_impact_state(math.radians(12.0), -0.2)
    for fn in (di.sliding_margin, di.sticking_margin):
        with pytest.raises(TypeError):
            fn(model, q, qdot, di.Contact("Q", friction_law=di.Coulomb(0.68)))
        with pytest.raises(TypeError):
            fn(model, q, qdot, "Q")  # the law is required
