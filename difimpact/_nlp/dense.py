r"""Dense ``LU`` with partial pivoting as loops over the columns: no LAPACK, so that a batch of solves under
``vmap`` runs on XLA's own operations (the CPU's LAPACK calls under ``vmap`` can deadlock XLA's thread pool).

The matrices here are the Newton (KKT) matrices of a transcribed optimal-control problem, a few hundred rows:
too large to unroll at trace time as :mod:`difimpact._linalg` does for a model's small matrices, so each
elimination step is one iteration of a ``fori_loop`` over the (static-shape) trailing matrix. That is the
batched path on a GPU: :func:`lu_factor` and :func:`lu_solve` carry a batching rule
(``jax.custom_batching.custom_vmap``) that vectorises the loops over a batch there, while on a CPU a batch is
factored one matrix after another (a ``scan``) by the unbatched path, one call of LAPACK's ``getrf``: a few
hundred sequential loop steps cost more than the arithmetic at these sizes, and LAPACK is never handed a batch
(which could deadlock the pool).

Row ``k`` of the factor holds ``U[k, k:]`` and, below the diagonal, the multipliers of ``L`` (Golub & Van Loan,
*Matrix Computations*, 4th ed., Algorithm 3.4.1, with partial pivoting):

$$P A = L U .$$
"""

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap

from .._custom_types import Array, Float, Int


class LU(eqx.Module):
    """The factors of ``P A = L U`` (``L`` unit lower, strictly below the diagonal of `lu`; ``U`` on and above
    it), the row order `perm` (``(P A)[i] = A[perm[i]]``) and `min_pivot`, the smallest ``|u_kk|`` relative to
    ``max |A|`` (``0`` for a singular ``A``)."""

    lu: Float[Array, "n n"]
    perm: Int[Array, " n"]
    min_pivot: Float[Array, ""]


_BLOCK = 32


def swap_rows(a, k, p):
    """``a`` with rows ``k`` (a loop index) and ``p`` (a pivot, batched under ``vmap``) exchanged, by one-hot
    arithmetic rather than an indexed gather and scatter (which ``vmap`` makes general and slow on a CPU)."""
    at_p = jnp.arange(a.shape[0]) == p
    shape = (-1,) + (1,) * (a.ndim - 1)
    row_p = jnp.sum(jnp.where(at_p.reshape(shape), a, 0), axis=0)
    row_k = jax.lax.dynamic_index_in_dim(a, k, keepdims=False)
    a = jnp.where(at_p.reshape(shape), row_k, a)
    return jax.lax.dynamic_update_index_in_dim(a, row_p, k, axis=0)


def _panel(panel):
    """Factor the column panel ``(r, b)`` (the rows and columns from the panel's diagonal on) with partial
    pivoting; returns it with ``L``'s multipliers below and ``U`` on and above the diagonal, and the row order."""
    r, b = panel.shape
    idx = jnp.arange(r)
    tiny = jnp.finfo(panel.dtype).tiny

    def step(j, carry):
        panel, order = carry
        p = jnp.argmax(jnp.where(idx >= j, jnp.abs(panel[:, j]), -1.0))
        panel, order = swap_rows(panel, j, p), swap_rows(order, j, p)
        pivot = panel[j, j]
        pivot = jnp.where(pivot == 0, tiny, pivot)
        below = idx > j
        l = jnp.where(below, panel[:, j] / pivot, 0.0)
        cols = jnp.arange(b) > j
        panel = panel - l[:, None] * jnp.where(cols, panel[j], 0.0)[None, :]
        return panel.at[:, j].set(jnp.where(below, l, panel[:, j])), order

    return jax.lax.fori_loop(0, b, step, (panel, idx))


def _unit_lower_inverse(l):
    """``L⁻¹`` of the unit lower triangle of the ``b × b`` block `l`, by forward substitution on ``I``."""
    b = l.shape[0]
    lower = jnp.tril(l, -1)

    def step(i, inv):
        return inv.at[i].set(inv[i] - lower[i] @ inv)

    return jax.lax.fori_loop(0, b, step, jnp.eye(b, dtype=l.dtype))


