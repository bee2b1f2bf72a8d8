r"""The Newton system of the interior-point method with the inequalities' slacks eliminated.

With variables ``y = (x, s)``, constraints ``h = (c(x), d(x) − s)`` and barrier weights ``Σ = (Σ_x, Σ_s)``, the
primal-dual system (Wächter & Biegler 2006, eq. 13)

$$\begin{bmatrix} W + Σ_x + δ_w & 0 & J_c^T & J_d^T \\ 0 & Σ_s + δ_w & 0 & -I \\ J_c & 0 & -δ_c & 0 \\
  J_d & -I & 0 & -δ_c \end{bmatrix}\begin{bmatrix} d_x \\ d_s \\ λ_c \\ λ_d \end{bmatrix}
  = \begin{bmatrix} r_x \\ r_s \\ r_c \\ r_d \end{bmatrix}$$

is reduced, with ``D = Σ_s + δ_w`` and $E = (D^{-1} + \delta_c)^{-1}$ (diagonal), to

$$\begin{bmatrix} W + Σ_x + δ_w + J_d^T E J_d & J_c^T \\ J_c & -δ_c \end{bmatrix}
  \begin{bmatrix} d_x \\ λ_c \end{bmatrix} = \begin{bmatrix} r_x + J_d^T E (D^{-1} r_s + r_d) \\ r_c
  \end{bmatrix},\quad λ_d = E (J_d d_x - D^{-1} r_s - r_d),\quad d_s = D^{-1}(r_s + λ_d),$$

one factorisation of size ``n + m_c`` whatever the number of inequalities: banded with a border
(:mod:`.bordered`) where the problem's sparsity makes it so — off a CPU, where the sparsity gives the stages, the
main block by stage instead (:mod:`.stagewise`, :func:`by_stage`) — dense (:mod:`.dense`) otherwise.

With a sparsity the reduced matrix is never formed dense: its band storage is assembled from the nonzeros by one
scatter (:class:`Assembly`, positions fixed when the program is traced), ``J_dᵀ E J_d`` from the products of the
nonzeros that share a row of ``J_d``. Host and program cost ``O(nnz(W) + nnz(J_c) + Σ_r k_r^2)`` (``k_r`` the
nonzeros of row ``r`` of ``J_d``) besides the factorisation, linear in the mesh.
"""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Bool, Float
from . import banded, bordered, inertia, stagewise
from .dense import LU, lu_factor, lu_solve
from .matrix import AbstractMatrix, Pattern, SparseMatrix
from .sparsity import Sparsity

REFINEMENTS = 2
BORDER_MIN = 1500  # unknowns (n + m_c) from which the ring's border is eliminated apart
STAGES_MIN = 32  # stages from which, off a CPU, the main block is factored by stage


