r"""Banded ``LU`` with partial pivoting, after a bandwidth-reducing symmetric ordering of a sparse pattern.

A collocation problem's Newton matrix couples each mesh point with its neighbours only (and the first with the
last, through the periodicity): ordered by reverse Cuthill–McKee (George & Liu, *Computer Solution of Large
Sparse Positive Definite Systems*, 1981, §4.3) it is banded, with ``k_l`` sub- and ``k_u`` super-diagonals, and
Gaussian elimination with partial pivoting keeps ``L`` within ``k_l`` and ``U`` within ``k_l + k_u`` diagonals
(LAPACK ``dgbtf2``; Golub & Van Loan, *Matrix Computations*, 4th ed., §4.3.5). Each step of a ``scan``
works on a window of the band, one column at a time or, for a wide band, a block of columns whose update of the
rest is one matrix product (LAPACK ``dgbtrf``): a factorisation costs ``O(n k_l (k_l + k_u))`` and memory
``O(n (2k_l + k_u))`` instead of the dense $O(n^3)$ and $O(n^2)$: fine meshes stay affordable.

Row ``i`` of the storage ``B`` holds ``A[i, i - k_l : i + k_l + k_u + 1]``; the multipliers of step ``j`` stay
in the rows where they were computed, and the row exchanges are replayed in the solve (as LAPACK does).
"""

import collections

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Float, Int
from .dense import swap_rows
from .matrix import Pattern


def reverse_cuthill_mckee(pattern) -> np.ndarray:
    """A symmetric ordering of the ``n × n`` `pattern` (a boolean array or a :class:`~.matrix.Pattern`, made
    symmetric) with a small bandwidth: breadth-first from a node of least degree, neighbours by increasing degree,
    reversed. ``O(nnz log nnz)``: the adjacency is read row by row from the sorted nonzeros, never as a dense
    row."""
    p = pattern if isinstance(pattern, Pattern) else Pattern.of(pattern)
    n = p.shape[0]
    sym = Pattern(np.concatenate([p.rows, p.cols]), np.concatenate([p.cols, p.rows]), (n, n))
    degree = sym.row_counts()
    indptr = np.concatenate([[0], np.cumsum(degree)])
    order, seen = [], np.zeros(n, bool)
    for start in np.argsort(degree, kind="stable"):
        if seen[start]:
            continue
        seen[start] = True
        queue = collections.deque([start])
        while queue:
            node = queue.popleft()
            order.append(node)
            neighbours = sym.cols[indptr[node]:indptr[node + 1]]
            neighbours = neighbours[~seen[neighbours]]
            neighbours = neighbours[np.argsort(degree[neighbours], kind="stable")]
            seen[neighbours] = True
            queue.extend(neighbours.tolist())
    return np.asarray(order[::-1], dtype=np.int64)


class BandedStructure(eqx.Module):
    """The static ordering `perm` and the bandwidths of a pattern."""

    perm: tuple[int, ...] = eqx.field(static=True)
    lower: int = eqx.field(static=True)
    upper: int = eqx.field(static=True)

    @classmethod
    def of(cls, pattern) -> "BandedStructure":
        """From a boolean array or a :class:`~.matrix.Pattern` (square), in ``O(nnz log nnz)``."""
        p = pattern if isinstance(pattern, Pattern) else Pattern.of(pattern)
        perm = reverse_cuthill_mckee(p)
        inverse = np.empty_like(perm)
        inverse[perm] = np.arange(perm.size)
        i, j = inverse[p.rows], inverse[p.cols]
        return cls(tuple(int(k) for k in perm), int(max(0, np.max(i - j, initial=0))),
                   int(max(0, np.max(j - i, initial=0))))

    @property
    def width(self) -> int:
        return 2 * self.lower + self.upper + 1

    def positions(self, rows, cols) -> np.ndarray:
        """Where the entries ``(rows, cols)`` (unpermuted) lie in the flattened band storage ``B`` (row ``i``
        of the permuted matrix holds ``A[i, i − k_l : i + k_l + k_u + 1]``)."""
        perm = np.asarray(self.perm)
        inverse = np.empty_like(perm)
        inverse[perm] = np.arange(perm.size)
        i, j = inverse[np.asarray(rows)], inverse[np.asarray(cols)]
        offset = j - i + self.lower
        if np.any((i - j > self.lower) | (j - i > self.upper)):
            raise ValueError("BandedStructure: an entry outside the band.")
        return (i * self.width + offset).astype(np.int64)


