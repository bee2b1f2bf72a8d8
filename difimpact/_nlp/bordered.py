r"""A banded matrix bordered by a few rows and columns, factored through the Schur complement of its main block.

A periodic gait's Newton matrix is a ring: the first mesh point meets the last through the periodicity rows, and a
band ordering of a ring folds it, doubling the bandwidth (and quadrupling the banded elimination's work). Taken out
of the ring — the first point's variables and the periodicity rows' multipliers, ``k`` unknowns — the rest is a
path whose band is half as wide. With the border last,

$$K = \begin{bmatrix} M & B \\ C & D \end{bmatrix},\qquad S = D - C M^{-1} B,\qquad
  K^{-1}\begin{bmatrix} r_1 \\ r_2 \end{bmatrix}:\ y = M^{-1} r_1,\ x_2 = S^{-1}(r_2 - C y),\ x_1 = y - (M^{-1}B) x_2$$

(block elimination; Golub & Van Loan, *Matrix Computations*, 4th ed., §3.2.11 and §4.5.4): ``M`` by the banded
``LU`` with partial pivoting of :mod:`.banded`, ``M⁻¹B`` by its solve of the ``k`` columns together,
``S`` (``k × k``) by the dense ``LU`` of :mod:`.dense`. For a symmetric ``K`` the inertia adds up,
``In(K) = In(M) + In(S)`` (Haynsworth 1968), so eliminating both without pivoting (:func:`factor` with
``pivoting=False``) gives the inertia test of :mod:`.inertia`. The border's unknowns are chosen so that ``M`` is
the Newton matrix of a well-posed problem (the first point fixed, no periodicity): its pivots are those of that problem.

Cost: ``O(N k_l (k_l + k_u) + N k (k_l + k_u) + k^3)`` work and ``O(N (k_l + k_u + k))`` memory for ``N`` unknowns:
linear in the mesh. With no border (``k = 0``) it is the banded factorisation alone.
"""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Float
from . import banded, stagewise
from .dense import LU, lu_factor, lu_solve
from .matrix import Pattern