class Assembly:
    """The bordered band ordering of the reduced matrix ``[[A, J_cᵀ], [J_c, ·]]`` (the sparsity's border and
    its dense variables last) and where every stored value lands in its flat storage (:mod:`.bordered`): the
    Hessian's nonzeros, the diagonal of ``A``, the pairs of ``J_d``'s nonzeros in one row
    (``(J_dᵀ E J_d)_{ab} = Σ_r E_r J_{ra} J_{rb}``), ``J_c``'s nonzeros and their mirror images, the diagonal of
    the lower block. Hashable by identity (one per sparsity, :func:`structure` is cached)."""

    def __init__(self, sparsity: Sparsity, mc: int, border: bool = True, by_stage: bool = False):
        J, H = sparsity.jacobian, sparsity.hessian
        n = J.shape[1]
        top = J.rows < mc
        self.jc = Pattern(J.rows[top], J.cols[top], (mc, n))
        self.jd = Pattern(J.rows[~top] - mc, J.cols[~top], (J.shape[0] - mc, n))
        self.hessian = H
        self.pair_row, self.pair_a, self.pair_b = _pairs(self.jd)
        ra, rb = self.jd.cols[self.pair_a], self.jd.cols[self.pair_b]
        diag_x, diag_c = np.arange(n), n + np.arange(mc)
        rows = np.concatenate([H.rows, ra, diag_x, n + self.jc.rows, self.jc.cols, diag_c])
        cols = np.concatenate([H.cols, rb, diag_x, self.jc.cols, n + self.jc.rows, diag_c])
        self.n, self.mc = n, mc
        equalities = sparsity.border_equalities[sparsity.border_equalities < mc]
        unknowns = np.concatenate([sparsity.border_variables, np.flatnonzero(sparsity.hessian_dense), n + equalities])
        stages = _unknown_stages(sparsity, self.jc, unknowns) if by_stage else None
        self.structure = bordered.BorderedStructure.of(rows, cols, n + mc, unknowns if border or by_stage else (),
                                                       stages)
        position = self.structure.positions
        self.a_positions = np.concatenate([position(H.rows, H.cols), position(ra, rb), position(diag_x, diag_x)])
        self.c_positions = np.concatenate([position(n + self.jc.rows, self.jc.cols),
                                           position(self.jc.cols, n + self.jc.rows), position(diag_c, diag_c)])

    @property
    def band(self) -> banded.BandedStructure | stagewise.StageStructure:
        """The main block's structure: its band (:mod:`.banded`) or its stages (:mod:`.stagewise`)."""
        return self.structure.band

    @property
    def banded(self) -> bool:
        """Whether the main block's band is narrow enough to pay (else dense: a dense row outside the border);
        by stage, always."""
        if self.structure.stagewise:
            return True
        return 3 * (self.band.lower + self.band.upper) < len(self.structure.main)

    def a_values(self, W: SparseMatrix, Jd: SparseMatrix, E, diagonal) -> Float[Array, " k"]:
        """The values of ``A = W + diag + J_dᵀ E J_d`` in the order of `a_positions`."""
        pairs = E[self.pair_row] * Jd.values[self.pair_a] * Jd.values[self.pair_b]
        return jnp.concatenate([W.values, pairs, diagonal])

    def storage(self, a_values, jc_values, lower_diagonal) -> Float[Array, " s"]:
        """The bordered band storage (:mod:`.bordered`) of ``[[A, J_cᵀ], [J_c, diag(lower_diagonal)]]`` by one
        scatter-add."""
        values = jnp.concatenate([a_values, jc_values, jc_values, jnp.broadcast_to(lower_diagonal, (self.mc,))])
        positions = np.concatenate([self.a_positions, self.c_positions])
        return jnp.zeros(self.structure.storage_size(), values.dtype).at[positions].add(values)


def _unknown_stages(sparsity: Sparsity, jc: Pattern, border) -> np.ndarray:
    """The stage of each unknown of ``[[A, J_cᵀ], [J_c, ·]]``: a variable's from the sparsity, a multiplier's the
    first stage its row meets outside the border (0 if none). ``O(nnz)``."""
    n = sparsity.stages.shape[0]
    inside = np.ones(n + jc.shape[0], bool)
    inside[np.asarray(border, np.int64)] = False
    keep = inside[jc.cols] & (sparsity.stages[jc.cols] >= 0)
    rows = np.full(jc.shape[0], np.iinfo(np.int64).max)
    np.minimum.at(rows, jc.rows[keep], sparsity.stages[jc.cols[keep]])
    rows[rows == np.iinfo(np.int64).max] = 0
    return np.concatenate([np.maximum(sparsity.stages, 0), rows])


def _pairs(p: Pattern):
    """``(row, a, b)``: every ordered pair of nonzeros ``a, b`` (indices into the pattern's nonzeros) in one row,
    ``Σ_r k_r²`` of them, vectorised."""
    k = p.row_counts()
    start = np.concatenate([[0], np.cumsum(k)[:-1]]).astype(np.int64)
    squares = k.astype(np.int64) ** 2
    row = np.repeat(np.arange(k.size), squares)
    t = np.arange(row.size) - np.repeat(np.cumsum(squares) - squares, squares)
    kr = np.maximum(k[row], 1)
    return row, start[row] + t // kr, start[row] + t % kr


