r"""Derivatives of the problem's functions, dense or compressed by a column colouring.

A transcribed optimal-control problem has sparse derivatives: a collocation point's variables meet only their
own and their neighbours' constraints, and the Hessian of the Lagrangian is block diagonal but for a few
variables (a free final time). Columns that share no nonzero row can be seeded together: with ``S`` the
``n × p`` matrix of the colours' indicator vectors, ``J S`` takes ``p`` forward-mode products instead of ``n``,
and ``J_{ij} = (J S)_{i, \text{colour}(j)}`` on the pattern (Curtis, Powell & Reid 1974; Griewank & Walther,
*Evaluating Derivatives*, 2nd ed., §8.3). For the Hessian a variable whose row is dense takes a colour of its
own and its row is read from its column by symmetry, ``H_{ij} = (H S)_{j, \text{colour}(i)}`` (§8.4).

The patterns are held by their nonzeros (:class:`~.matrix.Pattern`): building, checking and reading them costs
``O(nnz)`` (with a sort, ``O(nnz log nnz)``), never ``O(m n)``; the derivatives come out as
:class:`~.matrix.SparseMatrix` values of those patterns.
"""

import jax
import jax.numpy as jnp
import numpy as np

from .matrix import DenseMatrix, Pattern, SparseMatrix


class Sparsity:
    """Column colourings and patterns of ``∇[c; d]`` (``(m_c + m_d) × n``) and of the Hessian of the Lagrangian
    (``n × n``), with `hessian_dense` the variables whose Hessian rows may be dense. A pattern is a boolean array,
    a SciPy sparse matrix or a :class:`~.matrix.Pattern` (the way for large problems: ``O(nnz)`` throughout).
    Checked on construction: two columns of one colour share no nonzero row (for the Hessian, outside the dense
    rows).

    `border_variables` and `border_equalities` (indices of variables and of equality rows) are the Newton
    matrix's border (:mod:`.bordered`): the unknowns that close a ring (a periodic gait's first point and its
    periodicity rows), eliminated last so that the rest is a narrow band; the dense variables join them.

    `stages` (optional): each variable's stage (a mesh point with its midpoint; ``−1`` for a global), in which
    the Newton matrix without its border is block tridiagonal (:mod:`.stagewise`)."""

    def __init__(self, jacobian_colours, jacobian_pattern, hessian_colours, hessian_pattern, hessian_dense,
                 border_variables=(), border_equalities=(), stages=None):
        self.jacobian_colours = np.asarray(jacobian_colours, int)
        self.hessian_colours = np.asarray(hessian_colours, int)
        self.hessian_dense = np.asarray(hessian_dense, bool)
        self.jacobian = _pattern(jacobian_pattern)
        given = _pattern(hessian_pattern)
        n = self.jacobian_colours.shape[0]
        for name, shape in (("jacobian_pattern", (self.jacobian.shape[0], n)), ("hessian_pattern", (n, n))):
            actual = self.jacobian.shape if name == "jacobian_pattern" else given.shape
            if actual != shape:
                raise ValueError(f"Sparsity: `{name}` must have shape {shape}, got {actual}.")
        for name, a in (("hessian_colours", self.hessian_colours), ("hessian_dense", self.hessian_dense)):
            if a.shape != (n,):
                raise ValueError(f"Sparsity: `{name}` must have shape ({n},), got {a.shape}.")
        _check(self.jacobian, self.jacobian_colours, "Jacobian")
        keep = ~self.hessian_dense[given.rows]
        _check(Pattern(given.rows[keep], given.cols[keep], given.shape), self.hessian_colours, "Hessian")
        counts = np.bincount(self.hessian_colours, minlength=self.hessian_colours.max(initial=0) + 1)
        for i in np.flatnonzero(self.hessian_dense):
            if counts[self.hessian_colours[i]] != 1:
                raise ValueError(f"Sparsity: the dense Hessian variable {i} must have a colour of its own.")
        # what the solver reads: the given entries and the whole diagonal (zero where not given)
        diag = np.arange(n)
        self.hessian = Pattern(np.concatenate([given.rows, diag]), np.concatenate([given.cols, diag]), (n, n))
        self.hessian_given = _member(self.hessian, given)
        self.border_variables = _indices("border_variables", border_variables, n)
        self.border_equalities = _indices("border_equalities", border_equalities, self.jacobian.shape[0])
        self.stages = None if stages is None else np.asarray(stages, np.int64)
        if self.stages is not None and self.stages.shape != (n,):
            raise ValueError(f"Sparsity: `stages` must have shape ({n},), got {self.stages.shape}.")
        self._key = (self.jacobian, given, self.jacobian_colours.tobytes(), self.hessian_colours.tobytes(),
                     self.hessian_dense.tobytes(), self.border_variables.tobytes(), self.border_equalities.tobytes(),
                     None if self.stages is None else self.stages.tobytes())

    @property
    def jacobian_pattern(self) -> np.ndarray:
        """The Jacobian's pattern as a dense boolean array (``O(m n)``: for small problems)."""
        return self.jacobian.dense()

    @property
    def hessian_pattern(self) -> np.ndarray:
        """The Hessian's pattern as a dense boolean array (``O(n²)``: for small problems)."""
        return self.hessian.dense() & _given_dense(self)

    def __hash__(self):
        return hash(self._key)

    def __eq__(self, other):
        return isinstance(other, Sparsity) and self._key == other._key


