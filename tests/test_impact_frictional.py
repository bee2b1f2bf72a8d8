"""Frictional single-point impact (seed 000, §3): Pinocchio cross-check, the paper's grid (§5.1–5.3),
the P_n-space evolution against a numerical Coulomb ODE (scipy), the paper's closed forms written out,
property tests, gradients against finite differences, and bad input."""

import math

import equinox as eqx
import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import jax
import jax.numpy as jnp
import numpy as np
import pinocchio as pin
import pytest
from hypothesis import assume, given
from scipy.integrate import solve_ivp

import difimpact as di

from .helpers import central_difference

MUS = (0.5, 0.75, 1.0)
Q3_DEG = tuple(range(3, 22, 3))
Q5DOTS = (-0.2, 0.0, 0.2, 0.4)
REST_TOL = 1e-9


def tip(mu):
    """The crutch tip's law: Coulomb friction ``mu`` (the contact is named by its point, ``"Q"``)."""
    return di.Coulomb(mu)


@pytest.fixture(scope="module")
def walker():
    return di.CrutchWalker()


@pytest.fixture(scope="module")
def grid(walker):
    """Seed 000's grid, vmapped: arrays indexed [mu, q3, q5dot]."""
    mu, q3, q5dot = (jnp.asarray(a, float).ravel() for a in np.meshgrid(
        MUS, np.radians(Q3_DEG), Q5DOTS, indexing="ij"))
    q, qdot = jax.vmap(walker.pre_impact_state)(q3, q5dot)
    res = jax.vmap(lambda q_, qd_, mu_: di.frictional_impact(walker, q_, qd_, "Q", friction=tip(mu_)))(q, qdot, mu)
    shape = (len(MUS), len(Q3_DEG), len(Q5DOTS))
    return dict(q=q, qdot=qdot, mu=mu, res=res, shape=shape)


# -- Pinocchio cross-check ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pin_walker(walker):
    """Pinocchio's model of the walker's URDF (x-z plane, hinges about +y, the tip a frame named Q)."""
    model = pin.buildModelFromXML(di.to_urdf(walker))
    return model, model.createData()