def by_stage(sparsity: Sparsity) -> bool:
    """Whether the main block is factored by stage (:mod:`.stagewise`, a depth logarithmic in the mesh) rather
    than by the banded sweep: off a CPU (a GPU's many cores, on which a long sequential loop idles them), where the
    sparsity gives the stages and there are at least ``STAGES_MIN`` of them. On a CPU the banded sweep does less
    work."""
    if sparsity.stages is None or sparsity.stages.max(initial=-1) + 1 < STAGES_MIN:
        return False
    return jax.default_backend() != "cpu"


@functools.cache
def structure(sparsity: Sparsity | None, mc: int, stagewise: bool | None = None) -> Assembly | None:
    """The assembly of the reduced matrix in band storage, or ``None`` (dense) where there is no sparsity or the
    band would be wider than a third of the matrix (a dense row: a free final time). The border (:mod:`.bordered`)
    is used from ``BORDER_MIN`` unknowns on: below it a folded band costs about as much per solve, and its program
    is smaller and quicker to compile (no Schur complement, no refinement). `stagewise`: the main block by stage
    (``None``: as :func:`by_stage` chooses), where the matrix is block tridiagonal by stage (else the band)."""
    if sparsity is None:
        return None
    if stagewise if stagewise is not None else by_stage(sparsity):
        try:
            return Assembly(sparsity, mc, by_stage=True)
        except ValueError:  # a row or a product of rows that meets stages more than one apart: the band
            pass
    assembly = Assembly(sparsity, mc, border=sparsity.jacobian.shape[1] + mc >= BORDER_MIN)
    return assembly if assembly.banded else None


class Reduced(eqx.Module):
    """The factors of the reduced system and what the back-substitution and its refinement need (``W``, ``J_c``,
    the diagonal ``Σ_x + δ_w`` and ``δ_c``)."""

    lu: LU | bordered.BorderedLU
    Jd: AbstractMatrix
    E: Float[Array, " md"]
    D: Float[Array, " md"]
    inertia: Bool[Array, ""]
    W: AbstractMatrix
    Jc: AbstractMatrix
    diagonal: Float[Array, " n"]
    delta_c: Float[Array, ""]
    assembly: Assembly | None = eqx.field(static=True)


def matrix(W: AbstractMatrix, Jc: AbstractMatrix, Jd: AbstractMatrix, sigma_x, sigma_s, delta_w, delta_c):
    """The reduced matrix, dense, and ``(D, E)``."""
    D = sigma_s + delta_w
    E = 1.0 / (1.0 / D + delta_c)
    Jd_ = Jd.dense()
    A = W.dense() + jnp.diag(sigma_x + delta_w) + Jd_.T @ (E[:, None] * Jd_)
    mc = Jc.shape[0]
    K = jnp.block([[A, Jc.dense().T], [Jc.dense(), -delta_c * jnp.eye(mc, dtype=A.dtype)]])
    return K, D, E