def _indices(name, values, size: int) -> np.ndarray:
    values = np.unique(np.asarray(values, np.int64).reshape(-1))
    if values.size and (values[0] < 0 or values[-1] >= size):
        raise ValueError(f"Sparsity: `{name}` must be indices below {size}, got {values.min()}…{values.max()}.")
    return values


def _pattern(a) -> Pattern:
    return a if isinstance(a, Pattern) else Pattern.of(a)


def _member(p: Pattern, q: Pattern) -> np.ndarray:
    """Which nonzeros of `p` are nonzeros of `q` (same shape)."""
    n = p.shape[1]
    return np.isin(p.rows.astype(np.int64) * n + p.cols, q.rows.astype(np.int64) * n + q.cols)


def _given_dense(s: Sparsity) -> np.ndarray:
    out = np.zeros(s.hessian.shape, bool)
    out[s.hessian.rows[s.hessian_given], s.hessian.cols[s.hessian_given]] = True
    return out


def _check(pattern: Pattern, colours, what):
    """No row meets two columns of one colour: ``O(nnz log nnz)``."""
    key = pattern.rows.astype(np.int64) * (colours.max(initial=0) + 1) + colours[pattern.cols]
    unique, counts = np.unique(key, return_counts=True)
    if np.any(counts > 1):
        c = int(unique[np.argmax(counts > 1)] % (colours.max(initial=0) + 1))
        raise ValueError(f"Sparsity: two {what} columns of colour {c} share a nonzero row.")


def _seeds(colours, dtype):
    seeds = np.zeros((colours.shape[0], colours.max() + 1))
    seeds[np.arange(colours.shape[0]), colours] = 1.0
    return jnp.asarray(seeds, dtype)  # (n, p)


def _compressed(fn, x, colours):
    """``(fn(x), ∂fn · S)`` by one forward-mode product per colour."""
    seeds = _seeds(colours, x.dtype)
    value, tangents = jax.vmap(lambda s: jax.jvp(fn, (x,), (s,)), out_axes=(None, -1))(seeds.T)
    return value, tangents


def values_and_jacobians(f, cd, x, sparsity: Sparsity | None):
    """``(f, c, d)`` and ``(∇f, ∇c, ∇d)`` at ``x`` (the Jacobians as :class:`~.matrix.AbstractMatrix`); `cd`
    gives ``(c, d)`` from one evaluation."""
    if sparsity is None:
        twice = lambda v: (v, v)  # noqa: E731 (the values as the aux output: the functions traced once)
        (g, Jc, Jd), value = jax.jacfwd(lambda z: twice((f(z),) + tuple(cd(z))), has_aux=True)(x)
        return value, (g, DenseMatrix(Jc), DenseMatrix(Jd))
    value_f, g = jax.value_and_grad(f)(x)
    (vc, vd), (tc, td) = _compressed(lambda z: tuple(cd(z)), x, sparsity.jacobian_colours)
    mc, p = vc.shape[0], sparsity.jacobian
    top = p.rows < mc
    cols = sparsity.jacobian_colours[p.cols]
    Jc = SparseMatrix(tc[p.rows[top], cols[top]], Pattern(p.rows[top], p.cols[top], (mc, p.shape[1])))
    Jd = SparseMatrix(td[p.rows[~top] - mc, cols[~top]],
                      Pattern(p.rows[~top] - mc, p.cols[~top], (p.shape[0] - mc, p.shape[1])))
    return (value_f, vc, vd), (g, Jc, Jd)


def hessian(f, cd, x, lam_c, lam_d, sparsity: Sparsity | None, joint=None):
    """The Hessian of the Lagrangian ``f + λ_cᵀ c + λ_dᵀ d`` at ``x`` (`cd` as in :func:`values_and_jacobians`;
    `joint`, where given, ``(f, (c, d))`` from one evaluation, so that the work the objective and the constraints
    share is differentiated once), as an :class:`~.matrix.AbstractMatrix`; with a sparsity, on its pattern and
    the whole diagonal."""

    def lagrangian(z):
        if joint is not None:
            value, (c, d) = joint(z)
            return value + lam_c @ c + lam_d @ d
        c, d = cd(z)
        return f(z) + lam_c @ c + lam_d @ d

    if sparsity is None:
        return DenseMatrix(jax.hessian(lagrangian)(x))
    colours, p = sparsity.hessian_colours, sparsity.hessian
    _, HS = _compressed(jax.grad(lagrangian), x, colours)
    dense = sparsity.hessian_dense[p.rows]
    # H_ij = (H S)_{i, colour(j)}, or (H S)_{j, colour(i)} on a dense row i
    values = HS[np.where(dense, p.cols, p.rows), colours[np.where(dense, p.rows, p.cols)]]
    return SparseMatrix(jnp.where(sparsity.hessian_given, values, 0.0), p)


def zero_hessian(sparsity: Sparsity | None, n: int, dtype):
    """A zero Hessian of the form :func:`hessian` returns."""
    if sparsity is None:
        return DenseMatrix(jnp.zeros((n, n), dtype))
    return SparseMatrix(jnp.zeros(sparsity.hessian.nnz, dtype), sparsity.hessian)
