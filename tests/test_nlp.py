"""The interior-point method of `solve_nlp` against published solutions and scipy, its implicit gradients against
finite differences of re-solved problems, its failures as results, and its linear algebra against NumPy."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize

import difimpact as di
from difimpact._nlp import banded
from difimpact._nlp.dense import lu_factor, lu_solve
from difimpact._nlp.sparsity import Sparsity

# Hock & Schittkowski problem 71 (IPOPT's example): min x1 x4 (x1 + x2 + x3) + x3, x1 x2 x3 x4 ≥ 25,
# Σ x² = p (= 40), 1 ≤ x ≤ 5; the solution of the published problem.
HS071_X = np.array([1.0, 4.74299963, 3.82114998, 1.37940829])
HS071_F = 17.0140173


def _objective(x, p):
    return x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2]


def _equality(x, p):
    return jnp.array([jnp.sum(x**2) - p])


def _inequality(x, p):
    return jnp.array([jnp.prod(x)])


def _hs071(p, throw=True):
    return di.solve_nlp(_objective, jnp.array([1.0, 5.0, 5.0, 1.0]), p, equality=_equality, inequality=_inequality,
                        inequality_lower=25.0, lower=1.0, upper=5.0, throw=throw)


@functools.cache
def _solve():
    return jax.jit(lambda p: _hs071(p, throw=False))


@functools.cache
def _gradient():
    return jax.jit(jax.grad(lambda p: _hs071(p).value))


def test_hs071_published_solution_and_scipy():
    sol = _solve()(40.0)
    assert sol.result == di.NLPResults.successful
    np.testing.assert_allclose(sol.x, HS071_X, rtol=1e-8)
    np.testing.assert_allclose(sol.value, HS071_F, rtol=1e-8)
    ref = scipy.optimize.minimize(lambda x: _objective(x, 0), [1, 5, 5, 1], method="SLSQP", bounds=[(1, 5)] * 4,
                                  constraints=[{"type": "eq", "fun": lambda x: np.sum(x**2) - 40},
                                               {"type": "ineq", "fun": lambda x: np.prod(x) - 25}], tol=1e-14)
    np.testing.assert_allclose(sol.x, ref.x, rtol=1e-6)
    assert sol.constraint_violation < 1e-10 and int(sol.iterations) < 30


def test_hs071_gradient_is_the_multiplier_and_finite_differences():
    g = _gradient()(40.0)
    h = 1e-4
    fd = (_solve()(40.0 + h).value - _solve()(40.0 - h).value) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    sol = _solve()(40.0)
    # the envelope theorem: dJ/dp = ∂L/∂p = −λ (the constraint is Σx² − p)
    np.testing.assert_allclose(g, -sol.multipliers[0], rtol=1e-8)


def test_failures_are_results_under_vmap():
    # Σ x² = p ≤ 100 with 1 ≤ x ≤ 5: p = 400 cannot be met
    sol = jax.vmap(_solve())(jnp.array([40.0, 400.0]))
    assert sol.result._value[0] == di.NLPResults.successful._value
    assert np.all(np.isfinite(sol.x)) and np.all(np.isfinite(sol.value))
    failed = di.failures(sol.result)
    assert [i for i, _ in failed] == [1]
    assert "infeasib" in failed[0][1] or "line search" in failed[0][1] or "iteration" in failed[0][1]
    with pytest.raises(Exception, match="constraints|line search|iteration"):
        jax.jit(lambda p: _hs071(p, throw=True).x)(400.0).block_until_ready()


def test_bounds_active_against_scipy():
    # Rosenbrock with the minimum (1, 1) cut off by x1 ≤ 0.5: the bound is active
    f = lambda x, p: (1 - x[0]) ** 2 + p * (x[1] - x[0] ** 2) ** 2  # noqa: E731
    sol = jax.jit(lambda p: di.solve_nlp(f, jnp.array([-1.2, 1.0]), p, upper=jnp.array([0.5, jnp.inf])))(100.0)
    ref = scipy.optimize.minimize(lambda x: f(x, 100.0), [-1.2, 1.0], method="L-BFGS-B",
                                  bounds=[(None, 0.5), (None, None)], tol=1e-15)
    np.testing.assert_allclose(sol.x, ref.x, rtol=1e-6, atol=1e-8)
    assert sol.bound_multipliers[0] < 0  # the upper bound pushes back


def test_bad_input():
    with pytest.raises(TypeError, match="objective"):
        di.solve_nlp(3.0, jnp.zeros(2))
    with pytest.raises(ValueError, match="x0"):
        di.solve_nlp(_objective, jnp.zeros((2, 2)))
    with pytest.raises(TypeError, match="equality"):
        di.solve_nlp(_objective, jnp.ones(4), equality=1.0)
    with pytest.raises(ValueError, match="finite bound"):
        di.solve_nlp(_objective, jnp.ones(4), 40.0, inequality=_inequality, inequality_lower=-jnp.inf)
    with pytest.raises(TypeError, match="options"):
        di.solve_nlp(_objective, jnp.ones(4), options={"tol": 1e-3})
    with pytest.raises(TypeError, match="constraints"):
        di.solve_nlp(_objective, jnp.ones(4), 40.0, equality=_equality, constraints=_both)
    with pytest.raises(TypeError, match="pair"):
        di.solve_nlp(_objective, jnp.ones(4), 40.0, constraints=_equality)


def _both(x, p):
    return _equality(x, p), _inequality(x, p)


def test_constraints_from_one_function_solve_the_same_problem():
    """`constraints` returning ``(c, d)`` is the same problem as `equality` and `inequality` apart: the same
    iterates (to rounding), the same optimum and the same implicit gradient."""
    solve = jax.jit(lambda p: di.solve_nlp(_objective, jnp.array([1.0, 5.0, 5.0, 1.0]), p, constraints=_both,
                                           inequality_lower=25.0, lower=1.0, upper=5.0))
    sol, ref = solve(40.0), _solve()(40.0)
    assert int(sol.iterations) == int(ref.iterations)
    np.testing.assert_allclose(sol.x, ref.x, rtol=1e-13)
    np.testing.assert_allclose(sol.multipliers, ref.multipliers, rtol=1e-10)
    np.testing.assert_allclose(jax.grad(lambda p: solve(p).value)(40.0), _gradient()(40.0), rtol=1e-10)


def _pivoting_matrix(rng, n, band=None):
    a = rng.standard_normal((n, n))
    if band is not None:
        i, j = np.indices((n, n))
        d = np.minimum(np.abs(i - j), n - np.abs(i - j))  # periodic: the corners are coupled
        a = np.where(d <= band, a, 0.0)
    a[np.diag_indices(n)] *= 1e-3  # small diagonal: partial pivoting must exchange rows
    return a


def test_dense_lu_against_numpy_under_vmap():
    rng = np.random.default_rng(0)
    a = np.stack([_pivoting_matrix(rng, 45) for _ in range(3)])
    b = rng.standard_normal((3, 45))
    x = jax.jit(jax.vmap(lambda a, b: lu_solve(lu_factor(a), b)))(a, b)
    np.testing.assert_allclose(x, np.linalg.solve(a, b[..., None])[..., 0], rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("block", [1, 4])
def test_banded_lu_against_numpy_under_vmap(block):
    """By columns and by blocks of 4 (several blocks, the last padded), under ``vmap`` (pivots differ by member)."""
    rng = np.random.default_rng(1)
    n = 60
    a = np.stack([_pivoting_matrix(rng, n, band=3) for _ in range(3)])
    s = banded.BandedStructure.of(a[0] != 0)
    assert s.lower + s.upper < n / 2  # the ordering folds the periodic chain into a band
    b = rng.standard_normal((3, n))
    x = jax.jit(jax.vmap(lambda a, b: banded.solve(s, banded.factor(s, banded.to_band(s, a), block=block), b)))(a, b)
    np.testing.assert_allclose(x, np.linalg.solve(a, b[..., None])[..., 0], rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("block", [1, 3])
def test_banded_lu_of_an_unsymmetric_band_against_numpy(block):
    """More sub- than super-diagonals, pivoting throughout (small diagonal): the window of the elimination moves
    down the band with its fill-in; and without pivoting (the inertia's elimination) on a diagonally dominant
    matrix, the pivots are those of NumPy's ``LU`` without exchanges, ``det`` of the leading blocks' ratios. Several
    right-hand sides solved together equal NumPy's and the solves one by one."""
    rng = np.random.default_rng(2)
    n = 40
    i, j = np.indices((n, n))
    a = np.where((i - j <= 5) & (j - i <= 2), rng.standard_normal((n, n)), 0.0)
    a[np.diag_indices(n)] *= 1e-3
    s = banded.BandedStructure.of(a != 0)
    b = rng.standard_normal(n)
    f = banded.factor(s, banded.to_band(s, jnp.asarray(a)), block=block)
    np.testing.assert_allclose(banded.solve(s, f, b), np.linalg.solve(a, b), rtol=1e-9, atol=1e-11)
    several = rng.standard_normal((n, 5))  # several right-hand sides together, as one by one
    np.testing.assert_allclose(banded.solve(s, f, several), np.linalg.solve(a, several), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(banded.solve(s, f, several)[:, 2], banded.solve(s, f, several[:, 2]), rtol=1e-13)
    dominant = a + np.diag(np.full(n, 20.0))
    perm = np.asarray(s.perm)
    p = dominant[np.ix_(perm, perm)]
    minors = np.array([np.linalg.det(p[:k, :k]) for k in range(1, n + 1)])
    pivots = banded.factor(s, banded.to_band(s, jnp.asarray(dominant)), pivoting=False, block=block).band[:, s.lower]
    np.testing.assert_allclose(pivots, minors / np.concatenate([[1.0], minors[:-1]]), rtol=1e-9)


def test_banded_lu_by_blocks_is_the_same_factorisation():
    """From ``k_l = BLOCKED_MIN`` on the default is by blocks: the same pivots and storage as by columns (to
    rounding), and the solve against NumPy's; a bad `block` named."""
    rng = np.random.default_rng(3)
    n, k = 150, banded.BLOCKED_MIN
    i, j = np.indices((n, n))
    a = np.where(np.abs(i - j) <= k, rng.standard_normal((n, n)), 0.0)
    s = banded.BandedStructure(tuple(range(n)), k, k)
    by_blocks, by_columns = (jax.jit(lambda a, block=block: banded.factor(s, banded.to_band(s, a), block=block))(a)
                             for block in (None, 1))
    np.testing.assert_array_equal(by_blocks.pivots, by_columns.pivots)
    np.testing.assert_allclose(by_blocks.band, by_columns.band, rtol=0, atol=1e-10 * np.abs(by_columns.band).max())
    b = rng.standard_normal(n)
    np.testing.assert_allclose(banded.solve(s, by_blocks, b), np.linalg.solve(a, b), rtol=1e-8, atol=1e-10)
    with pytest.raises(ValueError, match="`block`"):
        banded.factor(s, banded.to_band(s, a), block=0)


def test_sparsity_rejects_a_bad_colouring():
    pattern = np.array([[True, True], [False, True]])
    with pytest.raises(ValueError, match="share a nonzero row"):
        Sparsity([0, 0], pattern, [0, 1], np.eye(2, dtype=bool), [False, False])