def test_mass_matrix_matches_pinocchio_crba(walker, pin_walker, rng):
    model, data = pin_walker
    mass_matrix = jax.jit(lambda q: walker.mass_matrix(q))
    for _ in range(5):
        q = np.concatenate([rng.uniform(-1, 1, 2), rng.uniform(-np.pi, np.pi, 4)])
        expected = pin.crba(model, data, q)
        expected = np.triu(expected) + np.triu(expected, 1).T
        np.testing.assert_allclose(mass_matrix(jnp.asarray(q)), expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("mu", [0.75, 1.0])
def test_sticking_end_matches_pinocchio_impulse_dynamics(walker, pin_walker, mu):
    """q3 = 12°, q̇5 = −0.2 rad/s ends sticking (μ > μ_c): the end state is the bilateral impact of
    Pinocchio with both contact directions blocked (seed 000, eq. 10)."""
    model, data = pin_walker
    q, qdot = walker.pre_impact_state(math.radians(12.0), -0.2)
    res = di.frictional_impact(walker, q, qdot, "Q", friction=tip(jnp.asarray(mu)))
    frame = model.getFrameId("Q")
    J = pin.computeFrameJacobian(model, data, np.asarray(q), frame, pin.LOCAL_WORLD_ALIGNED)
    np.testing.assert_allclose(pin.updateFramePlacement(model, data, frame).translation[2], 0.0, atol=1e-10)
    A = J[[2, 0]]  # normal (z, our y), tangential (x)
    np.testing.assert_allclose(A, walker.contact_jacobian(q, "Q"), atol=1e-12)
    qdot_plus = pin.impulseDynamics(model, data, np.asarray(q), np.asarray(qdot), A, 0.0, 0.0)
    assert res.regime_name in ("stick", "slide-stick")
    np.testing.assert_allclose(res.qdot_plus, qdot_plus, rtol=0, atol=1e-9)
    np.testing.assert_allclose([res.normal_impulse, res.tangential_impulse], data.impulse_c, rtol=0, atol=1e-9)
    # Check values of ../shared/CONVENTIONS.md.
    np.testing.assert_allclose(
        [res.normal_impulse, res.tangential_impulse, res.mu_c], [14.16, -9.77, 0.675], atol=6e-3)


# -- the paper's grid (seed 000, §5) ---------------------------------------------------------------

def test_grid_regimes_follow_section_5_1(grid):
    res, shape = grid["res"], grid["shape"]
    regime = res.regime_name.reshape(shape)
    stuck = np.isin(regime, ("stick", "slide-stick"))
    mu_c = np.asarray(res.mu_c).reshape(shape)[0, :, 0]
    assert np.all(np.asarray(res.result == di.FrictionalImpactResults.successful))
    # Fig. 3: μ_c grows with q3; μ = 0.75 lies above the first five and below the last two; 0.5 < all < 1.
    assert np.all(np.diff(mu_c) > 0)
    assert np.all((mu_c > 0.5) & (mu_c < 1.0))
    assert np.all(mu_c[:5] < 0.75) and np.all(mu_c[5:] > 0.75)
    assert not stuck[0].any()  # μ = 0.5: sliding throughout
    np.testing.assert_array_equal(stuck[1], np.broadcast_to((np.asarray(Q3_DEG) <= 15)[:, None], shape[1:]))
    assert stuck[2].all()
    v_plus = np.einsum("kij,kj->ki", np.asarray(res.jacobian), np.asarray(res.qdot_plus))
    np.testing.assert_allclose(v_plus[:, 0], 0.0, atol=1e-12)
    vt_plus = v_plus[:, 1].reshape(shape)
    assert np.all(np.abs(vt_plus[0]) > 1e-3)
    np.testing.assert_allclose(vt_plus[stuck], 0.0, atol=1e-12)
    # Fig. 13 (μ = 0.5, q̇5 = 0, q3 = 21°: v_t⁻ = 0) slides immediately; Fig. 14 (v_t⁻ < 0) reverses;
    # Fig. 15 (μ = 0.75, q3 = 12°, v_t⁻ < 0) slides, then sticks.
    assert regime[0, -1, 1] == "slide-from-rest"
    assert regime[0, -1, 2] == "slide-reversal"
    assert regime[1, 3, 2] == "slide-stick"
    # Fig. 16/17 (μ = 0.75, v_t⁻ = 0): sticking slightly above μ_c, immediate sliding slightly below.
    assert regime[1, 4, 1] == "stick"
    assert regime[1, 5, 1] == "slide-from-rest"


def test_grid_impulses_and_works_follow_sections_5_2_5_3(grid, walker):
    res, shape = grid["res"], grid["shape"]
    assert np.all(np.asarray(res.tangential_impulse) < 0)
    pn, pt, mu = (np.asarray(a) for a in (res.normal_impulse, res.tangential_impulse, grid["mu"]))
    assert np.all(pn > 0) and np.all(np.abs(pt) <= mu * pn * (1 + 1e-12))
    # Upright postures give larger |P_n|, |P_t|, |W_n| (§5.2, §5.3); from 3° to 21° |W_n| "may" fall by more
    # than half: it does for every q̇5 at μ = 0.5 and 0.75, and at μ = 1 it falls by 49–54 %.
    for x in (pn, pt, np.asarray(res.normal_work)):
        assert np.all(np.diff(np.abs(x).reshape(shape), axis=1) < 0)
    wn = np.abs(np.asarray(res.normal_work)).reshape(shape)
    ratio = wn[:, -1] / wn[:, 0]
    assert np.all(ratio[:2] < 0.5) and np.all(ratio[2] < 0.55) and np.any(ratio[2] < 0.5)
    dT = jax.vmap(walker.kinetic_energy)(grid["q"], res.qdot_plus) - jax.vmap(walker.kinetic_energy)(
        grid["q"], grid["qdot"])
    np.testing.assert_allclose(res.energy_change, dT, rtol=1e-12, atol=1e-12)
    assert np.all(np.asarray(dT) < 0)
    wt = np.asarray(res.tangential_work).reshape(shape)
    regime = res.regime_name.reshape(shape)
    np.testing.assert_allclose(wt[regime == "stick"], 0.0, atol=1e-12)
    assert np.all(np.abs(wt[1:]) < wn[1:])  # "well below" the normal work for μ ≥ 0.75 (§5.3)


def test_vmap_equals_loop(grid, walker):
    for k in (0, 37, 83):
        one = di.frictional_impact(walker, grid["q"][k], grid["qdot"][k], "Q", friction=tip(grid["mu"][k]))
        batched = jax.tree_util.tree_map(lambda x: x[k], grid["res"])
        for a, b in zip(jax.tree_util.tree_leaves(one), jax.tree_util.tree_leaves(batched)):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


# -- independent route: Coulomb's law integrated numerically in P_n --------------------------------

def coulomb_ode(M, a_n, a_t, qdot_minus, mu):
    """Integrate dq̇/dP_n = M⁻¹(A_nᵀ + A_tᵀ dP_t/dP_n) with scipy until v_n = 0.

    Friction law (set-valued Coulomb): sliding, dP_t/dP_n = −μ sign(v_t); at v_t = 0, the value in
    [−μ, μ] that keeps v_t = 0 if there is one, else the bound (clip), after which the contact slides in
    the direction in which v_t then grows. Each phase is an event-terminated solve_ivp.
    Returns a callable P_n ↦ (q̇, P_t, W_n, W_t) and the final P_n.
    """
    Minv_A = np.linalg.solve(M, np.stack([a_n, a_t]).T)
    w_nt, w_tt = a_t @ Minv_A[:, 0], a_t @ Minv_A[:, 1]
    y = np.concatenate([qdot_minus, [0.0, 0.0, 0.0]])  # q̇, P_t, W_n, W_t
    p0, pieces = 0.0, []
    v_t = a_t @ qdot_minus
    sliding = abs(v_t) > REST_TOL * abs(a_n @ qdot_minus)
    sigma, rate = np.sign(v_t), -mu * np.sign(v_t)
    for _ in range(4):
        if not sliding:
            rate = float(np.clip(-w_nt / w_tt, -mu, mu))
            sigma = np.sign(w_nt + rate * w_tt)
            sliding = abs(w_nt + rate * w_tt) > 1e-12 * w_tt

        def rhs(p, y, rate=rate):
            qd = y[:-3]
            return np.concatenate([Minv_A[:, 0] + rate * Minv_A[:, 1], [rate, a_n @ qd, rate * (a_t @ qd)]])

        def normal_end(p, y):
            return a_n @ y[:-3]

        def stick(p, y, sigma=sigma):  # v_t back to zero from the sliding side
            return sigma * (a_t @ y[:-3])

        normal_end.terminal = stick.terminal = True
        normal_end.direction, stick.direction = 1.0, -1.0
        sol = solve_ivp(rhs, (p0, p0 + 1e4), y, method="DOP853", rtol=1e-13, atol=1e-13, dense_output=True,
                        events=[normal_end, stick] if sliding else [normal_end])
        pieces.append((p0, sol.t[-1], sol.sol))
        p0, y = sol.t[-1], sol.y[:, -1]
        if sol.t_events[0].size:
            break
        sliding = False

    def at(p):
        assert p <= p0 * (1 + 1e-12), "beyond the end of the impact"
        lo, hi, f = next((piece for piece in pieces if p <= piece[1]), pieces[-1])
        return f(min(max(p, lo), hi))

    return at, p0


def test_closed_forms_and_path_agree_with_numerical_coulomb_ode(grid, walker):
    res = grid["res"]
    path = jax.vmap(di.impulse_space_path)(res)
    M = np.asarray(jax.vmap(walker.mass_matrix)(grid["q"]))
    for k in range(len(grid["mu"])):
        A = np.asarray(res.jacobian[k])
        at, pn_end = coulomb_ode(M[k], A[0], A[1], np.asarray(grid["qdot"][k]), float(grid["mu"][k]))
        np.testing.assert_allclose(res.normal_impulse[k], pn_end, rtol=1e-9, atol=1e-9)
        end = at(pn_end)
        got = np.concatenate([res.qdot_plus[k], jnp.stack([res.tangential_impulse[k], res.normal_work[k],
                                                           res.tangential_work[k]])])
        np.testing.assert_allclose(got, end, rtol=0, atol=1e-9)
        for j in range(0, path.normal_impulse.shape[1], 20):
            ref = at(float(path.normal_impulse[k, j]))
            np.testing.assert_allclose(path.qdot[k, j], ref[:-3], atol=1e-9)
            np.testing.assert_allclose(path.velocity[k, j], A @ ref[:-3], atol=1e-9)
            np.testing.assert_allclose([path.tangential_impulse[k, j], path.normal_work[k, j], path.tangential_work[k, j]],
                                       ref[-3:], atol=1e-9)
        np.testing.assert_allclose(path.normal_impulse[k, -1], res.normal_impulse[k], rtol=1e-15)
        assert float(res.switch_impulse[k]) in np.asarray(path.normal_impulse[k])


# -- the paper's closed forms, written out ---------------------------------------------------------

def paper_closed_forms(M, a_n, a_t, qdot, mu, regime):
    """Seed 000, eqs. 10, 11, 18, 21–25, 28–32 for the end state (P_n, P_t, q̇⁺, W_n, W_t)."""
    Mi = np.linalg.inv(M)
    A = np.stack([a_n, a_t])
    v_t = a_t @ qdot
    if regime in ("stick", "slide-stick"):
        P = -np.linalg.solve(A @ Mi @ A.T, A @ qdot)  # eq. 10
        qdot_plus = (np.eye(len(qdot)) - Mi @ A.T @ np.linalg.solve(A @ Mi @ A.T, A)) @ qdot  # eq. 11
        if regime == "slide-stick":  # W_n, W_t need the path: eqs. 15–16 are not closed here
            return P[0], P[1], qdot_plus, None, None
        wn = -0.5 * a_n @ Mi @ (a_n - a_t * (a_t @ Mi @ a_n) / (a_t @ Mi @ a_t)) * P[0] ** 2  # eq. 18
        return P[0], P[1], qdot_plus, wn, 0.0
    if regime in ("slide", "slide-from-rest"):
        s = np.sign(v_t) if regime == "slide" else np.sign(a_t @ Mi @ a_n)
        b = Mi @ (a_n - mu * a_t * s)
        pn = -(a_n @ qdot) / (a_n @ b)  # eq. 22
        qdot_plus = qdot + b * pn  # eq. 21
        wn = -0.5 * (a_n @ b) * pn**2  # eq. 24
        wt = -mu * (a_t @ qdot) * s * pn - 0.5 * mu * (a_t @ b) * s * pn**2  # eq. 25
        return pn, -mu * s * pn, qdot_plus, wn, wt
    s = np.sign(v_t)
    b1, b2 = Mi @ (a_n - mu * a_t * s), Mi @ (a_n + mu * a_t * s)
    p1 = -v_t / (a_t @ b1)  # eq. 28
    p2 = -(a_n - (a_n @ b1) * a_t / (a_t @ b1)) @ qdot / (a_n @ b2)  # eq. 29
    qi = qdot + b1 * p1
    qdot_plus = qi + b2 * p2  # eq. 30
    wn = a_n @ (qdot * p1 + qi * p2) + 0.5 * a_n @ (b1 * p1**2 + b2 * p2**2)  # eq. 31
    wt = -mu * (a_t @ qdot) * s * p1 - 0.5 * mu * (a_t @ (b1 * p1**2 - b2 * p2**2)) * s  # eq. 32
    return p1 + p2, -mu * s * (p1 - p2), qdot_plus, wn, wt


def test_grid_matches_paper_closed_forms(grid, walker):
    res = grid["res"]
    M = np.asarray(jax.vmap(walker.mass_matrix)(grid["q"]))
    seen = set()
    for k in range(len(grid["mu"])):
        name = str(res.regime_name[k])
        seen.add(name)
        A = np.asarray(res.jacobian[k])
        pn, pt, qdot_plus, wn, wt = paper_closed_forms(M[k], A[0], A[1], np.asarray(grid["qdot"][k]),
                                                      float(grid["mu"][k]), name)
        np.testing.assert_allclose([res.normal_impulse[k], res.tangential_impulse[k]], [pn, pt], atol=1e-10)
        np.testing.assert_allclose(res.qdot_plus[k], qdot_plus, atol=1e-10)
        if wn is not None:
            np.testing.assert_allclose([res.normal_work[k], res.tangential_work[k]], [wn, wt], atol=1e-10)
    assert seen == {"stick", "slide", "slide-reversal", "slide-stick", "slide-from-rest"}


# -- properties over random systems ----------------------------------------------------------------

N = 4
_map = eqx.filter_jit(lambda M, a_n, a_t, qd, mu: di.frictional_impact_map(M, a_n, a_t, qd, mu, throw=False))


@st.composite
def random_impacts(draw):
    floats = st.floats(-1.0, 1.0)
    L = draw(hnp.arrays(float, (N, N), elements=floats))
    M = L @ L.T + 0.1 * np.eye(N)
    a_n, v, qd = (draw(hnp.arrays(float, (N,), elements=floats)) for _ in range(3))
    a_n = a_n + np.eye(N)[draw(st.integers(0, N - 1))]
    v = v + np.eye(N)[draw(st.integers(0, N - 1))]
    v = v - (v @ a_n) / (a_n @ a_n) * a_n
    assume(np.linalg.norm(v) > 0.1)
    # A_t = c A_n + (part orthogonal to A_n): rows independent, any μ_c.
    a_t = draw(st.floats(-2.0, 2.0)) * a_n + draw(st.floats(0.2, 1.0)) * v / np.linalg.norm(v)
    qd = qd - (a_n @ qd + draw(st.floats(0.05, 2.0))) / (a_n @ a_n) * a_n  # v_n⁻ < 0
    if draw(st.booleans()):  # start at tangential rest, keeping v_n⁻ < 0
        B = np.stack([a_n, a_t])
        qd = qd - B.T @ np.linalg.solve(B @ B.T, np.array([0.0, a_t @ qd]))
    mu = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0, 3.0]) | st.floats(0.0, 3.0))
    return M, a_n, a_t, qd, mu


