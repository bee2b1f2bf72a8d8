r"""Dense ``LU`` with partial pivoting as loops over the columns: no LAPACK, so that a batch of solves under
``vmap`` runs on XLA's own operations (the CPU's LAPACK calls under ``vmap`` can deadlock XLA's thread pool).

The matrices here are the Newton (KKT) matrices of a transcribed optimal-control problem, a few hundred rows:
too large to unroll at trace time as :mod:`difimpact._linalg` does for a model's small matrices, so each
elimination step is one iteration of a ``fori_loop`` over the whole (static-shape) matrix.

Row ``k`` of the factor holds ``U[k, k:]`` and, below the diagonal, the multipliers of ``L`` (Golub & Van Loan,
*Matrix Computations*, 4th ed., Algorithm 3.4.1, with partial pivoting):

$$P A = L U .$$
"""

import equinox as eqx
import jax
import jax.numpy as jnp

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


def _panel(a, perm, kb, b):
    """Factor the column panel ``a[:, kb:kb+b]`` with partial pivoting over the rows ``≥ kb``; the row exchanges
    are applied to the whole of ``a`` and `perm` at the end (one gather)."""
    n = a.shape[0]
    idx = jnp.arange(n)
    panel = jax.lax.dynamic_slice_in_dim(a, kb, b, axis=1)
    tiny = jnp.finfo(a.dtype).tiny

    def step(j, carry):
        panel, order = carry
        k = kb + j
        p = jnp.argmax(jnp.where(idx >= k, jnp.abs(panel[:, j]), -1.0))
        panel, order = swap_rows(panel, k, p), swap_rows(order, k, p)
        pivot = panel[k, j]
        pivot = jnp.where(pivot == 0, tiny, pivot)
        below = idx > k
        l = jnp.where(below, panel[:, j] / pivot, 0.0)
        cols = jnp.arange(b) > j
        panel = panel - l[:, None] * jnp.where(cols, panel[k], 0.0)[None, :]
        return panel.at[:, j].set(jnp.where(below, l, panel[:, j])), order

    panel, order = jax.lax.fori_loop(0, b, step, (panel, idx))
    a = jax.lax.dynamic_update_slice_in_dim(a[order], panel, kb, axis=1)
    return a, perm[order]


def _unit_lower_inverse(l):
    """``L⁻¹`` of the unit lower triangle of the ``b × b`` block `l`, by forward substitution on ``I``."""
    b = l.shape[0]
    lower = jnp.tril(l, -1)

    def step(i, inv):
        return inv.at[i].set(inv[i] - lower[i] @ inv)

    return jax.lax.fori_loop(0, b, step, jnp.eye(b, dtype=l.dtype))


def lu_factor(a: Float[Array, "n n"]) -> LU:
    """Factor ``a`` by blocked Gaussian elimination with partial pivoting (Golub & Van Loan, Algorithm 3.4.2):
    panels of 32 columns factored column by column, the trailing matrix updated by one matrix product per panel.
    ``a`` is padded with the identity to a multiple of the panel width."""
    n0 = a.shape[0]
    b = min(_BLOCK, n0)
    n = -(-n0 // b) * b
    scale = jnp.max(jnp.abs(a))
    a = jnp.pad(a, ((0, n - n0), (0, n - n0))).at[n0:, n0:].set(jnp.eye(n - n0, dtype=a.dtype))
    idx = jnp.arange(n)

    def block(i, carry):
        a, perm = carry
        kb = i * b
        a, perm = _panel(a, perm, kb, b)
        rows = jax.lax.dynamic_slice_in_dim(a, kb, b, axis=0)
        l11 = jax.lax.dynamic_slice_in_dim(rows, kb, b, axis=1)
        after = idx >= kb + b
        u12 = _unit_lower_inverse(l11) @ jnp.where(after[None, :], rows, 0.0)
        l21 = jnp.where(after[:, None], jax.lax.dynamic_slice_in_dim(a, kb, b, axis=1), 0.0)
        a = a - l21 @ u12
        rows = jnp.where(after[None, :], u12, rows)
        return jax.lax.dynamic_update_slice_in_dim(a, rows, kb, axis=0), perm

    lu, perm = jax.lax.fori_loop(0, n // b, block, (a, idx))
    pivots = jnp.abs(jnp.diagonal(lu))[:n0]
    min_pivot = jnp.where(scale > 0, jnp.min(pivots) / jnp.where(scale > 0, scale, 1.0), 0.0)
    return LU(lu, perm, min_pivot)


def lu_solve(f: LU, b: Float[Array, " n"]) -> Float[Array, " n"]:
    """``x = A⁻¹ b`` from the factors: forward substitution with ``L``, back substitution with ``U``."""
    n0, n = b.shape[0], f.lu.shape[0]
    idx = jnp.arange(n)
    lu = f.lu
    x = jnp.pad(b, (0, n - n0))[f.perm]

    def forward(k, x):
        return x - jnp.where(idx > k, lu[:, k], 0.0) * x[k]

    def backward(j, x):
        k = n - 1 - j
        xk = x[k] / lu[k, k]
        x = x - jnp.where(idx < k, lu[:, k], 0.0) * xk
        return x.at[k].set(xk)

    x = jax.lax.fori_loop(0, n, forward, x)
    return jax.lax.fori_loop(0, n, backward, x)[:n0]
