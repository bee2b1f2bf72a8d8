"""Constrained impulsive impact (seed 003 eqs. 3–23, Appendix A; seed 002 eqs. 4–26).

References: the closed forms through ``M⁻¹`` (seed 003 eqs. 9, 18; seed 002 eqs. 20–22, 24, 26), the
Appendix A Jacobians, energy identities, finite differences, and the statements of seed 003's results section.
"""

import hypothesis.strategies as st
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings

import difimpact as di

from .helpers import central_difference

deg = np.deg2rad


def _state(params, q4, q5):
    """Seed 003 biped from (μ, μ_T, m_B, l, b, l_T) and its §4 pre-impact state."""
    mu, mu_T, m_B, l, b, l_T = params
    model = di.BipedWithTorso.from_ratios(mu=mu, mu_T=mu_T, m_B=m_B, l=l, b=b, l_T=l_T)
    q, qd = model.pre_impact_state(q4, q5)
    return model, q, qd


def _seed003(params, q4, q5):
    """Swing foot P_L sticks, stance foot P_R released (seed 003's A_I); v_Sn⁺ = B_S q̇⁺."""
    model, q, qd = _state(params, q4, q5)
    sol = di.impact(model, q, qd, stick=("P_L",), massless="keep")
    v_Sn = model.contact_jacobian(q, "P_R")[0] @ sol.qdot_plus
    return sol.T_minus, sol.Tc_minus, sol.Ta_minus, sol.xi_I, di.loss_per_distance(model, q, sol), v_Sn


@pytest.fixture(scope="module")
def grid_fn():
    # One compiled graph for every grid of §4: (μ, μ_T) pairs × angles, q5 = None is a separate trace.
    inner = jax.vmap(_seed003, in_axes=(None, 0, 0))
    return jax.jit(jax.vmap(inner, in_axes=(0, None, None)))


def _params(mu, mu_T):
    mu, mu_T = np.broadcast_arrays(np.asarray(mu, float), np.asarray(mu_T, float))
    k = mu.shape[0]
    return jnp.stack([mu, mu_T, np.full(k, 30.0), np.full(k, 0.8), np.full(k, 0.4), np.full(k, 0.4)], axis=1)


@pytest.fixture(scope="module")
def lower_body(grid_fn):
    """§4.1: q4 ∈ [10°, 50°], μ ∈ [0, 2], m_T = 10 kg (so μ_T = (1 + μ)/2 at m_B = 30 kg), upright torso."""
    mu = np.linspace(0.0, 2.0, 9)
    q4 = deg(np.linspace(10.0, 50.0, 17))
    out = grid_fn(_params(mu, (1 + mu) / 2), jnp.asarray(q4), jnp.asarray(q4 / 2))
    return mu, q4, [np.asarray(x) for x in out]


@pytest.fixture(scope="module")
def upper_body(grid_fn):
    """§4.2: q4 = 30°, q5 ∈ [0°, 30°], μ_T ∈ [0, 2], m = 5 kg (so μ = 10/m_H, m_H = 20/(1 + μ_T))."""
    mu_T = np.linspace(0.0, 2.0, 9)
    q5 = deg(np.linspace(0.0, 30.0, 17))  # same grid shape as `lower_body`: one compiled graph
    m_H = 20.0 / (1 + mu_T)
    out = grid_fn(_params(10.0 / m_H, mu_T), jnp.full(q5.shape, deg(30.0)), jnp.asarray(q5))
    return mu_T, q5, [np.asarray(x) for x in out]


# -- Appendix A ---------------------------------------------------------------------------------------------
def test_appendix_a_jacobians(rng):
    model = di.BipedWithTorso()
    jac = jax.jit(lambda q: (model.contact_jacobian(q, "P_L"), model.contact_jacobian(q, "P_R")))
    l = 0.8
    for _ in range(2):
        q = rng.uniform(-1.0, 1.0, 5)
        q3, q4 = q[2], q[3]
        A_L = np.array([[1, 0, l * np.cos(q3) - l * np.cos(q4 - q3), l * np.cos(q4 - q3), 0],
                        [0, 1, -l * np.sin(q3) - l * np.sin(q4 - q3), l * np.sin(q4 - q3), 0]])  # eq. 25
        A_R = np.array([[1.0, 0, 0, 0, 0], [0, 1, 0, 0, 0]])  # eq. 24
        # contact_jacobian rows are [normal (y); tangential (x)]: eq. 25's rows swapped.
        J_L, J_R = jac(q)
        np.testing.assert_allclose(J_L, A_L[::-1], atol=1e-14)
        np.testing.assert_allclose(J_R, A_R[::-1], atol=1e-14)


# -- closed forms and identities (hypothesis) ---------------------------------------------------------------
@jax.jit
def _random_impact(params, q4, q5, qd, w):
    """Swing foot sticks, stance foot stays, q5 partially blocked at rate w: 5 rows, regular M."""
    model, q, _ = _state(params, q4, q5)
    A = jnp.concatenate([model.contact_jacobian(q, "P_L"), model.contact_jacobian(q, "P_R")[:1],
                         jnp.eye(5)[4:]])
    b = jnp.array([0.0, 0.0, 0.0, 1.0]) * w
    return model.mass_matrix(q), A, b, di.constrained_impact(model.mass_matrix(q), A, qd, b)


