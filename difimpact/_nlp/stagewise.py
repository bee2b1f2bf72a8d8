r"""The Newton matrix ordered by stage and factored by block cyclic reduction: a depth logarithmic in the mesh.

Ordered by stage (a mesh point with its midpoint: their variables and the multipliers of the rows that start
there), a collocation problem's Newton matrix without its border (:mod:`.bordered`) is block tridiagonal,

$$M = \begin{bmatrix} D_0 & U_0 \\ L_1 & D_1 & U_1 \\ & \ddots & \ddots & \ddots \\ & & L_{N-1} & D_{N-1}
  \end{bmatrix},$$

each block ``s × s`` (the stages padded to one size with rows and columns of the identity). Odd-even (cyclic)
reduction eliminates the odd stages at once: with $X_j = D_j^{-1} L_j$, $Y_j = D_j^{-1} U_j$ for odd ``j``,

$$D_i' = D_i - L_i Y_{i-1} - U_i X_{i+1},\qquad L_i' = -L_i X_{i-1},\qquad U_i' = -U_i Y_{i+1}$$

for even ``i``, a block tridiagonal matrix of half the size (Heller, *Some aspects of the cyclic reduction
algorithm for block tridiagonal linear systems*, SIAM J. Numer. Anal. 13, 1976; Gander & Golub, *Cyclic
reduction — history and applications*, 1997). After ``⌈log₂ N⌉`` levels one block is left. Each level's work is
batched over its blocks (dense ``LU`` with partial pivoting inside each ``D_j``, written as loops over the ``s``
columns, vectorised over the blocks: no LAPACK), so the sequential depth is ``O(s log N)`` steps where the banded
sweep of :mod:`.banded` takes ``O(N s)``: the variant for a GPU. Work ``O(N s³)`` (about twice the band's) and
memory ``O(N s²)``: linear in the mesh.

The eliminated blocks must be nonsingular. In the band ordering they are not (a block holds multipliers whose rows'
variables lie in the next block; ``benchmarks/MEASURED_APART.md``); by stage they are Schur complements of the
stages' own KKT blocks, nonsingular where the stage's Hessian is on its controls (Riccati's condition). The
smallest relative pivot is reported (``min_pivot``), as the band's is, so that a singular reduction is seen.

For a symmetric ``M`` each level is a Schur complement, so by Haynsworth's inertia additivity
``In(M) = Σ_levels Σ_odd In(D_j) + In(D_last)``: the pivots of each eliminated block's ``LDLᵀ`` (without pivoting)
give the inertia test of :mod:`.inertia`.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Float, Int


class StageStructure(eqx.Module):
    """The stage of each unknown of the main block (its own numbering ``0 … m − 1``), its slot in the padded
    ``N s`` vector, the number of stages ``N`` and their padded size ``s``."""

    stage: tuple[int, ...] = eqx.field(static=True)
    slot: tuple[int, ...] = eqx.field(static=True)
    stages: int = eqx.field(static=True)
    size: int = eqx.field(static=True)

    @classmethod
    def of(cls, rows, cols, stage) -> "StageStructure":
        """From the main block's nonzeros and each unknown's `stage` (``O(nnz + m log m)``); an entry between
        stages more than one apart is an error (the matrix is not block tridiagonal by stage)."""
        stage = np.asarray(stage, np.int64)
        if stage.size and stage.min() < 0:
            raise ValueError("StageStructure: every unknown needs a stage.")
        rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
        if rows.size and np.max(np.abs(stage[rows] - stage[cols])) > 1:
            raise ValueError("StageStructure: an entry couples stages more than one apart.")
        stages = int(stage.max(initial=-1)) + 1
        order = np.argsort(stage, kind="stable")
        counts = np.bincount(stage, minlength=stages)
        start = np.concatenate([[0], np.cumsum(counts)[:-1]])
        size = int(counts.max(initial=1))
        slot = np.empty_like(stage)
        slot[order] = stage[order] * size + np.arange(stage.size) - start[stage[order]]
        return cls(tuple(int(v) for v in stage), tuple(int(v) for v in slot), stages, size)

    def storage_size(self) -> int:
        return self.stages * 3 * self.size * self.size

    def positions(self, rows, cols) -> np.ndarray:
        """Where the entries ``(rows, cols)`` lie in the flat storage ``(N, 3, s, s)`` (``L_a``, ``D_a``,
        ``U_a`` of the row's stage ``a``)."""
        stage, slot, s = np.asarray(self.stage), np.asarray(self.slot), self.size
        rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
        a, kind = stage[rows], stage[cols] - stage[rows] + 1
        if np.any((kind < 0) | (kind > 2)):
            raise ValueError("StageStructure: an entry outside the block tridiagonal.")
        return ((a * 3 + kind) * s + slot[rows] % s) * s + slot[cols] % s

    def blocks(self, flat: Float[Array, " t"]):
        """``(L, D, U)``, each ``(N, s, s)``, the padding's diagonal in ``D`` set to one."""
        N, s = self.stages, self.size
        B = flat.reshape(N, 3, s, s)
        padding = np.ones(N * s, bool)
        padding[np.asarray(self.slot)] = False
        eye = np.eye(s, dtype=bool)[None] & padding.reshape(N, s)[:, :, None]
        return B[:, 0], jnp.where(eye, 1.0, B[:, 1]), B[:, 2]


def _swap(a, k, p):
    """Rows ``k`` (the loop's index) and ``p`` (one per block, ``(N,)``) of the blocks ``a``
    (``(N, s, …)``) exchanged by one-hot arithmetic."""
    at_p = (jnp.arange(a.shape[1])[None, :] == p[:, None]).reshape(a.shape[:2] + (1,) * (a.ndim - 2))
    row_p = jnp.sum(jnp.where(at_p, a, 0), axis=1)
    row_k = jax.lax.dynamic_index_in_dim(a, k, axis=1, keepdims=False)
    a = jnp.where(at_p, row_k[:, None], a)
    return jax.lax.dynamic_update_index_in_dim(a, row_p, k, axis=1)


class BlockLU(eqx.Module):
    """``P_j D_j = L_j U_j`` of a batch of blocks (packed), the row order and each block's smallest relative
    pivot."""

    lu: Float[Array, "N s s"]
    perm: Int[Array, "N s"]
    min_pivot: Float[Array, " N"]


def _lu(D: Float[Array, "N s s"], pivoting: bool = True) -> BlockLU:
    """Gaussian elimination of every block at once, one column per loop step (Golub & Van Loan, Algorithm 3.4.1);
    without pivoting where `pivoting` is false (the pivots of ``LDLᵀ`` then, for a symmetric block)."""
    N, s, _ = D.shape
    idx = jnp.arange(s)
    tiny = jnp.finfo(D.dtype).tiny

    def step(j, carry):
        a, perm = carry
        col = jax.lax.dynamic_index_in_dim(a, j, axis=2, keepdims=False)
        p = jnp.argmax(jnp.where(idx[None] >= j, jnp.abs(col), -1.0), axis=1) if pivoting else jnp.full(N, j)
        a, perm = _swap(a, j, p), _swap(perm, j, p)
        row = jax.lax.dynamic_index_in_dim(a, j, axis=1, keepdims=False)
        pivot = jnp.take(row, j, axis=1)
        pivot = jnp.where(pivot == 0, tiny, pivot)
        col = jax.lax.dynamic_index_in_dim(a, j, axis=2, keepdims=False)
        l = jnp.where(idx[None] > j, col / pivot[:, None], 0.0)
        a = a - l[:, :, None] * jnp.where(idx[None] > j, row, 0.0)[:, None, :]
        return jnp.where((idx == j)[None, None, :] & (idx > j)[None, :, None], l[:, :, None], a), perm

    lu, perm = jax.lax.fori_loop(0, s, step, (D, jnp.broadcast_to(idx, (N, s))))
    scale = jnp.max(jnp.abs(D), axis=(1, 2))
    pivots = jnp.abs(jnp.diagonal(lu, axis1=1, axis2=2))
    return BlockLU(lu, perm, jnp.where(scale > 0, jnp.min(pivots, axis=1) / jnp.where(scale > 0, scale, 1.0), 0.0))


def _lu_solve(f: BlockLU, B: Float[Array, "N s k"]) -> Float[Array, "N s k"]:
    """``D_j⁻¹ B_j`` for every block: the row order, forward and back substitution, a column of ``L``/``U`` per
    loop step."""
    s = B.shape[1]
    idx = jnp.arange(s)
    x = jnp.take_along_axis(B, f.perm[:, :, None], axis=1)

    def forward(k, x):
        l = jnp.where(idx[None] > k, jax.lax.dynamic_index_in_dim(f.lu, k, axis=2, keepdims=False), 0.0)
        return x - l[:, :, None] * jax.lax.dynamic_index_in_dim(x, k, axis=1)

    def backward(i, x):
        k = s - 1 - i
        u = jax.lax.dynamic_index_in_dim(f.lu, k, axis=2, keepdims=False)
        xk = jax.lax.dynamic_index_in_dim(x, k, axis=1) / jnp.take(u, k, axis=1)[:, None, None]
        x = x - jnp.where(idx[None] < k, u, 0.0)[:, :, None] * xk
        return jax.lax.dynamic_update_index_in_dim(x, xk[:, 0], k, axis=1)

    return jax.lax.fori_loop(0, s, backward, jax.lax.fori_loop(0, s, forward, x))


class Level(eqx.Module):
    """One level of the reduction: the odd blocks' factors, ``X = D⁻¹ L`` and ``Y = D⁻¹ U`` of the odd blocks,
    and the even blocks' couplings ``L``, ``U`` (what a right-hand side's reduction needs)."""

    odd: BlockLU
    X: Float[Array, "N2 s s"]
    Y: Float[Array, "N2 s s"]
    L: Float[Array, "N2 s s"]
    U: Float[Array, "N2 s s"]


class StageLU(eqx.Module):
    """The levels of the reduction, the last block's factors, the smallest relative pivot and, where asked for,
    the pivots of every eliminated block's and the last block's elimination without row exchanges."""

    levels: tuple[Level, ...]
    last: BlockLU
    min_pivot: Float[Array, ""]
    pivots: Float[Array, " p"] | None


def _even(D, L, U):
    """The blocks padded to an even number with an uncoupled identity."""
    if D.shape[0] % 2 == 0:
        return D, L, U
    eye, zero = jnp.eye(D.shape[1], dtype=D.dtype)[None], jnp.zeros_like(D[:1])
    return jnp.concatenate([D, eye]), jnp.concatenate([L, zero]), jnp.concatenate([U, zero])


def _previous(a):
    """``a`` moved one place along the blocks, a zero block first (the odd neighbour before an even block)."""
    return jnp.concatenate([jnp.zeros_like(a[:1]), a[:-1]])


def factor(st: StageStructure, flat: Float[Array, " t"], pivoting: bool = True, inertia: bool = False) -> StageLU:
    """The reduction (module docstring) of the block tridiagonal matrix stored flat
    (:meth:`StageStructure.positions`), each block's ``LU`` with partial pivoting (`pivoting` false: without row
    exchanges); with `inertia`, also every eliminated block's pivots without row exchanges."""
    L, D, U = st.blocks(flat)
    levels, pivots = [], []

    def unpivoted(D):
        if inertia:
            pivots.append(jnp.diagonal(_lu(D, pivoting=False).lu, axis1=1, axis2=2).reshape(-1))

    while D.shape[0] > 1:
        D, L, U = _even(D, L, U)
        odd = _lu(D[1::2], pivoting)
        unpivoted(D[1::2])
        s = D.shape[1]
        XY = _lu_solve(odd, jnp.concatenate([L[1::2], U[1::2]], axis=2))
        X, Y = XY[:, :, :s], XY[:, :, s:]
        Le, Ue = L[0::2], U[0::2]
        levels.append(Level(odd, X, Y, Le, Ue))
        D = D[0::2] - Le @ _previous(Y) - Ue @ X
        L, U = -Le @ _previous(X), -Ue @ Y
    last = _lu(D, pivoting)
    unpivoted(D)
    min_pivot = jnp.min(jnp.concatenate([last.min_pivot] + [v.odd.min_pivot for v in levels]))
    return StageLU(tuple(levels), last, min_pivot, jnp.concatenate(pivots) if inertia else None)


def solve(st: StageStructure, f: StageLU, b: Float[Array, "m ..."]) -> Float[Array, "m ..."]:
    """``M⁻¹ b`` (one right-hand side or ``m × k``): each level's odd stages solved and eliminated from the even
    ones, the last block solved, then the odd stages back-substituted level by level."""
    N, s = st.stages, st.size
    slot = np.asarray(st.slot)
    columns = b.shape[1:]
    B = b.reshape(b.shape[0], -1)
    r = jnp.zeros((N * s, B.shape[1]), B.dtype).at[slot].set(B).reshape(N, s, -1)
    kept = []
    for level in f.levels:
        if r.shape[0] % 2:
            r = jnp.concatenate([r, jnp.zeros_like(r[:1])])
        w = _lu_solve(level.odd, r[1::2])
        kept.append(w)
        r = r[0::2] - level.L @ _previous(w) - level.U @ w
    x = _lu_solve(f.last, r)
    for level, w in zip(reversed(f.levels), reversed(kept)):
        following = jnp.concatenate([x[1:], jnp.zeros_like(x[:1])])[: w.shape[0]]
        odd = w - level.X @ x[: w.shape[0]] - level.Y @ following
        x = jnp.stack([x[: w.shape[0]], odd], axis=1).reshape((-1,) + x.shape[1:])
    x = x[:N].reshape(N * s, -1)[slot]
    return x.reshape((b.shape[0],) + columns)


def ldl_pivots_bordered(st: StageStructure, flat: Float[Array, " t"], border: Float[Array, "m k"]):
    """``(d, Bᵀ M⁻¹ B)`` for a symmetric ``M`` (as :func:`.symmetric.ldl_pivots_bordered`): ``d`` the pivots of
    every eliminated block's and the last block's elimination without row exchanges (their signs are ``M``'s
    inertia, module docstring), ``M⁻¹ B`` through the same (pivoted) reduction."""
    f = factor(st, flat, inertia=True)
    G = border.T @ solve(st, f, border)
    return f.pivots, 0.5 * (G + G.T)
