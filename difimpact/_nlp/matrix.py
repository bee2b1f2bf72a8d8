r"""The derivative matrices of a nonlinear program as the solver holds them: dense, or by their nonzeros.

A transcribed optimal-control problem's Jacobian and Hessian have a number of nonzeros proportional to the mesh
(:mod:`.sparsity`); held dense they would cost $O(n^2)$ memory and work per iteration. :class:`SparseMatrix` keeps
the values of a static pattern (coordinate format: row and column of each nonzero fixed when the program is
traced), so that its products cost $O(\text{nnz})$ (Saad, *Iterative Methods for Sparse Linear Systems*, 2nd ed.,
§3.4). :class:`DenseMatrix` is the same interface over a dense array, for problems given without a sparsity.
"""

import abc

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Bool, Float, Scalar


class Pattern:
    """The static nonzero pattern of an ``m × n`` matrix: the row and column of each nonzero, row by row (a
    coordinate list without duplicates). Hashable by content, so that a program keyed by it is reused."""

    def __init__(self, rows, cols, shape: tuple[int, int]):
        rows, cols = np.asarray(rows, np.int64).reshape(-1), np.asarray(cols, np.int64).reshape(-1)
        m, n = (int(k) for k in shape)
        if rows.shape != cols.shape:
            raise ValueError(f"Pattern: {rows.size} rows but {cols.size} columns.")
        if rows.size and (rows.min() < 0 or rows.max() >= m or cols.min() < 0 or cols.max() >= n):
            raise ValueError(f"Pattern: an index outside the shape {(m, n)}.")
        key = np.unique(rows * n + cols)  # sorted row by row, duplicates removed: O(nnz log nnz)
        self.rows, self.cols = (key // n).astype(np.int32), (key % n).astype(np.int32)
        self.shape = (m, n)
        self._key = (self.shape, key.tobytes())

    @classmethod
    def of(cls, a) -> "Pattern":
        """The pattern of a dense boolean array, or of any sparse matrix with ``tocoo()`` (SciPy's)."""
        if hasattr(a, "tocoo"):
            coo = a.tocoo()
            keep = np.asarray(coo.data) != 0
            return cls(np.asarray(coo.row)[keep], np.asarray(coo.col)[keep], coo.shape)
        a = np.asarray(a, bool)
        if a.ndim != 2:
            raise ValueError(f"Pattern: a matrix was expected, got shape {a.shape}.")
        return cls(*np.nonzero(a), a.shape)

    @property
    def nnz(self) -> int:
        return int(self.rows.size)

    def transpose(self) -> "Pattern":
        return Pattern(self.cols, self.rows, self.shape[::-1])

    def dense(self) -> np.ndarray:
        """The boolean array (``O(m n)``: for small problems and tests)."""
        out = np.zeros(self.shape, bool)
        out[self.rows, self.cols] = True
        return out

    def row_counts(self) -> np.ndarray:
        return np.bincount(self.rows, minlength=self.shape[0])

    def __hash__(self):
        return hash(self._key)

    def __eq__(self, other):
        return isinstance(other, Pattern) and self._key == other._key


class AbstractMatrix(eqx.Module):
    """A matrix the solver multiplies, reduces and factors (through :mod:`.newton`)."""

    @property
    @abc.abstractmethod
    def shape(self) -> tuple[int, int]: ...

    @abc.abstractmethod
    def mv(self, v: Float[Array, " n"]) -> Float[Array, " m"]:
        """``A v``."""

    @abc.abstractmethod
    def rmv(self, u: Float[Array, " m"]) -> Float[Array, " n"]:
        """``Aᵀ u``."""

    @abc.abstractmethod
    def row_abs_max(self) -> Float[Array, " m"]:
        """``max_j |A_ij|`` of every row (0 for an empty row)."""

    @abc.abstractmethod
    def dense(self) -> Float[Array, "m n"]: ...

    @abc.abstractmethod
    def map_values(self, fn) -> "AbstractMatrix":
        """The matrix with `fn` applied to its stored values (zeros outside a pattern stay zeros)."""

    @property
    @abc.abstractmethod
    def stored(self) -> Float[Array, "..."]:
        """The stored values (every entry, or the nonzeros)."""

    def all_finite(self) -> Bool[Array, ""]:
        return jnp.all(jnp.isfinite(self.stored))

    def abs_max(self) -> Scalar:
        return jnp.max(jnp.abs(self.stored), initial=0.0)

    def nonnegative_diagonal(self) -> Bool[Array, ""]:
        """Whether the matrix is diagonal with no negative entry (stored off-diagonal entries zero)."""
        if isinstance(self, SparseMatrix):
            diagonal = self.pattern.rows == self.pattern.cols
            values = self.values
        else:
            values = self.dense()
            diagonal = np.eye(values.shape[0], dtype=bool)
        return jnp.all(jnp.where(diagonal, values >= 0, values == 0))


class DenseMatrix(AbstractMatrix):
    """Every entry stored."""

    array: Float[Array, "m n"]

    @property
    def shape(self):
        return self.array.shape

    def mv(self, v):
        return self.array @ v

    def rmv(self, u):
        return self.array.T @ u

    def row_abs_max(self):
        return jnp.max(jnp.abs(self.array), axis=1, initial=0.0)

    def dense(self):
        return self.array

    def map_values(self, fn):
        return DenseMatrix(fn(self.array))

    @property
    def stored(self):
        return self.array

    def with_identity(self, where: Bool[Array, ""], scale: Scalar) -> "DenseMatrix":
        """``scale · I`` where `where`, else the matrix (square)."""
        return DenseMatrix(jnp.where(where, scale * jnp.eye(self.shape[0], dtype=self.array.dtype), self.array))


class SparseMatrix(AbstractMatrix):
    """The values of a static :class:`Pattern`; products by ``segment_sum`` over the nonzeros, ``O(nnz)``."""

    values: Float[Array, " nnz"]
    pattern: Pattern = eqx.field(static=True)

    @property
    def shape(self):
        return self.pattern.shape

    def mv(self, v):
        p = self.pattern
        return jax.ops.segment_sum(self.values * v[p.cols], p.rows, num_segments=p.shape[0],
                                   indices_are_sorted=True)

    def rmv(self, u):
        p = self.pattern
        return jax.ops.segment_sum(self.values * u[p.rows], p.cols, num_segments=p.shape[1])

    def row_abs_max(self):
        p = self.pattern
        return jnp.maximum(jax.ops.segment_max(jnp.abs(self.values), p.rows, num_segments=p.shape[0],
                                               indices_are_sorted=True), 0.0)

    def dense(self):
        p = self.pattern
        return jnp.zeros(p.shape, self.values.dtype).at[p.rows, p.cols].set(self.values)

    def map_values(self, fn):
        return SparseMatrix(fn(self.values), self.pattern)

    @property
    def stored(self):
        return self.values

    def with_identity(self, where: Bool[Array, ""], scale: Scalar) -> "SparseMatrix":
        """``scale · I`` where `where`, else the matrix (square, its pattern holding the whole diagonal)."""
        diagonal = self.pattern.rows == self.pattern.cols
        return SparseMatrix(jnp.where(where, jnp.where(diagonal, scale, 0.0), self.values), self.pattern)
