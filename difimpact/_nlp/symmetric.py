r"""The pivots of a symmetric band's elimination without pivoting, for the inertia test (:mod:`.inertia`), and
with a border, the Schur complement's correction.

For a symmetric ``A = L D Lᵀ`` (no pivoting) the signs of ``D`` are ``A``'s inertia (Sylvester's law; zero:
singular), and for a symmetric matrix bordered by ``k`` rows and columns,

$$T = \begin{bmatrix} A & B \\ B^T & C \end{bmatrix},\qquad \operatorname{In}(T) = \operatorname{In}(A)
  + \operatorname{In}(C - B^T A^{-1} B),\qquad B^T A^{-1} B = Z^T D^{-1} Z,\quad Z = L^{-1} B$$

(Haynsworth 1968): ``Z`` is the border's rows carried through the same elimination. Only ``D`` and ``Zᵀ D⁻¹ Z``
are computed: symmetry halves the work of an ``LU``, and no factor is kept (Golub & Van Loan, *Matrix
Computations*, 4th ed., §4.1.2 and §4.3.5).
"""

import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Float
from .banded import BLOCK, BLOCKED_MIN, BandedStructure, _panel_column


def ldl_pivots(s: BandedStructure, band: Float[Array, "n w"], block: int | None = None) -> Float[Array, " n"]:
    r"""The pivots ``d`` of ``A = L D Lᵀ`` without pivoting, for a symmetric ``A`` in band storage
    (``k_l = k_u``, :mod:`.banded`); they equal the pivots of :func:`.banded.factor` with ``pivoting=False`` (to
    rounding). A ``scan`` over blocks of `block` columns carries the symmetric ``(k_l + b) × (k_l + b)`` window of
    block ``J``; its first ``b`` columns are eliminated column by column, then

    $$W_{22} \leftarrow W_{22} - L_{21} D_1 L_{21}^\top$$

    (one matrix product per block) and the window moves ``b`` down and right: ``W₂₂`` its top left, the ``b``
    rows entering as stored (no earlier block touched them) and their transpose. ``O(n k_l²)`` work,
    ``O(k_l²)`` memory beside the storage. `block` as in :func:`.banded.factor`."""
    return _sweep(s, band, None, block)[0]


def ldl_pivots_bordered(s: BandedStructure, band: Float[Array, "n w"], border: Float[Array, "n k"],
                        block: int | None = None) -> tuple[Float[Array, " n"], Float[Array, "k k"]]:
    r"""``(d, Bᵀ A⁻¹ B)``: :func:`ldl_pivots` and, for the `border` ``B`` (``n × k``, rows in ``A``'s own
    numbering), ``Zᵀ D⁻¹ Z`` with ``Z = L⁻¹ B`` (module docstring): the window carries ``B``'s rows, each column's
    multipliers update them, and every block adds its finished rows' ``Z_Jᵀ D_J⁻¹ Z_J``. ``O(n k_l (k_l + k))``
    work: one sweep, where a solve per border column is ``k`` of them."""
    d, G = _sweep(s, band, jnp.asarray(border)[np.asarray(s.perm)], block)
    return d, 0.5 * (G + G.T)


def _sweep(s: BandedStructure, band, border, block):
    if s.lower != s.upper:
        raise ValueError(f"ldl_pivots: a symmetric band has k_l = k_u, got {s.lower} and {s.upper}.")
    if block is None:
        block = BLOCK if s.lower >= BLOCKED_MIN else 1
    if not isinstance(block, int) or block < 1:
        raise ValueError(f"`block` must be a positive int, got {block!r}.")
    n, kl, b = band.shape[0], s.lower, block
    R, blocks = kl + b, -(-n // block)
    size = blocks * b
    tiny = jnp.finfo(band.dtype).tiny
    padded = jnp.zeros((size + kl + b, band.shape[1]), band.dtype).at[:n].set(band)
    padded = padded.at[np.arange(n, size), kl].set(1.0)  # rows and columns of the identity up to whole blocks
    k = 0 if border is None else border.shape[1]
    rows_b = jnp.zeros((size + kl + b, k), band.dtype)
    rows_b = rows_b if border is None else rows_b.at[:n].set(border)
    # row i = f + k_l + ρ entering at column f: A[i, f + t] = B[i, t − ρ] (t < R), inside the band for 0 ≤ t − ρ ≤ 2k_l
    rho, off = np.arange(b)[:, None], np.arange(R)[None, :] - np.arange(b)[:, None]
    inside, off = (off >= 0) & (off <= 2 * kl), np.clip(off, 0, 2 * kl)

    def rows_from(first):  # the b rows entering at column `first`, (b, R), and the border's (b, k)
        rows = jax.lax.dynamic_slice_in_dim(padded, first + kl, b)
        return jnp.where(inside, rows[rho, off], 0.0), jax.lax.dynamic_slice_in_dim(rows_b, first + kl, b)

    r, c = np.arange(R), np.arange(b)

    def column(i, carry):
        P, d, Y = carry
        P, l, pivot = _panel_column(P, i, r, c, tiny)
        if border is not None:
            Y = Y - l[:, None] * jax.lax.dynamic_index_in_dim(Y, i, keepdims=False)[None, :]
        return P, d.at[i].set(pivot), Y

    def step(carry, j):
        W, Y, G = carry
        P, d, Y = jax.lax.fori_loop(0, b, column, (W[:, :b], jnp.zeros(b, W.dtype), Y))
        L21 = P[b:]
        W22 = W[b:, b:] - (L21 * d[None, :]) @ L21.T
        E, F = rows_from((j + 1) * b)
        E, F = jnp.where(j + 1 < blocks, E, 0.0), jnp.where(j + 1 < blocks, F, 0.0)  # (b, R), (b, k)
        top = jnp.concatenate([W22, E[:, :kl].T], axis=1)
        if border is not None:
            G = G + Y[:b].T @ (Y[:b] / d[:, None])
        return (jnp.concatenate([top, E], axis=0), jnp.concatenate([Y[b:], F]), G), d

    i = np.arange(R)[:, None]
    o = np.arange(R)[None, :] - i + kl  # the first window, A[i, t] = B[i, t − i + k_l], i, t < R
    W0 = jnp.where((o >= 0) & (o <= 2 * kl), padded[i, np.clip(o, 0, 2 * kl)], 0.0)
    (_, _, G), d = jax.lax.scan(step, (W0, rows_b[:R], jnp.zeros((k, k), band.dtype)), jnp.arange(blocks))
    return d.reshape(size)[:n], G
