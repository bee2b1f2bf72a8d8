"""Linear algebra for the fixed small matrices of a planar model, unrolled at trace time.

Under ``vmap`` a call to ``jnp.linalg.solve`` on an ``(n, n)`` matrix becomes a batched LAPACK call on
tiny matrices, which XLA on CPU executes slowly. The factorisation below is written with Python
loops over scalar entries instead: the size is static, so tracing emits ``O(n³)`` scalar operations, and under
``vmap`` each of them is one elementwise operation on a vector of the batch, which XLA fuses into a few loops.
"""

import functools

import jax
import jax.numpy as jnp
import lineax as lx

from ._custom_types import Array, Float
from ._validation import check


def solve_spd(a: Float[Array, "n n"], b: Float[Array, "n *k"], name: str = "a") -> Float[Array, "n *k"]:
    r"""Solve ``a x = b`` for a symmetric positive definite ``a`` of static small size by an unrolled ``LDLᵀ``
    factorisation (Golub & Van Loan, *Matrix Computations*, 4th ed., §4.1.2):

    .. math:: d_j = a_{jj} - \sum_{k<j} l_{jk}^2 d_k,\qquad
              l_{ij} = \Big(a_{ij} - \sum_{k<j} l_{ik} l_{jk} d_k\Big) / d_j \quad (i > j),

    then ``L y = b`` and ``Lᵀ x = D⁻¹ y``. Only the lower triangle of ``a`` is read. For a positive definite
    ``a`` every pivot is ``d_j ≥ λ_min(a) > 0``, so no pivoting is needed (a symmetric indefinite ``a`` whose
    leading minors are nonzero is solved exactly too). A pivot with ``|d_j| ≤ n ε max_i |a_ii|`` (``a``
    singular to working precision, e.g. a massless segment; or a zero leading minor) raises ``ValueError``
    naming `name` (``equinox.error_if`` under ``jit``/``vmap``) instead of returning infinities.

    **Arguments:** `a` ``(n, n)``; `b` ``(n,)`` or ``(n, k)``; `name` the argument named in the error.

    **Returns:** `x`, shaped like `b`. Differentiable in `a` (its lower triangle) and `b`.
    """
    n = a.shape[0]
    if a.ndim != 2 or a.shape[1] != n or b.shape[:1] != (n,):
        raise ValueError(f"`{name}` must be square (n, n) and `b` (n, ...), got shapes {a.shape} and {b.shape}.")
    return _solve(name, a, b)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _solve(name, a, b):
    return _substitute(*_factor(a, name), b)


@_solve.defjvp
def _solve_jvp(name, primals, tangents):
    """``dx = a⁻¹ (db − da x)`` with ``da`` symmetrised from its lower triangle (the part of ``a`` that is read).
    The factors are residuals: reverse mode transposes two substitutions and one product, not the ``O(n³)``
    scalar factorisation (whose transpose is one scatter into ``(n, n)`` per entry read)."""
    (a, b), (da, db) = primals, tangents
    factors = _factor(a, name)
    x = _substitute(*factors, b)
    da = jnp.tril(da) + jnp.tril(da, -1).T
    return x, _substitute(*factors, db - da @ x)


def _ldl(a):
    """``L`` (strict lower part, nested lists), the pivots ``d`` and ``1/d`` of ``a = L D Lᵀ``, unchecked."""
    n = a.shape[0]
    l, d, inv_d = [[None] * n for _ in range(n)], [], []
    for j in range(n):
        ld = [l[j][k] * d[k] for k in range(j)]  # l_jk d_k, shared by the whole column j
        for i in range(j, n):
            s = a[i, j]
            for k in range(j):
                s = s - l[i][k] * ld[k]
            if i == j:
                d.append(s)
                inv_d.append(1.0 / s)
            else:
                l[i][j] = s * inv_d[j]
    return l, d, inv_d