class BandedLU(eqx.Module):
    """The banded factors (storage ``B``), the pivots (relative row offsets) and the smallest relative pivot."""

    band: Float[Array, "n w"]
    pivots: Int[Array, " n"]
    min_pivot: Float[Array, ""]


def to_band(s: BandedStructure, a: Float[Array, "n n"]) -> Float[Array, "n w"]:
    """The band storage of the permuted ``a`` (entries outside the band are dropped: they must be zero)."""
    n = a.shape[0]
    perm = np.asarray(s.perm)
    rows = np.arange(n)[:, None]
    cols = rows - s.lower + np.arange(s.width)[None, :]
    valid = (cols >= 0) & (cols < n)
    ap = a[np.ix_(perm, perm)]
    return jnp.where(valid, ap[rows, np.clip(cols, 0, n - 1)], 0.0)


def _window(s: BandedStructure, band: Float[Array, "n w"]) -> Float[Array, "kl+1 m"]:
    """The first step's window ``W[r, t] = A[r, t]`` (``r ≤ k_l``, ``t ≤ k_l + k_u``) from the row storage,
    ``A[r, t] = B[r, t − r + k_l]``."""
    r = np.arange(s.lower + 1)[:, None]
    cols = np.arange(s.lower + s.upper + 1)[None, :] - r + s.lower  # within 0 … 2k_l + k_u: the storage's width
    return jnp.pad(band, ((0, s.lower + 1), (0, 0)))[r, cols]  # rows past n (a matrix smaller than the window): 0


BLOCK = 16  # columns per step of the blocked elimination
BLOCKED_MIN = 64  # k_l from which the blocked elimination is the faster (benchmarks/MEASURED_APART.md)


def factor(s: BandedStructure, band: Float[Array, "n w"], pivoting: bool = True, block: int | None = None) -> BandedLU:
    """Gaussian elimination with partial pivoting on the band storage; without pivoting where `pivoting` is
    false (the pivots' signs are then the inertia of a symmetric matrix). `block` columns per step
    (:func:`_blocked`; 1: :func:`_by_rows`); by default ``BLOCK`` from ``k_l ≥ BLOCKED_MIN`` on, else 1. Both give
    the same factors (to rounding) in the same storage."""
    if block is None:
        block = BLOCK if s.lower >= BLOCKED_MIN else 1
    if not isinstance(block, int) or block < 1:
        raise ValueError(f"`block` must be a positive int, got {block!r}.")
    kl = s.lower
    if block == 1:
        U, L, piv = _by_rows(s, band, pivoting)
    else:
        U, L, piv = _blocked(s, band, pivoting, block)
    # B[i, k_l − q] = the multiplier of row i at step i − q (q = 1…k_l): L's columns sheared
    B = jnp.concatenate([_sheared(L)[:, ::-1], U], axis=1)
    diag = jnp.abs(B[:, kl])
    scale = jnp.max(jnp.abs(band))
    min_pivot = jnp.where(scale > 0, jnp.min(diag) / jnp.where(scale > 0, scale, 1.0), 0.0)
    return BandedLU(B, piv, min_pivot)


def _sheared(L: Float[Array, "n k"]) -> Float[Array, "n k"]:
    """``S[i, q − 1] = L[i − q, q − 1]`` (``0`` for ``i < q``), ``q = 1…k``, by a reshape of the padded transpose
    (row ``j`` of ``[Lᵀ | 0]`` read with a stride one shorter moves ``j`` places right): no index array, whose
    size would grow with the mesh in the program."""
    n, k = L.shape
    Z = jnp.concatenate([jnp.zeros((k, 1), L.dtype), L.T, jnp.zeros((k, k), L.dtype)], axis=1)  # (k, n + k + 1)
    return Z.reshape(-1)[: k * (n + k)].reshape(k, n + k)[:, :n].T


