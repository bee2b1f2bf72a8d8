"""The inertia tests of the Newton matrix (:mod:`difimpact._nlp.inertia`) against the eigenvalues of the reduced
Hessian ``Zᵀ A Z`` on the null space of ``J_c``: dense (Cholesky of ``A + ρ J_cᵀ J_c``) and banded (signs of the
pivots of an elimination without pivoting), one matrix and a batch under ``vmap``."""

import jax
import jax.numpy as jnp
import numpy as np

from difimpact._nlp import inertia, newton
from difimpact._nlp.matrix import SparseMatrix
from difimpact._nlp.sparsity import Sparsity

N, MC = 12, 5


def _case(rng, shift):
    A = np.diag(rng.normal(size=N) + shift) + np.diag(rng.normal(size=N - 1), 1)
    A = A + A.T
    J = np.zeros((MC, N))
    for i in range(MC):
        J[i, 2 * i:2 * i + 3] = rng.normal(size=3)
    Z = np.linalg.svd(J)[2][MC:].T
    return A, J, bool(np.all(np.linalg.eigvalsh(Z.T @ A @ Z) > 0))


def _structure(A=None, J=None):
    """The band assembly of ``[[A, J_cᵀ], [J_c, ·]]`` for the patterns of `A` and `J` (by default a case's)."""
    if A is None:
        A, J, _ = _case(np.random.default_rng(0), 0.0)
    A, J = np.asarray(A), np.asarray(J)
    n = A.shape[0]
    sp = Sparsity(np.arange(n), J != 0, np.arange(n), A != 0, np.zeros(n, bool))
    return newton.Assembly(sp, J.shape[0])


def _band(s, A, J):
    """The banded test through the assembly: ``W = A`` (no barrier weights, no inequalities)."""
    W = SparseMatrix(A[s.hessian.rows, s.hessian.cols], s.hessian)
    Jc = SparseMatrix(J[s.jc.rows, s.jc.cols], s.jc)
    Jd = SparseMatrix(jnp.zeros(0, A.dtype), s.jd)
    return inertia.band(s, s.a_values(W, Jd, jnp.zeros(0, A.dtype), jnp.zeros(A.shape[0], A.dtype)), Jc, W)


def test_inertia_matches_the_reduced_hessian():
    rng, s = np.random.default_rng(0), _structure()
    truths = []
    for shift in np.linspace(-3.0, 4.0, 30):
        A, J, truth = _case(rng, shift)
        A, J = jnp.asarray(A), jnp.asarray(J)
        assert bool(inertia.dense(A, J, A)) == truth
        assert bool(_band(s, A, J)) == truth
        M = A + inertia.penalty(A, J) * (J.T @ J)
        assert bool(jnp.all(inertia._loop_pivots(M) > 0)) == truth
        truths.append(truth)
    assert 0 < sum(truths) < len(truths)


def test_inertia_under_vmap():
    rng, s = np.random.default_rng(1), _structure()
    cases = [_case(rng, shift) for shift in (-3.0, 4.0, -2.0, 3.0)]
    A = jnp.asarray(np.stack([c[0] for c in cases]))
    J = jnp.asarray(np.stack([c[1] for c in cases]))
    truth = [c[2] for c in cases]
    assert list(np.asarray(jax.jit(jax.vmap(lambda a, j: inertia.dense(a, j, a)))(A, J))) == truth
    assert list(np.asarray(jax.jit(jax.vmap(lambda a, j: _band(s, a, j)))(A, J))) == truth


def test_rows_of_different_sizes():
    """A steep row beside a small one: ``A`` is positive definite on ``null(J_c) = span(e₃)`` but indefinite on the
    small row's direction ``e₂``; with ``ρ`` set by the steep row alone, ``A + ρ J_cᵀ J_c`` would stay indefinite
    there (``−1 + 10⁻⁶``) and the test would ask for a regularisation the problem does not need."""
    A = jnp.diag(jnp.array([1.0, -1.0, 1.0]))
    J = jnp.array([[1e3, 0.0, 0.0], [0.0, 1e-3, 0.0]])
    s = _structure(np.ones((3, 3)), np.ones((2, 3)))
    assert bool(inertia.dense(A, J, A)) and bool(_band(s, A, J))
    assert not bool(inertia.dense(A.at[2, 2].set(-1.0), J, A))  # negative on the null space
    assert not bool(_band(s, A.at[2, 2].set(-1.0), J))


def _factor(s, A, J, wanted=False):
    """:func:`newton.factor` with the inertia test: ``W = A``, no barrier weights, no inequalities."""
    W = SparseMatrix(A[s.hessian.rows, s.hessian.cols], s.hessian)
    Jc = SparseMatrix(J[s.jc.rows, s.jc.cols], s.jc)
    Jd = SparseMatrix(jnp.zeros(0, A.dtype), s.jd)
    zero = jnp.zeros((), A.dtype)
    return newton.factor(W, Jc, Jd, jnp.zeros(A.shape[0], A.dtype), jnp.zeros(0, A.dtype), zero, zero, s,
                         test_inertia=True, wanted=jnp.asarray(wanted))


def test_factored_only_where_the_inertia_passes():
    """An attempt whose inertia is wrong is not factored (NaN factors, not reported singular) unless wanted;
    where it is factored, its solve is the dense solve of ``[[A, J_cᵀ], [J_c, 0]]``, one matrix and under
    ``vmap`` (where both branches are computed and one is taken)."""
    rng, s = np.random.default_rng(2), _structure()
    cases = [_case(rng, shift) for shift in (-3.0, 4.0)]
    assert [c[2] for c in cases] == [False, True]
    b = rng.normal(size=N + MC)
    factor = jax.jit(lambda a, j, w: _factor(s, a, j, w))
    solved = jax.jit(lambda a, j, w: newton._reduced_solve(_factor(s, a, j, w), jnp.asarray(b)))
    for A, J, truth in cases:
        K = np.block([[A, J.T], [J, np.zeros((MC, MC))]])
        for wanted in (False, True):
            R = factor(jnp.asarray(A), jnp.asarray(J), wanted)
            assert bool(R.inertia) == truth and float(R.lu.min_pivot) > 1e-30
            factored = truth or wanted
            assert bool(jnp.all(jnp.isfinite(R.lu.main.band))) == factored
            if factored:
                x = solved(jnp.asarray(A), jnp.asarray(J), wanted)
                np.testing.assert_allclose(x, np.linalg.solve(K, b), rtol=1e-9, atol=1e-12)
    A = jnp.asarray(np.stack([c[0] for c in cases]))
    J = jnp.asarray(np.stack([c[1] for c in cases]))
    X = jax.jit(jax.vmap(lambda a, j: newton._reduced_solve(_factor(s, a, j), jnp.asarray(b))))(A, J)
    assert not np.any(np.isfinite(np.asarray(X[0])))
    K = np.block([[cases[1][0], cases[1][1].T], [cases[1][1], np.zeros((MC, MC))]])
    np.testing.assert_allclose(X[1], np.linalg.solve(K, b), rtol=1e-9, atol=1e-12)