def ldl_pivots(a: Float[Array, "n n"]) -> Float[Array, " n"]:
    """The pivots ``d`` of the unrolled ``a = L D Lᵀ`` (lower triangle read, no pivoting): for a symmetric ``a``
    with nonzero leading minors, as many are negative as ``a`` has negative eigenvalues (Sylvester's law of
    inertia); a zero leading minor gives a zero pivot and non-finite later ones."""
    return jnp.stack(_ldl(a)[1])


def _factor(a, name):
    """``L`` and ``1/d`` of ``a = L D Lᵀ`` (:func:`_ldl`), with the pivot check."""
    n = a.shape[0]
    l, d, inv_d = _ldl(a)
    # Every x_i depends on 1/d_n (back substitution starts there): the check rides on that one batch vector
    # rather than on x, which keeps x fusable (an error_if on x costs a third of the solve under vmap).
    diagonal = functools.reduce(jnp.maximum, [jnp.abs(a[i, i]) for i in range(n)])
    smallest = functools.reduce(jnp.minimum, [jnp.abs(p) for p in d])
    inv_d[-1] = check(inv_d[-1], ~(smallest > n * jnp.finfo(a.dtype).eps * diagonal),
                      f"`{name}` has a zero LDLᵀ pivot to working precision: it is singular or not positive definite "
                      "(a massless coordinate?).")
    return l, inv_d


def _substitute(l, inv_d, b):
    """``x = L⁻ᵀ D⁻¹ L⁻¹ b``: forward substitution, scaling, back substitution."""
    n = len(inv_d)
    y = []
    for i in range(n):
        s = b[i]
        for k in range(i):
            s = s - l[i][k] * y[k]
        y.append(s)
    x = [None] * n
    for i in reversed(range(n)):
        s = y[i] * inv_d[i]
        for k in range(i + 1, n):
            s = s - l[k][i] * x[k]
        x[i] = s
    return jnp.stack(x)


def solve_small(a: Float[Array, "n n"], b: Float[Array, " n"]) -> Float[Array, " n"]:
    r"""Solve ``a x = b`` for a general (non-symmetric) ``a`` of static small size by Gaussian elimination with
    partial pivoting (Golub & Van Loan, *Matrix Computations*, 4th ed., §3.4), unrolled at trace time: no LAPACK
    under ``vmap``. Differentiable (the pivot choice is piecewise constant). A singular ``a`` gives non-finite
    entries; callers check them."""
    n = a.shape[0]
    m = jnp.concatenate([a, b[:, None]], axis=1)
    for j in range(n):
        p = j + jnp.argmax(jnp.abs(m[j:, j]))
        rows = jnp.arange(n)
        swap = jnp.where(rows == j, p, jnp.where(rows == p, j, rows))
        m = m[swap]
        factors = jnp.where(rows > j, m[:, j] / m[j, j], 0.0)
        m = m - factors[:, None] * m[j][None, :]
    x = [None] * n
    for i in reversed(range(n)):
        s = m[i, n]
        for k in range(i + 1, n):
            s = s - m[i, k] * x[k]
        x[i] = s / m[i, i]
    return jnp.stack(x)


class SmallLU(lx.AbstractLinearSolver):
    """A lineax solver for small dense square operators on flat vectors by :func:`solve_small` (no LAPACK
    under ``vmap``): for Newton's method and the implicit-function adjoint of optimistix."""

    def init(self, operator, options):
        if operator.in_size() != operator.out_size():
            raise ValueError("`SmallLU` needs a square operator.")
        return operator.as_matrix()

    def compute(self, state, vector, options):
        x = solve_small(state, vector)
        ok = jnp.all(jnp.isfinite(x))
        return jnp.where(ok, x, 0.0), lx.RESULTS.where(ok, lx.RESULTS.successful, lx.RESULTS.singular), {}

    def transpose(self, state, options):
        return state.T, options

    def conj(self, state, options):
        return state.conj(), options

    def assume_full_rank(self):
        return True