_floats = lambda lo, hi: st.floats(lo, hi, allow_nan=False)  # noqa: E731


@settings(max_examples=12)
@given(mu=_floats(0.05, 3.0), mu_T=_floats(0.05, 3.0), m_B=_floats(5.0, 100.0), l=_floats(0.5, 1.2),
       b_frac=_floats(0.1, 0.9), l_T=_floats(0.1, 0.8), q4=_floats(0.1, 1.0), q5=_floats(-0.6, 0.6),
       qd=st.lists(_floats(-3.0, 3.0), min_size=5, max_size=5), w=_floats(-2.0, 2.0))
def test_closed_forms_and_identities(mu, mu_T, m_B, l, b_frac, l_T, q4, q5, qd, w):
    params = jnp.array([mu, mu_T, m_B, l, b_frac * l, l_T])
    M, A, b, s = jax.tree.map(np.asarray, _random_impact(params, q4, q5, jnp.asarray(qd), w))
    qd = np.asarray(qd)
    Mi = np.linalg.inv(M)
    W_c = np.linalg.inv(A @ Mi @ A.T)
    P_c = Mi @ A.T @ W_c @ A  # seed 003, eq. 9
    G = Mi @ A.T @ W_c  # seed 002, eq. 20
    scale = max(1.0, np.abs(qd).max(), abs(w))
    np.testing.assert_allclose(s.P_c, P_c, atol=1e-9)
    np.testing.assert_allclose(s.qdot_plus, (np.eye(5) - P_c) @ qd + G @ b, atol=1e-9 * scale)  # eq. 21
    np.testing.assert_allclose(s.impulses, W_c @ (b - A @ qd), atol=1e-9 * scale * np.abs(W_c).max())  # eq. 22
    np.testing.assert_allclose(A @ s.qdot_plus, b, atol=1e-10 * scale)
    np.testing.assert_allclose(M @ (s.qdot_plus - qd), A.T @ s.impulses, atol=1e-9 * scale * np.abs(M).max())
    # Projector identities (seed 003, eqs. 10–13) relative to the size of M.
    Mn = np.abs(M).max()
    np.testing.assert_allclose(s.P_c @ s.P_c, s.P_c, atol=1e-10)
    np.testing.assert_allclose(s.P_c.T @ M @ s.P_a / Mn, 0, atol=1e-12)
    np.testing.assert_allclose(s.P_c + s.P_a, np.eye(5), atol=1e-14)
    T = 0.5 * qd @ M @ qd
    tol = 1e-12 * max(T, 1e-3) + 1e-12
    np.testing.assert_allclose(s.T_minus, T, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(s.Tc_minus + s.Ta_minus, T, atol=tol)
    np.testing.assert_allclose(s.Tc_plus, 0.5 * b @ W_c @ b, rtol=1e-9, atol=1e-13)  # seed 002, eq. 24
    np.testing.assert_allclose(s.T_plus, s.Ta_minus + s.Tc_plus, atol=tol * scale**2)
    np.testing.assert_allclose(s.loss, s.T_minus - s.T_plus, atol=tol * scale**2)
    b_minus = A @ qd
    np.testing.assert_allclose(-s.loss, 0.5 * (b + b_minus) @ W_c @ (b - b_minus),  # seed 002, eq. 26
                               atol=1e-9 * max(T, 1.0) * scale**2)


@jax.jit
def _sticking(params, q4, q5, qd):
    model, q, _ = _state(params, q4, q5)
    vn = model.contact_jacobian(q, "P_L")[0] @ qd
    qd = qd.at[1].add(-jnp.maximum(vn, 0.0) - 0.1)  # make P_L approach the ground (A_L[0, 1] = 1)
    return model.contact_jacobian(q, "P_L"), qd, di.impact(model, q, qd, stick=("P_L",), massless="keep")


@settings(max_examples=12)
@given(mu=_floats(0.0, 3.0), mu_T=_floats(0.0, 3.0), q4=_floats(0.1, 1.0), q5=_floats(-0.6, 0.6),
       qd=st.lists(_floats(-3.0, 3.0), min_size=5, max_size=5))
def test_sticking_impact_dissipates(mu, mu_T, q4, q5, qd):
    """ΔT ≤ 0, ``q̇⁺ = P_a q̇⁻``, ``−2T_c⁻ = q̇⁻ᵀAᵀλ̄`` (seed 003 eqs. 17, 19–22), massless segments included."""
    A, qd, s = jax.tree.map(np.asarray, _sticking(jnp.array([mu, mu_T, 30.0, 0.8, 0.4, 0.4]), q4, q5,
                                                   jnp.asarray(qd)))
    T = float(s.T_minus)
    assert s.loss >= -1e-12 * T
    assert s.T_plus <= T * (1 + 1e-12)
    np.testing.assert_allclose(s.loss, s.Tc_minus, atol=1e-12 * T)
    np.testing.assert_allclose(s.qdot_plus, s.P_a @ qd, atol=1e-12 * np.abs(qd).max())
    np.testing.assert_allclose(A @ s.qdot_plus, 0, atol=1e-12 * np.abs(qd).max())
    np.testing.assert_allclose(qd @ A.T @ s.impulses, -2 * s.Tc_minus, atol=1e-10 * T)


# -- massless segments (seed 003's μ = 0 and μ_T = 0) -------------------------------------------------------
def test_massless_legs_kkt_matches_limit():
    """μ = 0 with both feet held: M is singular but the KKT system is regular; it is the μ → 0 limit."""
    out = []
    for mu in (0.0, 1e-7):
        model, q, qd = _state(jnp.array([mu, 0.5, 30.0, 0.8, 0.4, 0.4]), deg(30.0), None)
        A = jnp.concatenate([model.contact_jacobian(q, "P_L"), model.contact_jacobian(q, "P_R")])
        M = model.mass_matrix(q)
        out.append(di.constrained_impact(M, A, qd))
        if mu == 0.0:
            assert np.linalg.matrix_rank(np.asarray(M)) < 5
    s0, s_eps = out
    assert s0.result == di.ImpactResults.successful
    np.testing.assert_allclose(s0.qdot_plus, s_eps.qdot_plus, atol=1e-5)
    np.testing.assert_allclose(s0.impulses, s_eps.impulses, rtol=1e-5)
    np.testing.assert_allclose(s0.Tc_minus, s_eps.Tc_minus, rtol=1e-6)


def test_massless_coordinate_undetermined_is_an_error():
    model, q, qd = _state(jnp.array([1.0, 0.0, 30.0, 0.8, 0.4, 0.4]), deg(30.0), deg(10.0))  # μ_T = 0
    with pytest.raises(Exception, match="massless coordinate"):
        di.impact(model, q, qd, stick=("P_L",))
    # massless='keep': the free direction is q5 alone (M e5 = 0, A e5 = 0), so q̇5 keeps its pre-impact value.
    s = di.impact(model, q, qd, stick=("P_L",), massless="keep")
    assert s.result == di.ImpactResults.successful
    np.testing.assert_allclose(s.qdot_plus[4], qd[4], rtol=1e-12)
    s_eps = di.impact(_state(jnp.array([1.0, 1e-7, 30.0, 0.8, 0.4, 0.4]), deg(30.0), deg(10.0))[0], q, qd,
                      stick=("P_L",))
    # Impulses and energies do not depend on the undetermined component: they are the μ_T → 0 limit.
    np.testing.assert_allclose(s.impulses, s_eps.impulses, rtol=1e-6)
    np.testing.assert_allclose([s.Tc_minus, s.Ta_minus], [s_eps.Tc_minus, s_eps.Ta_minus], rtol=1e-6)


def test_massless_bound_gradient_is_the_one_sided_limit():
    """At ``m_T = 0`` and at ``m = 0`` (``massless="keep"``), ``dξ_I/dm`` in forward and reverse mode equals the
    one-sided (second-order) finite difference into ``m > 0`` and the derivative just inside the bound: the
    derivative of the limit ``m → 0⁺``, not of the regularised system (which had the wrong sign at ``m_T = 0``).
    `constrained_impact`, which has no model to say how the mass vanishes, refuses that derivative."""

    def xi(masses):
        model = di.BipedWithTorso(m=masses[0], m_H=10.0, m_T=masses[1])
        q, qd = model.pre_impact_state(deg(30.0), deg(5.0))
        return di.impact(model, q, qd, stick=("P_L",), massless="keep").xi_I

    f, rev, fwd = jax.jit(xi), jax.jit(jax.grad(xi)), jax.jit(jax.jacfwd(xi))
    for i, x0 in ((1, jnp.array([5.0, 0.0])), (0, jnp.array([0.0, 10.0]))):
        h = 1e-5
        fd = (-3 * f(x0) + 4 * f(x0.at[i].add(h)) - f(x0.at[i].add(2 * h))) / (2 * h)
        for g in (rev(x0)[i], fwd(x0)[i]):
            np.testing.assert_allclose(g, fd, rtol=1e-6)
        np.testing.assert_allclose(rev(x0.at[i].set(1e-8))[i], rev(x0)[i], rtol=1e-6)
    assert rev(jnp.array([5.0, 0.0]))[1] < 0  # a heavier torso lowers ξ_I from the massless torso on

    model = di.BipedWithTorso(m_T=0.0)
    q, qd = model.pre_impact_state(deg(30.0), deg(5.0))
    A = model.contact_jacobian(q, "P_L")
    xi_M = lambda M: di.constrained_impact(M, A, qd, massless="keep").xi
    assert np.isfinite(xi_M(model.mass_matrix(q)))
    with pytest.raises(Exception, match="derivative of an impact with a massless coordinate"):
        jax.block_until_ready(jax.grad(xi_M)(model.mass_matrix(q)))


# -- seed 003, §4.1: lower body -----------------------------------------------------------------------------
def test_seed003_lower_body(lower_body):
    mu, q4, (T, Tc, Ta, xi_I, xi_L, v_Sn) = lower_body
    valid = v_Sn > 0
    valid[0] = True  # μ = 0: the lift-off velocity of a massless leg is undetermined, see the next test
    # Lift-off fails only at long steps and heavy legs; for μ → 0 every step is valid (Fig. 2; μ = 0 below).
    assert not valid.all()
    bad_mu, bad_q4 = np.nonzero(~valid)
    assert mu[bad_mu].min() >= 0.5 and q4[bad_q4].min() >= deg(40.0)
    assert np.all(np.diff(valid.astype(int), axis=1) <= 0)  # once invalid at some q4, invalid beyond
    assert np.all(np.diff(valid.astype(int), axis=0) <= 0)  # and for heavier legs
    assert valid[1].all() and valid[:, : len(q4) // 2].all()
    # T_c⁻ is the loss and T⁻ = T_c⁻ + T_a⁻ (Fig. 3).
    np.testing.assert_allclose(Tc + Ta, T, rtol=1e-12)
    # Lower μ gives lower ξ_I (Fig. 4 top), over the valid region: strictly in steps of Δμ = 0.5; on the
    # finer grid ξ_I flattens just before lift-off fails (μ 1.75 → 2 at q4 = 37.5°: −1.7e-4).
    for j in range(len(q4)):
        ok = valid[:, j]
        assert np.all(np.diff(xi_I[::2][ok[::2], j]) > 0), j
        assert np.all(np.diff(xi_I[ok, j]) > -5e-4), j
    # Short steps are better: ξ_I and ξ_L grow with q4 (Fig. 4).
    assert np.all(np.diff(xi_I, axis=1) > 0) and np.all(np.diff(xi_L, axis=1) > 0)
    # Higher μ gives lower ξ_L at every configuration (Fig. 4 bottom), and lower T⁻ (text after Fig. 4).
    assert np.all(np.diff(xi_L, axis=0) < 0) and np.all(np.diff(T, axis=0) < 0)
    np.testing.assert_allclose(xi_L, Tc / (2 * 0.8 * np.sin(q4 / 2)), rtol=1e-12)  # eq. 23, L = 2 l sin(q4/2)


def test_seed003_mu_zero_stance_foot_lifts(unilateral_fn):
    """μ = 0 (massless legs): the stance foot carries no impulse whether it stays or lifts, so its post-impact
    velocity is undetermined — reported (error, or 'several consistent sets' with 'keep'); in the limit
    μ → 0⁺ it lifts off at every q4 in [10°, 50°] (seed 003, Fig. 2)."""
    q4 = jnp.asarray(deg(np.linspace(10.0, 50.0, 5)))
    s, _, M, both, qd = jax.tree.map(np.asarray, unilateral_fn(jnp.zeros(5), q4))
    np.testing.assert_array_equal(s.result._value, di.ImpactResults.several_consistent_sets._value)
    for i in range(5):
        np.testing.assert_allclose(_kkt(M[i], both[i, :3], qd[i])[1][2], 0.0, atol=1e-10)
    mu = jnp.full(5, 1e-6, dtype=q4.dtype)  # not weakly typed, as jnp.zeros: the same program
    s = jax.tree.map(np.asarray, unilateral_fn(mu, q4)[0])
    np.testing.assert_array_equal(s.result._value, 0)
    assert np.all(s.lifted_off) and np.all(s.unilateral_velocity > 0.05)
    model, q, qd = _state(jnp.array([0.0, 0.5, 30.0, 0.8, 0.4, 0.4]), q4[1], None)
    with pytest.raises(Exception, match="massless coordinate"):
        di.impact(model, q, qd, stick=("P_L",), unilateral=("P_R",))


# -- seed 003, §4.2: upper body -----------------------------------------------------------------------------
def test_seed003_upper_body(upper_body):
    mu_T, q5, (T, Tc, Ta, xi_I, xi_L, v_Sn) = upper_body
    assert np.all(v_Sn > 0)  # lift-off regardless of q5 and μ_T (Fig. 5)
    # highest for a light torso and a torso aligned with the colliding leg (Fig. 5)
    assert np.all(np.diff(v_Sn, axis=0) < 0) and np.all(v_Sn[1:, -1] > v_Sn[1:, 0])
    assert np.unravel_index(np.argmax(v_Sn[1:]), v_Sn[1:].shape) == (0, len(q5) - 1)
    np.testing.assert_allclose(T, T[0, 0], rtol=1e-12)  # T⁻ constant: ξ_I, ξ_L ∝ T_c⁻ (text before Fig. 7)
    # T_c⁻ smallest at q5 = 0 (torso aligned with the stance leg) and growing; T_a⁻ the opposite (Fig. 6) ...
    assert np.all(np.diff(Tc[1:], axis=1) > 0) and np.all(np.diff(Ta[1:], axis=1) < 0)
    # ... except μ_T = 0 (massless torso), where neither depends on q5.
    np.testing.assert_allclose(Tc[0], Tc[0, 0], rtol=1e-12)
    # Heavier torso, lower T_c⁻; the effect of μ_T shrinks as q5 grows, small at q5 = 30°.
    assert np.all(np.diff(Tc, axis=0) < 0)
    spread = Tc.max(axis=0) - Tc.min(axis=0)
    assert np.all(np.diff(spread) < 0) and spread[-1] < 0.05 * Tc[:, -1].min()
    np.testing.assert_allclose(xi_I, Tc / T, rtol=1e-12)


# -- unilateral contact (seed 003 eq. 4, seed 002 footnote 4) -----------------------------------------------
@pytest.fixture(scope="module")
def unilateral_fn():
    def f(mu, q4):
        model, q, qd = _state(jnp.stack([mu, (1 + mu) / 2, 30.0, 0.8, 0.4, 0.4]), q4, None)
        free = di.impact(model, q, qd, stick=("P_L",), unilateral=("P_R",), massless="keep", throw=False)
        stick = di.impact(model, q, qd, stick=("P_L",), unilateral=("P_R",), unilateral_tangent="stick",
                          massless="keep", throw=False)
        both = jnp.concatenate([model.contact_jacobian(q, "P_L"), model.contact_jacobian(q, "P_R")])
        return free, stick, model.mass_matrix(q), both, qd

    return jax.jit(jax.vmap(f))


def _kkt(M, A, qd):
    """Reference: numpy solve of the impulse–momentum KKT equations (seed 002, eqs. 4–5 with b⁺ = 0)."""
    n, m = A.shape[1], A.shape[0]
    K = np.block([[M, -A.T], [A, np.zeros((m, m))]])
    z = np.linalg.solve(K, np.concatenate([M @ qd, np.zeros(m)]))
    return z[:n], z[n:]


def test_unilateral_picks_the_consistent_set(unilateral_fn):
    mu = jnp.array([0.5, 1.0, 2.0, 2.0, 1.0])
    q4 = jnp.asarray(deg([20.0, 30.0, 30.0, 50.0, 50.0]))
    s, stick, M, both, qd = jax.tree.map(np.asarray, unilateral_fn(mu, q4))
    np.testing.assert_array_equal(s.result._value, 0)
    no_set = []
    for i in range(len(mu)):
        released, _ = _kkt(M[i], both[i, :2], qd[i])
        stays, lam_stays = _kkt(M[i], both[i, :3], qd[i])  # seed 003, eq. 4: B_S only (the foot may slide)
        _, lam_sticks = _kkt(M[i], both[i], qd[i])
        v_R = both[i, 2] @ released
        assert bool(s.lifted_off[i, 0]) == (v_R > 0)
        if v_R > 0:
            np.testing.assert_allclose(s.qdot_plus[i], released, atol=1e-12)
            np.testing.assert_allclose(s.impulses[i, 2:], 0.0)
            np.testing.assert_allclose(s.unilateral_velocity[i, 0], v_R, atol=1e-12)
            np.testing.assert_allclose(stick.qdot_plus[i], released, atol=1e-12)
        else:  # released would penetrate; staying pushes
            assert lam_stays[2] > 0
            np.testing.assert_allclose(s.qdot_plus[i], stays, atol=1e-12)
            np.testing.assert_allclose(s.impulses[i, :3], lam_stays, atol=1e-10)
            np.testing.assert_allclose(s.unilateral_velocity[i, 0], 0.0, atol=1e-12)
            no_set.append(lam_sticks[2] < 0)
            # A staying foot that must also stick would have to be pulled: no consistent set, reported.
            assert (stick.result._value[i] == di.ImpactResults.no_consistent_set._value) == (lam_sticks[2] < 0)
    assert len(no_set) >= 2 and all(no_set) and not s.lifted_off[:, 0].all()
    # Seed 002's layout (eqs. 8–9): the tangential row holds whether the foot stays or lifts.
    i = 3
    model, q, qd_i = _state(jnp.array([2.0, 1.5, 30.0, 0.8, 0.4, 0.4]), q4[i], None)
    always = di.impact(model, q, qd_i, stick=("P_L",), unilateral=("P_R",), unilateral_tangent="always")
    lifted, lam = _kkt(M[i], both[i, [0, 1, 3]], qd[i])
    _, lam_sticks = _kkt(M[i], both[i], qd[i])
    assert lam_sticks[2] < 0 and both[i, 2] @ lifted > 0 and bool(always.lifted_off[0])
    np.testing.assert_allclose(always.qdot_plus, lifted, atol=1e-12)
    np.testing.assert_allclose(always.impulses, [lam[0], lam[1], 0.0, lam[2]], atol=1e-10)


# -- partial blocking (seed 002, eqs. 5, 10–12, 24) ---------------------------------------------------------
def test_partial_blocking_parabola():
    """Blocking q5 at a post-impact rate w: ``ξ(w)`` is a parabola with its maximum at total blocking (w = 0)
    and curvature ``W_c[55]/T⁻`` (seed 002, eqs. 23–24)."""
    model, q, qd = _state(jnp.array([1.0, 1.0, 30.0, 0.8, 0.4, 0.4]), deg(30.0), deg(15.0))
    f = jax.jit(jax.vmap(lambda w: di.impact(model, q, qd, stick=("P_L",), blocked={"q5": w})))
    w = jnp.linspace(-1.5, 1.5, 7)
    s = f(w)
    np.testing.assert_allclose(s.qdot_plus[:, 4], w, atol=1e-13)
    A = np.concatenate([model.contact_jacobian(q, "P_L"), np.eye(5)[4:]])
    W_c = np.linalg.inv(A @ np.linalg.inv(model.mass_matrix(q)) @ A.T)
    T = float(s.T_minus[0])
    np.testing.assert_allclose(s.xi, s.xi[3] - 0.5 * W_c[2, 2] * np.asarray(w) ** 2 / T, rtol=1e-10)
    assert np.argmax(s.xi) == 3
    Mi = np.linalg.inv(model.mass_matrix(q))
    G = Mi @ A.T @ W_c
    expected = ((np.eye(5) - G @ A) @ qd)[None] + np.asarray(w)[:, None] * G[:, 2][None]  # seed 002, eq. 21
    np.testing.assert_allclose(s.qdot_plus, expected, atol=1e-12)


def test_blocked_active_drops_rows_in_one_program():
    """``blocked_active`` under ``vmap`` over every subset of three blocked coordinates (two at prescribed
    rates): each member against the closed form through ``M⁻¹`` with only its rows (seed 002, eqs. 20–22), the
    released coordinates' impulse slots zero (a mapping's slots follow the sorted coordinates); all three
    released, the plain sticking impact. Bad flags are errors naming the argument."""
    model, q, qd = _state(jnp.array([1.0, 1.0, 30.0, 0.8, 0.4, 0.4]), deg(30.0), deg(15.0))
    rates = {"q5": 0.7, "q4": 0.0, "q3": -0.2}  # slots in sorted order: q3, q4, q5
    subsets = np.array(np.meshgrid(*[[False, True]] * 3, indexing="ij")).reshape(3, -1).T  # (q5, q4, q3) flags
    s = jax.jit(jax.vmap(lambda a: di.impact(model, q, qd, stick=("P_L",), blocked=rates,
                                             blocked_active=dict(zip(rates, a)), throw=False)))(jnp.asarray(subsets))
    np.testing.assert_array_equal(s.result._value, di.ImpactResults.successful._value)
    M, J = np.asarray(model.mass_matrix(q)), np.asarray(model.contact_jacobian(q, "P_L"))
    Mi = np.linalg.inv(M)
    for k, flags in enumerate(subsets):
        on = [c for c, f in zip(rates, flags) if f]
        sorted_on = sorted(on)
        A = np.concatenate([J] + [np.eye(5)[[model.coordinate_names.index(c)]] for c in sorted_on])
        b = np.r_[0.0, 0.0, [rates[c] for c in sorted_on]]
        W_c = np.linalg.inv(A @ Mi @ A.T)
        G = Mi @ A.T @ W_c
        qdot_plus = (np.eye(5) - G @ A) @ qd + G @ b  # seed 002, eq. 21
        impulses = W_c @ (b - A @ qd)  # M (q̇⁺ − q̇⁻) = Aᵀ λ̄
        slots = np.zeros(5)
        slots[:2] = impulses[:2]
        for c, lam in zip(sorted_on, impulses[2:]):
            slots[2 + sorted(rates).index(c)] = lam
        np.testing.assert_allclose(s.qdot_plus[k], qdot_plus, atol=1e-12)
        np.testing.assert_allclose(s.impulses[k], slots, atol=1e-12 * np.max(np.abs(slots)))
    plain = di.impact(model, q, qd, stick=("P_L",))
    np.testing.assert_allclose(s.qdot_plus[0], plain.qdot_plus, atol=1e-13)
    with pytest.raises(ValueError, match="`blocked_active` names 'q2', which is not in `blocked`"):
        di.impact(model, q, qd, stick=("P_L",), blocked=("q3",), blocked_active={"q2": jnp.asarray(True)})
    with pytest.raises(TypeError, match=r"`blocked_active\['q3'\]` must be a boolean scalar"):
        di.impact(model, q, qd, stick=("P_L",), blocked=("q3",), blocked_active={"q3": jnp.asarray(1.0)})
    with pytest.raises(TypeError, match="`blocked_active` must be a mapping"):
        di.impact(model, q, qd, stick=("P_L",), blocked=("q3",), blocked_active=jnp.asarray([True]))


# -- restitution --------------------------------------------------------------------------------------------
def test_restitution_newton_equals_energetic():
    """``v_n⁺ = −e v_n⁻`` with no tangential slip; with ``v_t⁻ = 0`` (seed 003 assumption ii) the tangential
    impulse does no work and Newton's e equals Stronge's energetic ``e² = −W_rest/W_comp``; e = 1 conserves T."""
    model, q, qd = _state(jnp.array([1.0, 1.0, 30.0, 0.8, 0.4, 0.4]), deg(30.0), None)
    J = np.asarray(model.contact_jacobian(q, "P_L"))
    assert abs(J[1] @ qd) < 1e-14
    f = jax.jit(lambda e: di.impact(model, q, qd, stick=("P_L",), restitution={"P_L": e}))
    plastic = f(0.0)
    for e in (0.3, 1.0):
        s = f(e)
        np.testing.assert_allclose(J @ s.qdot_plus, [-e * J[0] @ qd, 0.0], atol=1e-13)
        w_comp, w_rest = plastic.T_plus - s.T_minus, s.T_plus - plastic.T_plus
        np.testing.assert_allclose(-w_rest / w_comp, e**2, rtol=1e-10)
    np.testing.assert_allclose(f(1.0).loss, 0.0, atol=1e-12)
    np.testing.assert_allclose(plastic.loss, plastic.Tc_minus, rtol=1e-13)


# -- Pinocchio cross-check (test-only dependency) ------------------------------------------------------------
def _pin_biped(pin, m=5.0, m_H=10.0, m_T=10.0, l=0.8, b=0.4, l_T=0.4):
    """Seed 003 biped in Pinocchio; its RZ joints turn counter-clockwise, so ``q_pin = [q1, q2, −q3, q4, q5]``."""
    model = pin.Model()
    point = lambda mass, y: pin.Inertia(mass, np.array([0.0, y, 0.0]), np.zeros((3, 3)))  # noqa: E731
    px = model.addJoint(0, pin.JointModelPX(), pin.SE3.Identity(), "q1")
    py = model.addJoint(px, pin.JointModelPY(), pin.SE3.Identity(), "q2")
    right = model.addJoint(py, pin.JointModelRZ(), pin.SE3.Identity(), "q3")
    model.appendBodyToJoint(right, point(m, l - b) + point(m_H, l), pin.SE3.Identity())
    hip = pin.SE3(np.eye(3), np.array([0.0, l, 0.0]))
    left = model.addJoint(right, pin.JointModelRZ(), hip, "q4")
    model.appendBodyToJoint(left, point(m, -b), pin.SE3.Identity())
    torso = model.addJoint(right, pin.JointModelRZ(), hip, "q5")
    model.appendBodyToJoint(torso, point(m_T, l_T), pin.SE3.Identity())
    foot = pin.SE3(np.eye(3), np.array([0.0, -l, 0.0]))
    model.addFrame(pin.Frame("P_L", left, 0, foot, pin.FrameType.OP_FRAME))
    return model


def test_matches_pinocchio_impulse_dynamics():
    pin = pytest.importorskip("pinocchio")
    model = _pin_biped(pin)
    data = model.createData()
    S = np.diag([1.0, 1.0, -1.0, 1.0, 1.0])
    biped = di.BipedWithTorso()
    q, qd0 = biped.pre_impact_state(deg(30.0), deg(10.0))
    f = jax.jit(lambda qd, e: di.impact(biped, q, qd, stick=("P_L",), restitution={"P_L": e}))
    # Pinocchio's restitution acts on every row: compare e > 0 only where v_t⁻ = 0 (seed 003 assumption ii).
    for qd, e in ((qd0 + jnp.array([0.1, -0.2, 0.3, 0.4, -0.5]), 0.0), (qd0, 0.5)):
        qp, vp = S @ np.asarray(q), S @ np.asarray(qd)
        J = pin.computeFrameJacobian(model, data, qp, model.getFrameId("P_L"), pin.LOCAL_WORLD_ALIGNED)[[1, 0]]
        v_plus = pin.impulseDynamics(model, data, qp, vp, J, e, 0.0)
        s = f(qd, e)
        np.testing.assert_allclose(s.qdot_plus, S @ v_plus, atol=1e-12)
        np.testing.assert_allclose(s.impulses, data.impulse_c, rtol=1e-12)


# -- gradients, vmap, jit -----------------------------------------------------------------------------------
def test_gradients_match_finite_differences():
    def f(x):
        mu, q4, w = x
        model, q, qd = _state(jnp.stack([mu, 1.0, 30.0, 0.8, 0.4, 0.4]), q4, None)
        s = di.impact(model, q, qd, stick=("P_L",), blocked={"q5": w})
        return jnp.stack([s.xi, s.impulses[0], s.qdot_plus[2]])

    x = jnp.array([1.0, deg(30.0), 0.3])
    fd = central_difference(jax.jit(f), x)
    fwd, rev = jax.jit(lambda x: (jax.jacfwd(f)(x), jax.jacrev(f)(x)))(x)
    np.testing.assert_allclose(fwd, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(rev, fd, rtol=1e-6, atol=1e-8)


def test_vmap_equals_loop_and_no_recompile(lower_body, caplog):
    _, q4s, (T, Tc, *_) = lower_body
    model, q, qd = _state(jnp.array([0.25, 0.625, 30.0, 0.8, 0.4, 0.4]), q4s[4], q4s[4] / 2)
    np.testing.assert_allclose(di.impact(model, q, qd, stick=("P_L",)).Tc_minus, Tc[1, 4], rtol=1e-12)
    model, q, qd = _state(jnp.array([0.5, 0.75, 30.0, 0.8, 0.4, 0.4]), q4s[5], q4s[5] / 2)
    with jax.log_compiles(), caplog.at_level("WARNING"):
        s = di.impact(model, q, qd, stick=("P_L",))
    np.testing.assert_allclose(s.Tc_minus, Tc[2, 5], rtol=1e-12)
    assert not [r for r in caplog.records if "impact" in r.getMessage()]


# -- bad input ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def posture():
    return _state(jnp.array([1.0, 1.0, 30.0, 0.8, 0.4, 0.4]), deg(30.0), None)


def test_redundant_constraints(posture):
    model, q, qd = posture
    M, J = model.mass_matrix(q), model.contact_jacobian(q, "P_L")
    A = jnp.concatenate([J, 2.0 * J[:1]])
    with pytest.raises(Exception, match="redundant"):
        di.constrained_impact(M, A, qd)
    s = jax.jit(lambda a: di.constrained_impact(M, a, qd, throw=False))(A)
    assert s.result == di.ImpactResults.redundant_constraints and np.all(np.isfinite(s.qdot_plus))
    with pytest.raises(Exception, match="redundant"):  # under vmap too
        jax.vmap(lambda a: di.constrained_impact(M, a, qd))(jnp.stack([A, A]))
    with pytest.raises(ValueError, match="once"):
        di.impact(model, q, qd, stick=("P_L", "P_L"))
    with pytest.raises(ValueError, match="twice"):
        di.impact(model, q, qd, stick=("P_L",), blocked=("q5", 4))


def test_contact_validation(posture):
    model, q, qd = posture
    with pytest.raises(Exception, match="not on the ground"):
        di.impact(model, q.at[3].add(0.05), qd, stick=("P_L",))
    with pytest.raises(Exception, match="not approaching"):
        di.impact(model, q, -qd, stick=("P_L",))
    with pytest.raises(Exception, match="qdot_minus.*NaN"):
        di.impact(model, q, qd.at[0].set(jnp.nan), stick=("P_L",))
    with pytest.raises(Exception, match="b_plus.*NaN"):
        di.constrained_impact(model.mass_matrix(q), model.contact_jacobian(q, "P_L"), qd, jnp.array([0.0, jnp.nan]))
    with pytest.raises(ValueError, match="unknown point"):
        di.impact(model, q, qd, stick=("foot",))
    with pytest.raises(ValueError, match="unknown coordinate"):
        di.impact(model, q, qd, stick=("P_L",), blocked=("q9",))
    with pytest.raises(ValueError, match="not in `stick`"):
        di.impact(model, q, qd, stick=("P_L",), restitution={"P_R": 0.5})
    with pytest.raises(Exception, match=r"restitution.*\[0, 1\]"):
        di.impact(model, q, qd, stick=("P_L",), restitution={"P_L": 1.5})
    with pytest.raises(ValueError, match="massless"):
        di.impact(model, q, qd, stick=("P_L",), massless="ignore")
    with pytest.raises(ValueError, match="unilateral_tangent"):
        di.impact(model, q, qd, stick=("P_L",), unilateral=("P_R",), unilateral_tangent="slip")
    with pytest.raises(ValueError, match="shape"):
        di.constrained_impact(model.mass_matrix(q), jnp.ones((2, 4)), qd)


def test_errors_under_jit_and_vmap(posture):
    model, q, qd = posture
    f = jax.jit(jax.vmap(lambda h: di.impact(model, q.at[1].set(h), qd, stick=("P_L",)).loss))
    assert np.all(np.isfinite(f(jnp.zeros(2))))
    with pytest.raises(Exception, match="not on the ground"):
        f(jnp.array([0.0, 0.1]))


def test_ground_check_scales_with_the_model():
    """``ground_tol`` is relative to the model's extent (joints, centres of mass, points), not to the distance
    between named points: a model with one named point accepts a contact left 2e-16 m off by rounding."""
    tree = di.PlanarTree.build(3, [di.Body("rod", None, 2, 1.0, 0.1, (0.5, 0.0))], [di.Point("tip", 0, (1.0, 0.0))])
    model = di.TreeModel(tree)
    q, qd = jnp.array([0.0, 1.0, jnp.pi]), jnp.array([0.3, -1.0, 0.5])  # the rod hangs, its tip at y ≈ 0
    q = q.at[1].add(-model.point(q, "tip")[1] + 2e-16)  # |y| = 2.2e-16
    s = di.impact(model, q, qd, stick=("tip",))
    np.testing.assert_allclose(model.contact_jacobian(q, "tip") @ s.qdot_plus, 0.0, atol=1e-15)
    with pytest.raises(Exception, match="not on the ground"):
        di.impact(model, q.at[1].add(1e-5), qd, stick=("tip",))  # 1e-5 m off a 1 m rod
