"""Linear algebra for the fixed small matrices of a planar model, unrolled at trace time.

Under ``vmap`` a call to ``jnp.linalg.solve``/``svd``/``eigh`` on an ``(n, n)`` matrix becomes a batched LAPACK
call on tiny matrices, which XLA on CPU executes slowly and whose thread-pool batching can deadlock. The
factorisations below are written with Python loops instead: the size is static, so tracing emits a fixed
sequence of scalar or small-vector operations, and under ``vmap`` each of them is one elementwise operation on
the batch, which XLA fuses into a few loops. :func:`solve_spd` (``LDLᵀ``) unrolls scalar entries; :func:`solve`
(``LU`` with partial pivoting) and :func:`row_basis` (pivoted Gram–Schmidt) unroll elimination steps on
vectors, with pivots selected by ``argmax`` and one-hot masks.
"""

import functools

import jax
import jax.numpy as jnp
import lineax as lx
from jax.custom_batching import custom_vmap

from ._custom_types import Array, Bool, Float
from ._check import check


def full_precision(fn):
    """Trace ``fn`` with every matrix product at full precision (``jax.default_matmul_precision("highest")``).

    JAX's default lets a float32 product on a GPU run in TF32 (a 10-bit mantissa, relative error ~5e-4): a
    float32 model's joint angles ``θ = (∂θ/∂q) q`` then come out ~1e-4 rad off, the crutch tip of a placed
    posture ~1e-4 m above the ground, and the impact's ground check fails. Every function of the library that
    forms a matrix product is traced under this; at these sizes the full-precision product costs nothing
    measurable, and on CPUs and in float64 it changes nothing. The precision is a parameter of each traced
    product, so it holds in the derivatives too."""

    @functools.wraps(fn)
    def traced_at_full_precision(*args, **kwargs):
        with jax.default_matmul_precision("highest"):
            return fn(*args, **kwargs)

    return traced_at_full_precision


def solve_spd(a: Float[Array, "n n"], b: Float[Array, "n ..."], name: str = "a") -> Float[Array, "n ..."]:
    r"""Solve ``a x = b`` for a symmetric positive definite ``a`` of static small size by an unrolled ``LDLᵀ``
    factorisation (Golub & Van Loan, *Matrix Computations*, 4th ed., §4.1.2):

    $$
    d_j = a_{jj} - \sum_{k<j} l_{jk}^2 d_k,\qquad
    l_{ij} = \Big(a_{ij} - \sum_{k<j} l_{ik} l_{jk} d_k\Big) / d_j \quad (i > j),
    $$

    then ``L y = b`` and ``Lᵀ x = D⁻¹ y``. Only the lower triangle of ``a`` is read. For a positive definite
    ``a`` every pivot is ``d_j ≥ λ_min(a) > 0``, so no pivoting is needed (a symmetric indefinite ``a`` whose
    leading minors are nonzero is solved exactly too). A pivot with ``|d_j| ≤ n ε max_i |a_ii|`` (``a``
    singular to working precision, e.g. a massless segment; or a zero leading minor) raises ``ValueError``
    naming `name` (``equinox.error_if`` under ``jit``/``vmap``; NaN inside an entry point's program, whose result
    reports it: :mod:`difimpact._check`) instead of returning infinities.

    **Arguments:** `a` ``(n, n)``; `b` ``(n,)`` or ``(n, k)``, or a tuple of such right-hand sides, which share
    one factorisation; `name` the argument named in the error.

    **Returns:** `x`, shaped like `b` (a tuple for a tuple). Differentiable in `a` (its lower triangle) and `b`.
    """
    n = a.shape[0]
    shapes = [v.shape for v in jax.tree.leaves(b)]
    if a.ndim != 2 or a.shape[1] != n or not shapes or any(s[:1] != (n,) for s in shapes):
        raise ValueError(f"`{name}` must be square (n, n) and `b` (n, ...), got shapes {a.shape} and "
                         f"{getattr(b, 'shape', shapes)}.")
    return _solve(name, a, b)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _solve(name, a, b):
    return _substitute_each(_factor(a, name), b)


@_solve.defjvp
def _solve_jvp(name, primals, tangents):
    """``dx = a⁻¹ (db − da x)`` with ``da`` symmetrised from its lower triangle (the part of ``a`` that is read).
    The factors are residuals: reverse mode transposes two substitutions and one product, not the ``O(n³)``
    scalar factorisation (whose transpose is one scatter into ``(n, n)`` per entry read)."""
    (a, b), (da, db) = primals, tangents
    factors = _factor(a, name)
    x = _substitute_each(factors, b)
    da = jnp.tril(da) + jnp.tril(da, -1).T
    return x, _substitute_each(factors, jax.tree.map(lambda v, dv: dv - _matmul(da, v), x, db))


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


def _substitute_each(factors, b):
    """:func:`_substitute` for each right-hand side of `b` (an array, or a tuple of them)."""
    return jax.tree.map(lambda v: _substitute(*factors, v), b)