def _loop_factor(a):
    """Factor ``a`` by blocked Gaussian elimination with partial pivoting (Golub & Van Loan, Algorithm 3.4.2):
    panels of 32 columns factored column by column, the trailing matrix updated by one matrix product per panel.
    The panels are a Python loop, so each works on the static trailing block (``⅔ n³`` operations in all);
    ``a`` is padded with the identity to a multiple of the panel width."""
    n = a.shape[0]
    b = min(_BLOCK, n)
    perm = jnp.arange(n)
    for kb in range(0, n, b):
        e = kb + b
        panel, order = _panel(a[kb:, kb:e])
        rows = a[kb:][order]
        perm = perm.at[kb:].set(perm[kb:][order])
        u12 = _unit_lower_inverse(panel[:b]) @ rows[:b, e:]
        trailing = rows[b:, e:] - panel[b:] @ u12
        top = jnp.concatenate([rows[:b, :kb], panel[:b], u12], axis=1)
        bottom = jnp.concatenate([rows[b:, :kb], panel[b:], trailing], axis=1)
        a = jnp.concatenate([a[:kb], top, bottom], axis=0)
    return a, perm


def _padded(a):
    n0 = a.shape[0]
    b = min(_BLOCK, n0)
    n = -(-n0 // b) * b
    return jnp.pad(a, ((0, n - n0), (0, n - n0))).at[n0:, n0:].set(jnp.eye(n - n0, dtype=a.dtype))


@custom_vmap
def _factor(a):
    lu, _, perm = jax.lax.linalg.lu(a)
    return lu, perm.astype(jnp.arange(1).dtype)


def _batched(unbatched, looped, axis_size, in_batched, *args):
    """A batch: on a CPU one matrix after another through the unbatched (LAPACK) path, a scan that never
    hands LAPACK a batch; elsewhere (a GPU) the loops vectorised over the batch."""
    args = [x if batched else jnp.broadcast_to(x, (axis_size,) + x.shape) for x, batched in zip(args, in_batched)]
    return jax.lax.platform_dependent(*args, cpu=lambda *a: jax.lax.map(lambda b: unbatched(*b), a),
                                      default=jax.vmap(looped))


@_factor.def_vmap
def _factor_batched(axis_size, in_batched, a):
    return _batched(_factor, _loop_factor, axis_size, in_batched, a), (True, True)


def lu_factor(a: Float[Array, "n n"]) -> LU:
    """Factor ``a`` (padded with the identity to a multiple of the panel width): LAPACK's ``getrf`` for one
    matrix, :func:`_loop_factor` under ``vmap``."""
    n0 = a.shape[0]
    scale = jnp.max(jnp.abs(a))
    lu, perm = _factor(_padded(a))
    pivots = jnp.abs(jnp.diagonal(lu))[:n0]
    min_pivot = jnp.where(scale > 0, jnp.min(pivots) / jnp.where(scale > 0, scale, 1.0), 0.0)
    return LU(lu, perm, min_pivot)


def lu_solve(f: LU, b: Float[Array, " n"]) -> Float[Array, " n"]:
    """``x = A⁻¹ b`` from the factors: forward substitution with ``L``, back substitution with ``U`` (LAPACK's
    triangular solves for one system, loops under ``vmap``)."""
    n0, n = b.shape[0], f.lu.shape[0]
    return _solve(f.lu, f.perm, jnp.pad(b, (0, n - n0)))[:n0]


@custom_vmap
def _solve(lu, perm, b):
    x = b[perm]
    x = jax.lax.linalg.triangular_solve(lu, x[:, None], left_side=True, lower=True, unit_diagonal=True)
    return jax.lax.linalg.triangular_solve(lu, x, left_side=True, lower=False)[:, 0]


@_solve.def_vmap
def _solve_batched(axis_size, in_batched, lu, perm, b):
    return _batched(_solve, _loop_solve, axis_size, in_batched, lu, perm, b), True


def _loop_solve(lu, perm, b):
    n = b.shape[0]
    idx = jnp.arange(n)
    x = b[perm]

    def forward(k, x):
        return x - jnp.where(idx > k, lu[:, k], 0.0) * x[k]

    def backward(j, x):
        k = n - 1 - j
        xk = x[k] / lu[k, k]
        x = x - jnp.where(idx < k, lu[:, k], 0.0) * xk
        return x.at[k].set(xk)

    x = jax.lax.fori_loop(0, n, forward, x)
    return jax.lax.fori_loop(0, n, backward, x)
