"""Properties of `solve_nlp` beyond single published problems: random convex QPs against their exact KKT points and
scipy's SLSQP, Hock–Schittkowski problems with known optima, and problems without a solution (infeasible,
unbounded) flagged, never "successful".

Compiling is the cost: each family shares its shapes and functions, its data are `params`, and it is solved by one
`jax.jit(jax.vmap(...))` (one program for the twelve QPs)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize

import difimpact as di

# Random convex QPs: min ½ xᵀHx + qᵀx subject to Ax = b, Gx ≤ h and −1 ≤ x ≤ 1, H SPD. The unconstrained minimum
# lies mostly outside the box (q large), so that bounds and inequalities are active in most problems.
N, M_EQ, M_IN = 5, 2, 3
SEEDS = tuple(range(12))


def _qp(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((N, N))
    A = rng.standard_normal((M_EQ, N))
    G = rng.standard_normal((M_IN, N))
    x_feasible = rng.uniform(-0.5, 0.5, N)  # strictly inside every constraint: a Slater point
    assert np.linalg.matrix_rank(A) == M_EQ
    return dict(H=B @ B.T + 0.5 * np.eye(N), q=5.0 * rng.standard_normal(N), A=A, b=A @ x_feasible, G=G,
                h=G @ x_feasible + rng.uniform(0.1, 1.0, M_IN))


def _qp_objective(x, p):
    return 0.5 * x @ p["H"] @ x + p["q"] @ x


def _qp_equality(x, p):
    return p["A"] @ x - p["b"]


def _qp_inequality(x, p):
    return p["h"] - p["G"] @ x  # ≥ 0


@pytest.fixture(scope="module")
def qps():
    problems = [_qp(s) for s in SEEDS]
    batch = jax.tree.map(lambda *a: jnp.stack(a), *problems)
    solve = jax.jit(jax.vmap(lambda p: di.solve_nlp(_qp_objective, jnp.zeros(N), p, equality=_qp_equality,
                                                    inequality=_qp_inequality, lower=-1.0, upper=1.0, throw=False)))
    sol = solve(batch)
    return problems, [jax.tree.map(lambda a, i=i: a[i], sol) for i in range(len(SEEDS))]


def _kkt_point(p: dict, x, active_tol=1e-6):
    """The exact solution of the QP with the constraints active at `x` held as equalities (one linear solve),
    certified optimal: feasible, with non-negative multipliers of the active inequalities and bounds (for a convex
    QP the KKT conditions are sufficient). Returns ``(x*, λ_eq, μ_ineq (0 where inactive), z_L − z_U)``."""
    eye = np.eye(N)
    rows, rhs, kinds = [], [], []
    for i in range(N):
        if x[i] > 1 - active_tol:
            rows, rhs, kinds = rows + [eye[i]], rhs + [1.0], kinds + [("upper", i)]
        if x[i] < -1 + active_tol:
            rows, rhs, kinds = rows + [-eye[i]], rhs + [1.0], kinds + [("lower", i)]
    for j in range(M_IN):
        if p["h"][j] - p["G"][j] @ x < active_tol:
            rows, rhs, kinds = rows + [p["G"][j]], rhs + [p["h"][j]], kinds + [("inequality", j)]
    C = np.reshape(rows, (len(rows), N))
    E = np.vstack([p["A"], C])
    m = E.shape[0]
    K = np.block([[p["H"], E.T], [E, np.zeros((m, m))]])
    solution = np.linalg.solve(K, np.concatenate([-p["q"], p["b"], rhs]))
    x_star, nu, mu = solution[:N], solution[N:N + M_EQ], solution[N + M_EQ:]
    assert np.all(mu >= -1e-10), (kinds, mu)  # dual feasibility
    assert np.all(np.abs(x_star) <= 1 + 1e-12) and np.all(p["G"] @ x_star <= p["h"] + 1e-12)  # primal
    mu_ineq, z = np.zeros(M_IN), np.zeros(N)
    for (kind, i), v in zip(kinds, mu):
        if kind == "inequality":
            mu_ineq[i] = v
        else:
            z[i] = v if kind == "lower" else -v
    return x_star, nu, mu_ineq, z


def test_random_convex_qps_reach_their_kkt_points(qps):
    """Each QP's solution equals the exact KKT point of its active set to 1e-8, with the multipliers (the
    Lagrangian ``f + λᵀ (c, d − s)`` with ``d = h − Gx ≥ 0``: ``λ_d = −μ``), and the set exercises both kinds of
    inequality."""
    problems, solutions = qps
    active_bounds = active_inequalities = 0
    for p, sol in zip(problems, solutions):
        assert sol.result == di.NLPResults.successful
        x_star, nu, mu, z = _kkt_point(p, np.asarray(sol.x))
        np.testing.assert_allclose(sol.x, x_star, atol=1e-8)
        # f − f* ≈ μ (the barrier's floor, tol / 10 = 1e-10) for each active inequality or bound
        np.testing.assert_allclose(sol.value, _qp_objective(x_star, p), rtol=0, atol=1e-9)
        np.testing.assert_allclose(sol.multipliers, np.concatenate([nu, -mu]), atol=1e-7)
        np.testing.assert_allclose(sol.bound_multipliers, z, atol=1e-7)
        assert sol.constraint_violation < 1e-10
        active_bounds += np.count_nonzero(z)
        active_inequalities += np.count_nonzero(mu)
    assert active_bounds >= 4 and active_inequalities >= 4, (active_bounds, active_inequalities)


def test_random_convex_qps_against_slsqp(qps):
    problems, solutions = qps
    for p, sol in zip(problems, solutions):
        ref = scipy.optimize.minimize(lambda x, p=p: _qp_objective(x, p), np.zeros(N), method="SLSQP",
                                      jac=lambda x, p=p: p["H"] @ x + p["q"], bounds=[(-1.0, 1.0)] * N, tol=1e-12,
                                      constraints=[{"type": "eq", "fun": lambda x, p=p: _qp_equality(x, p)},
                                                   {"type": "ineq", "fun": lambda x, p=p: _qp_inequality(x, p)}])
        assert ref.success, ref.message
        np.testing.assert_allclose(sol.value, ref.fun, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(sol.x, ref.x, atol=1e-5)


# Hock & Schittkowski, *Test Examples for Nonlinear Programming Codes*, Lecture Notes in Economics and
# Mathematical Systems 187, Springer 1981: the problems' starting points and published optima (HS071 is in
# test_nlp.py).
def _hs21():
    """HS21: min 0.01 x₁² + x₂² − 100, 10 x₁ − x₂ ≥ 10, 2 ≤ x₁ ≤ 50, −50 ≤ x₂ ≤ 50, from the infeasible
    (−1, −1); x* = (2, 0), f* = −99.96 (a bound active)."""
    return dict(objective=lambda x, p: 0.01 * x[0] ** 2 + x[1] ** 2 - 100.0, x0=[-1.0, -1.0],
                inequality=lambda x, p: jnp.array([10.0 * x[0] - x[1] - 10.0]), lower=jnp.array([2.0, -50.0]),
                upper=50.0), [2.0, 0.0], -99.96


def _hs35():
    """HS35 (Beale): min 9 − 8x₁ − 6x₂ − 4x₃ + 2x₁² + 2x₂² + x₃² + 2x₁x₂ + 2x₁x₃, x₁ + x₂ + 2x₃ ≤ 3, x ≥ 0, from
    (0.5, 0.5, 0.5); x* = (4/3, 7/9, 4/9), f* = 1/9 (the inequality active)."""

    def f(x, p):
        return (9.0 - 8.0 * x[0] - 6.0 * x[1] - 4.0 * x[2] + 2.0 * x[0] ** 2 + 2.0 * x[1] ** 2 + x[2] ** 2
                + 2.0 * x[0] * x[1] + 2.0 * x[0] * x[2])

    return dict(objective=f, x0=[0.5, 0.5, 0.5], inequality=lambda x, p: jnp.array([3.0 - x[0] - x[1] - 2.0 * x[2]]),
                lower=0.0), [4 / 3, 7 / 9, 4 / 9], 1 / 9


def _hs40():
    """HS40: min −x₁x₂x₃x₄, x₁³ + x₂² = 1, x₁²x₄ = x₃, x₄² = x₂ (nonlinear equalities, no bounds), from
    (0.8, 0.8, 0.8, 0.8); x* = (2^(−1/3), 2^(−1/2), 2^(−11/12), 2^(−1/4)), f* = −1/4."""
    def c(x, p):
        return jnp.stack([x[0] ** 3 + x[1] ** 2 - 1.0, x[0] ** 2 * x[3] - x[2], x[3] ** 2 - x[1]])

    x_star = 2.0 ** -np.array([1 / 3, 1 / 2, 11 / 12, 1 / 4])
    return dict(objective=lambda x, p: -jnp.prod(x), x0=[0.8] * 4, equality=c), x_star, -0.25


@pytest.mark.parametrize("problem", [_hs21, _hs35, _hs40], ids=["HS21", "HS35", "HS40"])
def test_hock_schittkowski_published_optima(problem):
    kwargs, x_star, f_star = problem()
    x0 = jnp.asarray(kwargs.pop("x0"))
    sol = jax.jit(lambda x0: di.solve_nlp(x0=x0, **kwargs, throw=False))(x0)
    assert sol.result == di.NLPResults.successful
    np.testing.assert_allclose(sol.x, x_star, atol=1e-8)
    np.testing.assert_allclose(sol.value, f_star, rtol=1e-9, atol=1e-12)
    assert sol.constraint_violation < 1e-10


# No solution: the result says so, the point returned is finite, and a solvable member of the same batch succeeds.
def _circle_or_line(x, p):
    """``a (x₀² + x₁²) + b (x₀ + x₁) = r``."""
    return jnp.array([p[0] * (x[0] ** 2 + x[1] ** 2) + p[1] * (x[0] + x[1]) - p[2]])


def test_infeasible_problems_are_never_successful():
    """``x₀² + x₁² = −1``; ``x₀ + x₁ = 3`` in the unit box; the control: the quarter circle in the box, nearest
    to (2, −1) at x* = (1, 0)."""
    solve = jax.jit(jax.vmap(lambda p: di.solve_nlp(lambda x, p: (x[0] - 2.0) ** 2 + (x[1] + 1.0) ** 2,
                                                    jnp.array([0.5, 0.5]), p, equality=_circle_or_line, lower=0.0,
                                                    upper=1.0, throw=False)))
    sol = solve(jnp.array([[1.0, 0.0, -1.0], [0.0, 1.0, 3.0], [1.0, 0.0, 1.0]]))
    assert [i for i, _ in di.failures(sol.result)] == [0, 1]
    failed = [di.NLPResults.infeasible, di.NLPResults.step_failure, di.NLPResults.singular_newton]
    for i in (0, 1):
        assert any(jax.tree.map(lambda a: a[i], sol.result) == r for r in failed), di.failures(sol.result)
    assert np.all(np.isfinite(sol.x)) and np.all(np.isfinite(sol.value))
    assert np.all(np.asarray(sol.constraint_violation[:2]) > 0.1)  # a violation that cannot be removed
    np.testing.assert_allclose(sol.x[2], [1.0, 0.0], atol=1e-8)


def _line_or_parabola(x, p):
    """``a x + b x²``: unbounded below on ``x ≥ 0`` where ``a < 0 = b`` or ``b < 0``."""
    return p[0] * x[0] + p[1] * x[0] ** 2


def test_unbounded_problems_end_unbounded():
    """``min −x²`` diverges geometrically and passes the default ``10²⁰``; ``min −x`` too
    (``tests/test_nlp_unbounded.py``), here with a lower tolerance ``10¹⁰`` (a traced option, one per member);
    ``min x² − 2x`` is the bounded control (x* = 1)."""
    solve = jax.jit(jax.vmap(lambda p, tol: di.solve_nlp(_line_or_parabola, jnp.array([1.0]), p, lower=0.0,
                                                         options=di.NLPOptions(diverging_iterates_tol=tol),
                                                         throw=False)))
    tol = jnp.array([1e20, 1e10, 1e20])
    sol = solve(jnp.array([[0.0, -1.0], [-1.0, 0.0], [-2.0, 1.0]]), tol)
    np.testing.assert_array_equal(sol.result == di.NLPResults.unbounded, [True, True, False])
    assert [i for i, _ in di.failures(sol.result)] == [0, 1]
    assert np.all(np.asarray(sol.iterations[:2]) < di.NLPOptions().max_steps)
    assert np.all(np.abs(sol.x[:2, 0]) > tol[:2]) and np.all(np.isfinite(sol.x)) and np.all(np.isfinite(sol.value))
    np.testing.assert_allclose(sol.x[2], [1.0], rtol=1e-9)


def test_unbounded_raises_with_the_reason():
    """``min −x`` on ``x ≥ 0`` with `throw`: the error says that the iterates diverged."""
    solve = eqx.filter_jit(lambda p: di.solve_nlp(_line_or_parabola, jnp.array([1.0]), p, lower=0.0,
                                                  options=di.NLPOptions(diverging_iterates_tol=1e10)).x)
    with pytest.raises(eqx.EquinoxRuntimeError, match="iterates diverged .* probably unbounded below"):
        solve(jnp.array([-1.0, 0.0])).block_until_ready()


def test_diverging_iterates_tol_is_validated():
    with pytest.raises(ValueError, match="`diverging_iterates_tol` must be finite and positive"):
        di.NLPOptions(diverging_iterates_tol=0.0)