def _substitute(l, inv_d, b):
    """``x = L⁻ᵀ D⁻¹ L⁻¹ b``: forward substitution, scaling, back substitution. `b`'s rows are taken by one
    ``split``, whose transpose (in reverse mode) is one concatenation: indexing each row would transpose to a pad
    of it into ``b``'s shape and a sum of ``n`` such, which XLA's CPU fusion emitters then evaluate element by
    element (``docs/performance.md``, "Optimal gaits")."""
    n = len(inv_d)
    rows = [r[0] for r in jnp.split(b, n)]
    y = []
    for i in range(n):
        s = rows[i]
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


def solve(a: Float[Array, "n n"], b: Float[Array, "n ..."], name: str = "a") -> Float[Array, "n ..."]:
    r"""Solve ``a x = b`` for a general square ``a`` of static small size by an unrolled ``LU`` factorisation
    with partial pivoting (Golub & Van Loan, *Matrix Computations*, 4th ed., Alg. 3.4.1, as LAPACK ``getrf``).
    A pivot with ``|u_jj| ≤ n ε max|a|`` raises ``ValueError`` naming `name` (``equinox.error_if`` under
    ``jit``/``vmap``; NaN inside an entry point's program: :mod:`difimpact._check`).

    **Arguments:** `a` ``(n, n)``; `b` ``(n,)`` or ``(n, k)``; `name` the argument named in the error.

    **Returns:** `x`, shaped like `b`. Differentiable in `a` and `b` (``dx = a⁻¹ (db − da x)``).
    """
    _check_square(a, b, name)
    x, pivot = solve_lu(a, b)
    return check(x, ~(pivot > a.shape[0] * jnp.finfo(a.dtype).eps),
                 f"`{name}` is singular to working precision (zero LU pivot).")


def solve_lu(a: Float[Array, "n n"], b: Float[Array, "n ..."]) -> tuple[Float[Array, "n ..."], Float[Array, ""]]:
    """:func:`solve` without the check: returns ``(x, p)`` with ``p = min_j |u_jj| / max|a|``, the smallest
    relative pivot (``0`` for a singular ``a``, whose ``x`` is then finite but meaningless)."""
    _check_square(a, b, "a")
    return _lu_solve(a, b)


def _check_square(a, b, name):
    n = a.shape[0]
    if a.ndim != 2 or a.shape[1] != n or b.shape[:1] != (n,):
        raise ValueError(f"`{name}` must be square (n, n) and `b` (n, ...), got shapes {a.shape} and {b.shape}.")


@jax.custom_jvp
def _lu_solve(a, b):
    factors = _lu_factor(a)
    return _lu_substitute(factors, b), _relative_pivot(a, factors)


@_lu_solve.defjvp
def _lu_solve_jvp(primals, tangents):
    (a, b), (da, db) = primals, tangents
    factors = _lu_factor(a)
    x = _lu_substitute(factors, b)
    pivot = _relative_pivot(a, factors)
    return (x, pivot), (_lu_substitute(factors, db - _matmul(da, x)), jnp.zeros_like(pivot))


def _matmul(a, x):
    """``a @ x`` as elementwise products and sums (no ``dot_general`` on tiny batched operands)."""
    return jnp.sum(a[:, :, None] * (x[None, :, None] if x.ndim == 1 else x[None]), axis=1).reshape(x.shape)


def _one_hot_row(block, p):
    """Row ``p`` (traced) of ``block`` and ``block`` with rows ``0`` and ``p`` exchanged."""
    hot = jnp.arange(block.shape[0]) == p
    hot = hot.reshape((-1,) + (1,) * (block.ndim - 1))
    row = jnp.sum(jnp.where(hot, block, 0), axis=0)
    swapped = jnp.where(hot, block[:1], block)
    return row, jnp.concatenate([row[None], swapped[1:]])


def _lu_factor(a):
    """Steps ``(p_j, l_j, u_j)``: the pivot row chosen at step ``j`` (relative to ``j``), the multipliers below
    it and the row ``u_j = U[j, j:]``. Each step works on the trailing block (static shape)."""
    steps, block = [], a
    for _ in range(a.shape[0]):
        p = jnp.argmax(jnp.abs(block[:, 0]))
        u, block = _one_hot_row(block, p)
        l = block[1:, 0] / jnp.where(u[0] == 0, 1.0, u[0])  # an exact zero pivot: finite x, flagged by the caller
        steps.append((p, l, u))
        block = block[1:, 1:] - l[:, None] * u[None, 1:]
    return steps


def lu_factor(a: Float[Array, "n n"]):
    """The steps of the unrolled ``LU`` of `a` (:func:`solve`), unchecked, for :func:`lu_substitute`."""
    return _lu_factor(a)