@given(random_impacts())
def test_properties(case):
    M, a_n, a_t, qd, mu = case
    res = _map(M, a_n, a_t, qd, mu)
    assert res.result == di.FrictionalImpactResults.successful
    pn, pt = float(res.normal_impulse), float(res.tangential_impulse)
    assert pn >= 0 and abs(pt) <= mu * pn * (1 + 1e-12) + 1e-14
    dT = 0.5 * res.qdot_plus @ M @ res.qdot_plus - 0.5 * qd @ M @ qd
    scale = 1e-10 * max(1.0, 0.5 * qd @ M @ qd)
    assert dT <= scale
    np.testing.assert_allclose(res.energy_change, dT, atol=scale)
    np.testing.assert_allclose(a_n @ res.qdot_plus, 0.0, atol=1e-10 * max(1.0, abs(a_n @ qd)))
    at, pn_end = coulomb_ode(M, a_n, a_t, qd, mu)
    np.testing.assert_allclose(pn, pn_end, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(np.concatenate([res.qdot_plus, [pt, res.normal_work, res.tangential_work]]),
                               at(pn_end), rtol=1e-8, atol=1e-9)


def test_accelerating_approach_while_sliding_ends_sticking():
    """k_σ = A_n M⁻¹(A_n − μσA_t)ᵀ < 0: eq. 22 would give a negative impulse; v_t reaches zero first and the
    impact ends sticking with a positive impulse (module docstring)."""
    W = np.array([[1.0, 0.8], [0.8, 1.0]])  # w_nn, w_nt, w_tt with M = W⁻¹, A = I
    mu, qd = 2.0, np.array([-1.0, 0.5])  # σ = +1, k = 1 − 2·0.8 < 0
    res = _map(np.linalg.inv(W), np.eye(2)[0], np.eye(2)[1], qd, mu)
    assert res.regime_name == "slide-stick" and float(res.normal_impulse) > 0
    assert -(qd[0]) / (W[0, 0] - mu * W[0, 1]) < 0  # the naive eq. 22
    at, pn_end = coulomb_ode(np.linalg.inv(W), np.eye(2)[0], np.eye(2)[1], qd, mu)
    np.testing.assert_allclose(res.normal_impulse, pn_end, rtol=1e-10)


def test_approach_not_stopped_is_reported():
    """A Delassus matrix that is not positive definite (here M indefinite): sticking from rest would need
    a negative normal impulse. The public map refuses such an M up front; the map behind it, given one,
    reports ``approach_not_stopped`` with zero, finite impulses."""
    from difimpact._impact.frictional import _map as unchecked

    W = np.array([[1.0, 2.0], [2.0, 1.0]])
    args = (np.linalg.inv(W), np.eye(2)[0], np.eye(2)[1], np.array([-1.0, 0.0]), 3.0)
    res = unchecked(jnp.asarray(args[0]), *args[1:], 1e-9, False)
    assert res.result == di.FrictionalImpactResults.approach_not_stopped
    assert float(res.normal_impulse) == 0.0 and np.all(np.isfinite(res.qdot_plus))
    with pytest.raises(eqx.EquinoxRuntimeError, match="cannot stop the normal approach"):
        unchecked(jnp.asarray(args[0]), *args[1:], 1e-9, True)
    with pytest.raises(ValueError, match="`M` must be positive definite"):
        di.frictional_impact_map(*args)
    with pytest.raises(eqx.EquinoxRuntimeError, match="`M` must be positive definite"):
        _map(*args)


# -- gradients -------------------------------------------------------------------------------------

def test_gradients_match_finite_differences(walker):
    """d(ΔT, P_n)/d(q3, μ) through the posture solve and the impact map, inside three regimes."""

    def outputs(x, q5dot):
        q, qdot = walker.pre_impact_state(x[0], q5dot)
        res = di.frictional_impact(walker, q, qdot, "Q", friction=tip(x[1]))
        return jnp.stack([res.energy_change, res.normal_impulse]), res.regime

    f = jax.jit(outputs)
    jac = jax.jit(jax.jacrev(lambda x, q5dot: outputs(x, q5dot)[0]))
    cases = {"slide-stick": (12.0, -0.2, 0.75), "slide": (21.0, -0.2, 0.5), "slide-reversal": (9.0, 0.4, 0.5)}
    for name, (q3_deg, q5dot, mu) in cases.items():
        x, q5dot = jnp.array([math.radians(q3_deg), mu]), jnp.asarray(q5dot)
        assert di.FrictionalRegime[f(x, q5dot)[1]] == name
        got = jac(x, q5dot)
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, central_difference(lambda y: f(y, q5dot)[0], x), rtol=1e-6, atol=1e-7)