def _by_rows(s: BandedStructure, band, pivoting):
    """``(U, L, pivots)``, one column per step (LAPACK ``dgbtf2``): a ``scan`` over the columns carries the
    ``(k_l + 1) × (k_l + k_u + 1)`` window ``W[r, t] = A[j + r, j + t]`` of step ``j``: the pivot row exchanged to
    the top, the rows below eliminated, the window moved one down and to the right (row ``j + k_l + 1`` enters, as
    stored: no earlier step touched it, and no entry of the new column above it is nonzero). Each step emits its
    row of ``U`` and its multipliers; the work per step is the window's, not the whole storage's."""
    n, kl, ku = band.shape[0], s.lower, s.upper
    m = kl + ku + 1
    tiny = jnp.finfo(band.dtype).tiny
    entering = jnp.pad(band[:, :m], ((0, kl + 1), (0, 0)))[kl + 1:kl + 1 + n]  # W[k_l] of step j + 1
    r = np.arange(kl + 1)

    def step(W, xs):
        j, new = xs
        p = jnp.argmax(jnp.where(j + r < n, jnp.abs(W[:, 0]), -1.0)) if pivoting else jnp.zeros((), int)
        W = swap_rows(W, 0, p)
        pivot = jnp.where(W[0, 0] == 0, tiny, W[0, 0])
        l = W[1:, 0] / pivot
        below = W[1:, 1:] - l[:, None] * W[0, 1:][None, :]
        return jnp.concatenate([jnp.pad(below, ((0, 0), (0, 1))), new[None]]), (W[0], l, p)

    _, (U, L, piv) = jax.lax.scan(step, _window(s, band), (jnp.arange(n), entering))
    return U, L, piv


def _panel_column(P, k, r, c, tiny):
    """Column ``k`` of a panel ``P`` (rows `r`, columns `c`) eliminated without exchange: the rows below ``k``
    updated right of it and its multipliers stored in its place. **Returns:** ``(P, multipliers, pivot)``."""
    row = jax.lax.dynamic_index_in_dim(P, k, axis=0, keepdims=False)
    pivot = jax.lax.dynamic_index_in_dim(row, k, keepdims=False)
    l = jnp.where(r > k, jax.lax.dynamic_index_in_dim(P, k, axis=1, keepdims=False), 0.0)
    l = l / jnp.where(pivot == 0, tiny, pivot)
    P = P - l[:, None] * jnp.where(c > k, row, 0.0)[None, :]
    return jnp.where((c == k)[None, :] & (r > k)[:, None], l[:, None], P), l, pivot