def factor(W: AbstractMatrix, Jc: AbstractMatrix, Jd: AbstractMatrix, sigma_x, sigma_s, delta_w, delta_c,
           assembly: Assembly | None = None, test_inertia: bool = False, wanted=True) -> Reduced:
    """The factors; with `test_inertia`, also whether the matrix has the inertia ``(n, m_c, 0)`` that IPOPT's
    inertia correction asks for (:mod:`.inertia`; else ``True``). Banded, with `test_inertia`, the inertia is
    tested first and the matrix factored only where it passes or `wanted` (a boolean array) says so: elsewhere
    (an attempt that IPOPT's correction rejects whatever its step) the factors are NaN, their smallest pivot 1."""
    if assembly is None:
        K, D, E = matrix(W, Jc, Jd, sigma_x, sigma_s, delta_w, delta_c)
        n = W.shape[0]
        ok = inertia.dense(K[:n, :n], Jc.dense(), W.dense()) if test_inertia else jnp.asarray(True)
        return Reduced(lu_factor(K), Jd, E, D, ok, W, Jc, jnp.broadcast_to(sigma_x + delta_w, (n,)),
                       jnp.asarray(delta_c), None)
    if (Jc.pattern, Jd.pattern, W.pattern) != (assembly.jc, assembly.jd, assembly.hessian):
        raise ValueError("newton.factor: the derivatives' patterns differ from the sparsity's.")
    D = sigma_s + delta_w
    E = 1.0 / (1.0 / D + delta_c)
    diagonal = jnp.broadcast_to(sigma_x + delta_w, (assembly.n,))
    a = assembly.a_values(W, Jd, E, diagonal)
    storage = assembly.storage(a, Jc.values, -delta_c)
    lu = functools.partial(bordered.factor, assembly.structure)
    if test_inertia:
        ok = inertia.band(assembly, a, Jc, W)
        factors = jax.lax.cond(ok | wanted, lu, functools.partial(_unfactored, lu), storage)
    else:
        ok, factors = jnp.asarray(True), lu(storage)
    return Reduced(factors, Jd, E, D, ok, W, Jc, diagonal, jnp.asarray(delta_c), assembly)


def _unfactored(lu, storage) -> bordered.BorderedLU:
    """Factors of NaN shaped as ``lu(storage)``'s (no pivot exchanges, the smallest pivot 1: not singular)."""
    shapes = jax.eval_shape(lu, storage)
    fill = lambda x: jnp.full(x.shape, jnp.nan if jnp.issubdtype(x.dtype, jnp.inexact) else 0, x.dtype)  # noqa: E731
    return eqx.tree_at(lambda f: f.min_pivot, jax.tree.map(fill, shapes), jnp.ones((), storage.dtype))


def _times(R: Reduced, v):
    """The reduced matrix times `v`, from its sparse parts: ``O(nnz)``."""
    n = R.diagonal.shape[0]
    x, lam = v[:n], v[n:]
    top = R.W.mv(x) + R.diagonal * x + R.Jd.rmv(R.E * R.Jd.mv(x)) + R.Jc.rmv(lam)
    return jnp.concatenate([top, R.Jc.mv(x) - R.delta_c * lam])


def _reduced_solve(R: Reduced, rhs):
    """The reduced system solved; through a border (whose Schur complement rests on a main block that may be
    worse conditioned than the whole), with ``REFINEMENTS`` steps of iterative refinement on the residual
    (Golub & Van Loan, *Matrix Computations*, 4th ed., §3.5.3; IPOPT refines its steps likewise)."""
    if R.assembly is None:
        return lu_solve(R.lu, rhs)
    structure = R.assembly.structure
    if not structure.sizes[1]:
        return bordered.solve(structure, R.lu, rhs)
    # x₀ = 0, x_{i+1} = x_i + K̃⁻¹ (b − K x_i): the first turn is the plain solve; one traced copy of the solve
    refine = lambda _, x: x + bordered.solve(structure, R.lu, rhs - _times(R, x))  # noqa: E731
    return jax.lax.fori_loop(0, REFINEMENTS + 1, refine, jnp.zeros_like(rhs))


def solve(R: Reduced, rx, rs, rc, rd):
    """``(d_x, d_s, λ_c, λ_d)`` of the full system from the reduced factors."""
    n = rx.shape[0]
    top = rx + R.Jd.rmv(R.E * (rs / R.D + rd))
    sol = _reduced_solve(R, jnp.concatenate([top, rc]))
    dx, lam_c = sol[:n], sol[n:]
    lam_d = R.E * (R.Jd.mv(dx) - rs / R.D - rd)
    ds = (rs + lam_d) / R.D
    return dx, ds, lam_c, lam_d