class BorderedStructure(eqx.Module):
    """The unknowns of the main block (`main`, in its own numbering ``0 … N − k − 1``), those of the border (in
    order) and the main block's structure: its band ordering (:mod:`.banded`), or its stages (:mod:`.stagewise`)."""

    main: tuple[int, ...] = eqx.field(static=True)
    border: tuple[int, ...] = eqx.field(static=True)
    band: banded.BandedStructure | stagewise.StageStructure

    @classmethod
    def of(cls, rows, cols, size: int, border, stages=None) -> "BorderedStructure":
        """From a square pattern's nonzeros and the unknowns to put in the border: ``O(nnz log nnz)``; with
        `stages` (each unknown's), the main block by stage (:class:`.stagewise.StageStructure`)."""
        border = np.asarray(sorted(set(int(b) for b in border)), np.int64)
        keep = np.ones(size, bool)
        keep[border] = False
        index = np.full(size, -1, np.int64)
        index[keep] = np.arange(keep.sum())
        rows, cols = np.asarray(rows), np.asarray(cols)
        inside = keep[rows] & keep[cols]
        m = int(keep.sum())
        main = tuple(int(i) for i in np.flatnonzero(keep))
        if stages is not None:
            structure = stagewise.StageStructure.of(index[rows[inside]], index[cols[inside]],
                                                    np.asarray(stages)[keep])
            return cls(main, tuple(int(b) for b in border), structure)
        band = banded.BandedStructure.of(Pattern(np.concatenate([index[rows[inside]], np.arange(m)]),
                                                         np.concatenate([index[cols[inside]], np.arange(m)]), (m, m)))
        return cls(main, tuple(int(b) for b in border), band)

    @property
    def sizes(self) -> tuple[int, int]:
        return len(self.main), len(self.border)

    @property
    def stagewise(self) -> bool:
        return isinstance(self.band, stagewise.StageStructure)

    def _main_size(self) -> int:
        return self.band.storage_size() if self.stagewise else len(self.main) * self.band.width

    def storage_size(self) -> int:
        m, k = self.sizes
        return self._main_size() + 2 * m * k + k * k

    def positions(self, rows, cols) -> np.ndarray:
        """Where the entries ``(rows, cols)`` of the whole matrix lie in the flat storage
        ``[M's band | B (m × k) | C (k × m) | D (k × k)]``."""
        m, k = self.sizes
        size = m + k
        main_index, border_index = np.full(size, -1, np.int64), np.full(size, -1, np.int64)
        main_index[list(self.main)] = np.arange(m)
        border_index[list(self.border)] = np.arange(k)
        rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
        ri, ci, rb, cb = main_index[rows], main_index[cols], border_index[rows], border_index[cols]
        out = np.empty(rows.shape, np.int64)
        mm, mb, bm, bb = (ri >= 0) & (ci >= 0), (ri >= 0) & (cb >= 0), (rb >= 0) & (ci >= 0), (rb >= 0) & (cb >= 0)
        out[mm] = self.band.positions(ri[mm], ci[mm])
        start = self._main_size()
        out[mb] = start + ri[mb] * k + cb[mb]
        out[bm] = start + m * k + rb[bm] * m + ci[bm]
        out[bb] = start + 2 * m * k + rb[bb] * k + cb[bb]
        return out

    def split(self, flat: Float[Array, " s"]):
        """``(M's storage, B, C, D)`` of the flat storage (``M``'s band ``(m, w)``, or by stage flat)."""
        m, k = self.sizes
        start = self._main_size()
        main = flat[:start] if self.stagewise else flat[:start].reshape(m, self.band.width)
        return (main, flat[start:start + m * k].reshape(m, k),
                flat[start + m * k:start + 2 * m * k].reshape(k, m), flat[start + 2 * m * k:].reshape(k, k))


class BorderedLU(eqx.Module):
    """The main block's factors (banded or by stage), ``M⁻¹B``, ``C``, the Schur complement ``S`` and its factors
    (``None`` without pivoting: only its pivots are wanted then), and the smallest relative pivot of the two."""

    main: banded.BandedLU | stagewise.StageLU
    solved_border: Float[Array, "m k"]
    C: Float[Array, "k m"]
    schur: Float[Array, "k k"]
    schur_lu: LU | None
    min_pivot: Float[Array, ""]


def _algorithm(s: BorderedStructure):
    """The main block's factorisation: :mod:`.stagewise` or :mod:`.banded`."""
    return stagewise if s.stagewise else banded


def factor(s: BorderedStructure, flat: Float[Array, " s"], pivoting: bool = True) -> BorderedLU:
    """Factor the bordered matrix stored flat (:meth:`BorderedStructure.positions`)."""
    band, B, C, D = s.split(flat)
    main = _algorithm(s).factor(s.band, band, pivoting)
    m, k = s.sizes
    if k == 0:
        return BorderedLU(main, B, C, D, None, main.min_pivot)
    Y = _algorithm(s).solve(s.band, main, B)  # the k columns together
    S = D - C @ Y
    if not pivoting:
        return BorderedLU(main, Y, C, S, None, main.min_pivot)
    lu = lu_factor(S)
    return BorderedLU(main, Y, C, S, lu, jnp.minimum(main.min_pivot, lu.min_pivot))


def solve(s: BorderedStructure, f: BorderedLU, b: Float[Array, " n"]) -> Float[Array, " n"]:
    """``K⁻¹ b`` by the block elimination above."""
    main, border = np.asarray(s.main), np.asarray(s.border)
    y = _algorithm(s).solve(s.band, f.main, b[main])
    if border.size == 0:
        return y
    x2 = lu_solve(f.schur_lu, b[border] - f.C @ y)
    x1 = y - f.solved_border @ x2
    return jnp.zeros_like(b).at[main].set(x1).at[border].set(x2)