# -- bad input -------------------------------------------------------------------------------------

def test_bad_input(walker):
    """Structure and static values raise ValueError while tracing; traced values inside the jitted entry
    point raise EquinoxRuntimeError with the same message (STYLE.md, two tiers)."""
    q, qdot = walker.pre_impact_state(math.radians(12.0), -0.2)
    runtime = eqx.EquinoxRuntimeError
    with pytest.raises(runtime, match="not on the ground"):
        di.frictional_impact(walker, q.at[1].set(0.1), qdot, "Q", friction=tip(0.75))
    with pytest.raises(runtime, match="must approach the ground"):
        di.frictional_impact(walker, q, -qdot, "Q", friction=tip(0.75))
    with pytest.raises(runtime, match="`qdot_minus` contains NaN"):
        di.frictional_impact(walker, q, qdot.at[2].set(jnp.nan), "Q", friction=tip(0.75))
    with pytest.raises(ValueError, match="`mu` must be non-negative"):
        di.frictional_impact(walker, q, qdot, "Q", friction=tip(jnp.asarray(-0.1)))
    with pytest.raises(ValueError, match="`mu` must be non-negative"):
        di.frictional_impact_map(walker.mass_matrix(q), *walker.contact_jacobian(q, "Q"), qdot, -0.1)
    with pytest.raises(ValueError, match="`qdot_minus` must have shape"):
        di.frictional_impact(walker, q, qdot[:5], "Q", friction=tip(0.75))
    with pytest.raises(ValueError, match="unknown point"):
        di.frictional_impact(walker, q, qdot, "Z", friction=di.Coulomb(0.75))
    with pytest.raises(ValueError, match="`num` must be at least 2"):
        di.impulse_space_path(di.frictional_impact(walker, q, qdot, "Q", friction=tip(0.75)), num=1)
    M = walker.mass_matrix(q)
    with pytest.raises(ValueError, match="`M` must be a square matrix"):
        di.frictional_impact_map(M[:5], jnp.ones(6), jnp.ones(6), qdot, 0.5)
    with pytest.raises(ValueError, match="tangential row must be nonzero"):
        di.frictional_impact_map(M, jnp.ones(6), jnp.zeros(6), qdot, 0.5)
    with pytest.raises(ValueError, match="must approach the ground"):
        di.frictional_impact_map(M, *walker.contact_jacobian(q, "Q"), -qdot, 0.5)
    batch = jnp.stack([qdot, -qdot])
    with pytest.raises(runtime, match="must approach the ground"):
        jax.vmap(lambda qd: di.frictional_impact(walker, q, qd, "Q", friction=tip(jnp.asarray(0.5))))(batch)
