r"""Inertia tests of the reduced Newton matrix for IPOPT's inertia correction (Wächter & Biegler 2006, §3.1).

The reduced matrix ``K = [[A, J_cᵀ], [J_c, −δ_c I]]`` has the wanted inertia ``(n, m_c, 0)`` iff ``A`` is positive
definite on the null space of ``J_c`` (with ``J_c`` of full rank). By the Schur complement of the ``−γ I`` block
(``γ > 0``), ``T = [[A, J_cᵀ], [J_c, −γ I]]`` has inertia ``inertia(A + J_cᵀ J_c / γ) + (0, m_c, 0)``, and for ``1/γ``
large enough ``A + J_cᵀ J_c / γ`` is positive definite iff ``A`` is on ``null(J_c)`` (Debreu's lemma). So

* dense: a Cholesky attempt of ``A + ρ J_cᵀ J_c`` (LAPACK's ``potrf`` for one matrix, an ``LDLᵀ`` loop under
  ``vmap`` off the CPU: never a batched LAPACK call), positive definite iff every pivot is positive;
* banded (or by stage, :mod:`.stagewise`: the eliminated blocks' pivots): ``T`` with ``γ = 1/ρ`` eliminated
  without pivoting in the bordered band ordering, symmetrically
  (:mod:`.symmetric`: the main block's pivots and, with a border, its Schur complement ``C − Bᵀ A⁻¹ B`` from the
  same sweep): by Sylvester's law of inertia (and Haynsworth's for the border's Schur complement), the signs of
  the pivots are the inertia of ``T``, so the test passes iff exactly ``m_c`` pivots are negative and none is
  zero.

``J_c`` enters with each row divided by its largest entry (``null(J_c)`` unchanged): the penalty must outweigh
``A``'s negative curvature in every row's direction, and a row of small entries beside steep ones (of ``σ_min(J_c)``
far below ``max|J_c|``) would otherwise leave ``A + ρ J_cᵀ J_c`` indefinite where ``A`` is positive definite on the
null space, and the test would ask for a regularisation ``δ_w`` that the problem does not need.
``ρ = 10⁶ max(1, max|W|) / max|J_c|²`` (``W`` the Hessian, the indefinite part of ``A``): large against it yet small
enough that the rounding of ``ρ J_cᵀ J_c`` (``ε ρ max|J_c|²``) stays far below ``A``'s curvature.
"""

import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap

from .._custom_types import Array, Bool, Float
from . import stagewise, symmetric
from .dense import _batched
from .matrix import SparseMatrix

_RHO = 1e6


def _penalty(w_max, j_max_squared):
    return _RHO * jnp.maximum(1.0, w_max) / jnp.where(j_max_squared > 0, j_max_squared, 1.0)


def penalty(W: Float[Array, "n n"], Jc: Float[Array, "mc n"]) -> Float[Array, ""]:
    """``ρ`` of the augmented-Lagrangian test, scaled by the Hessian ``W`` (the rest of ``A`` is positive
    semidefinite, and a barrier weight of ``10¹⁰`` must not make ``ρ J_cᵀ J_c`` swamp ``W``'s curvature)."""
    return _penalty(jnp.max(jnp.abs(W)), jnp.max(jnp.square(Jc), initial=0.0))


def _loop_pivots(a):
    """The pivots of ``a = L D Lᵀ`` without pivoting (a ``fori_loop`` over the columns)."""
    n = a.shape[0]
    idx = jnp.arange(n)

    def step(k, carry):
        a, d = carry
        p = a[k, k]
        below = idx > k
        l = jnp.where(below, a[:, k], 0.0) / jnp.where(p != 0, p, 1.0)
        a = a - l[:, None] * jnp.where(below, a[k], 0.0)[None, :]
        return a, d.at[k].set(p)

    return jax.lax.fori_loop(0, n, step, (a, jnp.zeros(n, a.dtype)))[1]


@custom_vmap
def _pivots(a):
    """The pivots of ``a``'s ``LDLᵀ`` (``NaN`` where the Cholesky factorisation fails)."""
    return jnp.square(jnp.diagonal(jax.lax.linalg.cholesky(a, symmetrize_input=False)))


@_pivots.def_vmap
def _pivots_batched(axis_size, in_batched, a):
    return _batched(_pivots, _loop_pivots, axis_size, in_batched, a), True


def _normalised(Jc: Float[Array, "mc n"]) -> Float[Array, "mc n"]:
    """``J_c`` with each row divided by its largest magnitude (a zero row left as it is)."""
    r = jnp.max(jnp.abs(Jc), axis=1, keepdims=True, initial=0.0)
    return Jc / jnp.where(r > 0, r, 1.0)


def dense(A: Float[Array, "n n"], Jc: Float[Array, "mc n"], W: Float[Array, "n n"]) -> Bool[Array, ""]:
    """Whether ``A`` is positive definite on ``null(J_c)``: a Cholesky attempt of ``A + ρ J_cᵀ J_c`` (rows
    normalised)."""
    Jc = _normalised(Jc)
    M = A + penalty(W, Jc) * (Jc.T @ Jc)
    d = _pivots(0.5 * (M + M.T))
    return jnp.all(jnp.isfinite(d) & (d > 0))


def band(assembly, a_values, Jc: SparseMatrix, W: SparseMatrix) -> Bool[Array, ""]:
    """Whether ``T = [[A, J_cᵀ], [J_c, −I/ρ]]`` has exactly ``m_c`` negative pivots and no zero pivot, by
    elimination without pivoting in the bordered band ordering (the main block's pivots and those of the
    border's Schur complement, :mod:`.bordered`); ``A`` given by its values in `assembly`'s order
    (:class:`~.newton.Assembly`), ``J_c``'s rows normalised as in :func:`dense`."""
    r = Jc.row_abs_max()
    jc = Jc.values / jnp.where(r > 0, r, 1.0)[Jc.pattern.rows]
    rho = _penalty(W.abs_max(), jnp.max(jnp.square(jc), initial=0.0))
    s = assembly.structure
    flat = assembly.storage(a_values, jc, -1.0 / rho)
    band, B, _, D = s.split(flat)
    if s.stagewise:  # the eliminated blocks' pivots of the reduction by stage, and the border's Schur complement
        d, G = stagewise.ldl_pivots_bordered(s.band, band, B)
        d = jnp.concatenate([d, _loop_pivots(D - G)])
    elif s.sizes[1]:  # the main block's pivots and its border's Schur complement, in one symmetric sweep
        d, G = symmetric.ldl_pivots_bordered(s.band, band, B)
        d = jnp.concatenate([d, _loop_pivots(D - G)])
    else:  # the pivots alone, by the symmetric elimination (half the work of an LU)
        d = symmetric.ldl_pivots(s.band, band)
    return jnp.all(jnp.isfinite(d) & (d != 0)) & (jnp.sum(d < 0) == Jc.shape[0])