def lu_substitute(steps, b: Float[Array, "n ..."]) -> Float[Array, "n ..."]:
    """``a⁻¹ b`` from the steps of :func:`lu_factor` (linear in `b`: transposable for reverse mode)."""
    return _lu_substitute(steps, b)


def relative_pivot(a: Float[Array, "n n"], steps) -> Float[Array, ""]:
    """``min_j |u_jj| / max|a|`` of the steps of :func:`lu_factor` (``0`` for a singular `a`)."""
    return _relative_pivot(a, steps)


def _relative_pivot(a, steps):
    scale = jnp.max(jnp.abs(a))
    smallest = functools.reduce(jnp.minimum, [jnp.abs(u[0]) for _, _, u in steps])
    return jnp.where(scale > 0, smallest / jnp.where(scale > 0, scale, 1.0), 0.0)


def _lu_substitute(steps, b):
    """``x = U⁻¹ L⁻¹ P b``: the recorded row exchanges and eliminations on `b`, then back substitution."""
    n, y, block = len(steps), [], b
    for p, l, _ in steps:
        row, block = _one_hot_row(block, p)
        y.append(row)
        block = block[1:] - (l[:, None] * row[None] if b.ndim > 1 else l * row)
    x = [None] * n
    for j in reversed(range(n)):
        u = steps[j][2]
        s = y[j]
        for k in range(j + 1, n):
            s = s - u[k - j] * x[k]
        x[j] = s / jnp.where(u[0] == 0, 1.0, u[0])
    return jnp.stack(x)


def row_basis(rows: Float[Array, "k n"], steps: int, rtol: float
              ) -> tuple[Float[Array, "s n"], Bool[Array, " s"], Float[Array, " s"]]:
    r"""Orthonormal basis of the row space of `rows` by Gram–Schmidt with pivoting on the largest residual
    row (rank-revealing QR of ``rowsᵀ`` with column pivoting; Golub & Van Loan, §5.4.2), each projection done
    twice ("twice is enough", Giraud et al. 2005). Step ``j`` takes the remaining row of largest residual norm
    ``r_j`` (non-increasing in ``j``) and keeps it when ``r_j > rtol · max(r_0, 1)``.

    **Arguments:** `rows` ``(k, n)``; `steps` ``≤ min(k, n)`` pivots to take; `rtol` the relative rank tolerance.

    **Returns:** ``(Q, kept, r)``: ``Q`` ``(steps, n)`` with orthonormal rows where `kept`, zero rows elsewhere
    (so ``QᵀQ`` is the orthogonal projector onto the numerical row space once `steps` reaches its rank), and the
    residual norms ``r`` ``(steps,)``. Not differentiable: callers use it on ``stop_gradient`` values.
    """
    basis, kept, norms, first = [], [], [], None
    for _ in range(steps):
        norm2 = jnp.sum(rows * rows, axis=1)
        row, _ = _one_hot_row(rows, jnp.argmax(norm2))
        norm = jnp.sqrt(jnp.sum(row * row))
        first = norm if first is None else first
        keep = norm > rtol * jnp.maximum(first, 1.0)
        q = jnp.where(keep, row / jnp.where(keep, norm, 1.0), 0.0)
        for _ in range(2):
            rows = rows - jnp.sum(rows * q[None], axis=1, keepdims=True) * q[None]
        basis.append(q)
        kept.append(keep)
        norms.append(norm)
    return jnp.stack(basis), jnp.stack(kept), jnp.stack(norms)


class SmallLU(lx.AbstractLinearSolver):
    """A lineax solver for small dense square operators on flat vectors by :func:`solve_lu` (no LAPACK
    under ``vmap``): for Newton's method and the implicit-function adjoint of optimistix."""

    def init(self, operator, options):
        if operator.in_size() != operator.out_size():
            raise ValueError("`SmallLU` needs a square operator.")
        return operator.as_matrix()

    def compute(self, state, vector, options):
        x, pivot = solve_lu(state, vector)
        ok = pivot > state.shape[0] * jnp.finfo(state.dtype).eps
        return jnp.where(ok, x, 0.0), lx.RESULTS.where(ok, lx.RESULTS.successful, lx.RESULTS.singular), {}

    def transpose(self, state, options):
        return state.T, options

    def conj(self, state, options):
        return state.conj(), options

    def assume_full_rank(self):
        return True


@custom_vmap
def eigvals(a: Float[Array, "k k"]):
    """The eigenvalues of a general square matrix by LAPACK's ``geev`` for one matrix; under ``vmap`` the
    members one after another (a ``scan``), so that LAPACK is never handed a batch (which can deadlock XLA's
    CPU thread pool). For the matrices of a few rows (Floquet multipliers of a stride map) that this serves."""
    return jnp.linalg.eigvals(a)


@eigvals.def_vmap
def _eigvals_batched(axis_size, in_batched, a):
    a = a if in_batched[0] else jnp.broadcast_to(a, (axis_size,) + a.shape)
    return jax.lax.map(eigvals, a), True