def _blocked(s: BandedStructure, band, pivoting, b):
    r"""``(U, L, pivots)`` of the same elimination, ``b`` columns per step (LAPACK ``dgbtrf``; Golub & Van Loan,
    §3.4.8 and §4.3.5): a ``scan`` over blocks of columns carries the ``(k_l + b) × (k_l + k_u + b)`` window of
    block ``J``; its first ``b`` columns (the panel) are eliminated column by column with partial pivoting, the
    panel's row exchanges applied to the rest at once, then

    $$U_{12} = L_{11}^{-1} T_1, \qquad T_2 \leftarrow T_2 - L_{21} U_{12}$$

    (``L₁₁`` unit lower triangular ``b × b``, ``L₂₁`` the panel's ``k_l`` rows below it, ``T`` the window's other
    columns): most of the work is one matrix product per block instead of ``b`` rank-one updates. Each column's
    multipliers are emitted as they are computed (the panel's later exchanges do not move them: the storage of
    :func:`_by_rows`). The matrix is padded to a multiple of ``b`` with rows and columns of the identity.
    ``O(n k_l (k_l + k_u))`` work, as by rows."""
    n, kl, ku = band.shape[0], s.lower, s.upper
    m, R, M = kl + ku + 1, kl + b, kl + ku + b
    blocks = -(-n // b)
    size = blocks * b
    tiny = jnp.finfo(band.dtype).tiny
    padded = jnp.zeros((size + kl, band.shape[1]), band.dtype).at[:n].set(band).at[np.arange(n, size), kl].set(1.0)

    def placed(i, first):  # A[i, first : first + M] from the row storage, A[i, c] = B[i, c − i + k_l]
        t = np.arange(M) + first - i[..., None] + kl
        return jnp.where((t >= 0) & (t <= kl + ku), padded[i[..., None], np.clip(t, 0, kl + ku)], 0.0)

    # rows J b + k_l + ρ enter the window of block J, placed from column J b: A[i, J b + t] = B[i, t − ρ]
    rho, t = np.arange(b)[:, None], np.arange(M)[None, :] - np.arange(b)[:, None]
    inside, t = (t >= 0) & (t <= kl + ku), np.clip(t, 0, kl + ku)

    def entering(j):  # of block j + 1 (none after the last)
        rows = jax.lax.dynamic_slice_in_dim(padded, jnp.minimum(j + 1, blocks - 1) * b + kl, b)
        return jnp.where(inside & (j + 1 < blocks), rows[rho, t], 0.0)

    r, c = np.arange(R), np.arange(b)
    strictly_lower = c[:, None] > c[None, :]

    def column(k, carry):
        P, order, L, piv, first = carry
        if pivoting:
            col = jax.lax.dynamic_index_in_dim(P, k, axis=1, keepdims=False)
            p = jnp.argmax(jnp.where((r >= k) & (first + r < size), jnp.abs(col), -1.0))
            P, order = swap_rows(P, k, p), swap_rows(order, k, p)
        else:
            p = k
        P, l, _ = _panel_column(P, k, r, c, tiny)  # L̃'s column in place: exchanged with later rows
        return P, order, L.at[k].set(l), piv.at[k].set(p - k), first

    def step(W, j):
        start = (W[:, :b], jnp.arange(R), jnp.zeros((b, R), W.dtype), jnp.zeros(b, int), j * b)
        P, order, L, piv, _ = jax.lax.fori_loop(0, b, column, start)
        T = jnp.take(W[:, b:], order, axis=0) if pivoting else W[:, b:]
        L11 = jnp.where(strictly_lower, P[:b], 0.0)
        inverse = jax.lax.fori_loop(  # L₁₁⁻¹ by forward substitution on the identity
            0, b, lambda k, X: X - jnp.where(c > k, L11[:, k], 0.0)[:, None] * X[k][None, :], jnp.eye(b, dtype=W.dtype))
        U12 = inverse @ T[:b]
        T2 = T[b:] - P[b:] @ U12
        U = jnp.concatenate([jnp.where(strictly_lower, 0.0, P[:b]), U12], axis=1)
        emitted = (U[c[:, None], c[:, None] + np.arange(m)], L[c[:, None], c[:, None] + 1 + np.arange(kl)], piv)
        return jnp.concatenate([jnp.pad(T2, ((0, 0), (0, b))), entering(j)]), emitted

    _, (U, L, piv) = jax.lax.scan(step, placed(np.arange(R), 0), jnp.arange(blocks))
    return U.reshape(size, m)[:n], L.reshape(size, kl)[:n], piv.reshape(size)[:n]


def solve(s: BandedStructure, f: BandedLU, b: Float[Array, "n ..."]) -> Float[Array, "n ..."]:
    """``A⁻¹ b`` for one right-hand side (``n``) or several (``n × k``, solved together: each step of the loops
    moves a row of ``k`` entries, not ``k`` loops under ``vmap``): the row exchanges and eliminations replayed on
    ``b``, then back substitution."""
    n, kl, ku = b.shape[0], s.lower, s.upper
    perm = np.asarray(s.perm)
    columns = b.shape[1:]
    x = jnp.pad(b[perm], ((0, kl + ku + 1),) + ((0, 0),) * len(columns))
    below = np.arange(1, kl + 1)
    band = jnp.pad(f.band, ((0, kl + 1), (0, 0)))
    expand = (slice(None),) + (None,) * len(columns)

    def forward(j, x):
        window = swap_rows(jax.lax.dynamic_slice_in_dim(x, j, kl + 1), 0, f.pivots[j])
        rows = jax.lax.dynamic_slice_in_dim(band, j + 1, kl)
        l = jnp.where(j + below < n, rows[below - 1, kl - below], 0.0)
        window = window.at[1:].add(-l[expand] * window[0][None])
        return jax.lax.dynamic_update_slice_in_dim(x, window, j, axis=0)

    def backward(i, x):
        j = n - 1 - i
        u = f.band[j, kl + 1:]
        value = (x[j] - u @ jax.lax.dynamic_slice_in_dim(x, j + 1, kl + ku)) / f.band[j, kl]
        return x.at[j].set(value)

    x = jax.lax.fori_loop(0, n, forward, x)
    x = jax.lax.fori_loop(0, n, backward, x)[:n]
    return jnp.zeros_like(x).at[perm].set(x)
