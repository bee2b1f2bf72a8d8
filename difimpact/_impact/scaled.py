r"""The impact's KKT system solved one mass scale at a time, so that light segments keep their digits.

``K = [M −Aᵀ; A 0]`` (Ros et al. 2015, eqs. 4–5) with a segment of mass ``m`` much smaller than the others has
``cond(K) ∝ 1/m``, and the rounding of the heavy bodies' terms of ``M`` (``ε ‖M‖``) is then as large as the
light segment's own terms: an LU of ``K`` as assembled returns its rates with ``ε ‖M‖ / m`` relative error,
whatever the pivoting. The model says which part is which, ``M = M_H + M_L`` (heavy and light bodies; ``M`` is
linear in the masses), and the heavy bodies do not move along ``N = null(M_H) ∩ null(A)``, exactly, however
rounding fills ``M_H``. Splitting the momentum equations ``M Δq̇ − Aᵀλ̄ = f`` along ``N``

$$
(I - P_N)\,(M Δ\dot q - A^Tλ̄ - f) / σ = 0,\qquad (P_N - P_U)\,(M_L Δ\dot q - f) / s = 0,
\qquad P_U\, B\, Δ\dot q = 0,
$$

(``σ = max|M_H|``, ``s = max|M_L|``; ``P_N M_H = 0`` and ``P_N Aᵀ = 0`` hold in exact arithmetic and are not
formed) leaves a system whose rows all have unit scale: each mass scale is solved against its own terms, and
a light segment's rates are as accurate as a heavy one's, down to a mass of zero. ``U ⊂ N`` is what neither
``M_H`` nor ``M_L`` sees (bodies without any mass): ``B = I`` holds those rates at their pre-impact value, and
``B = D`` (every body a unit point mass) gives them the limit of vanishing masses, ``Z_Uᵀ D Δq̇ = 0``
(:func:`~difimpact._impact.kkt._massless_limit`). As ``m → 0`` the second block tends to the third with
``M_L / s → D`` restricted to those bodies, so that limit is reached continuously.

The derivative is that of ``K`` itself, ``dX = −K⁻¹ dK X``, solved with the same factors.
"""

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from .._custom_types import Array, Float, MassMatrix
from .._linalg import full_precision, lu_factor, lu_substitute, relative_pivot, solve_lu


class Scaling(NamedTuple):
    """The split of the rows, from stopped gradients: projectors onto ``N`` and ``U``, the scales ``σ``, ``s``
    and the constraint row norms ``r``, the matrix ``B`` of the rows along ``U``, and the dropped rows
    (``1`` where a row is not enforced: its row and column of ``K`` are the identity's)."""

    P_N: MassMatrix
    P_U: MassMatrix
    sigma: Float[Array, ""]
    s: Float[Array, ""]
    r: Float[Array, " m"]
    B: MassMatrix
    dropped: Float[Array, " m"]


def _matrix(M_H, M_L, A, sc: Scaling, scales: bool):
    """The row-scaled ``K̂`` (module docstring), with ``λ̂ = r λ̄ / σ`` so that ``Â = A / r`` has unit rows; without
    `scales` (no light body, ``M_L = 0``, ``P_N = P_U``) the light rows' terms are zero and not formed."""
    eye = jnp.eye(M_H.shape[0], dtype=M_H.dtype)
    if scales:
        R = (eye - sc.P_N) @ (M_H + M_L) / sc.sigma + (sc.P_N - sc.P_U) @ M_L / sc.s + sc.P_U @ sc.B
    else:
        R = (eye - sc.P_N) @ M_H / sc.sigma + sc.P_U @ sc.B
    A_hat = A / sc.r[:, None]
    return jnp.block([[R, -A_hat.T], [A_hat, jnp.diag(sc.dropped)]])


def _scaled_rhs(f, g, sc: Scaling):
    """Right-hand sides ``[f; g]`` of ``K [Δq̇; λ̄] = [f; g]`` in the rows of ``K̂`` (``P_U f`` is not used)."""
    eye = jnp.eye(f.shape[0], dtype=f.dtype)
    return jnp.concatenate([(eye - sc.P_N) @ f / sc.sigma + (sc.P_N - sc.P_U) @ f / sc.s, g / sc.r[:, None]])


def _unscaled(X, n, sc: Scaling):
    return X[:n], X[n:] * (sc.sigma / sc.r)[:, None]


def _solve(factors, K_hat, rhs):
    """``K̂⁻¹ rhs`` with one step of iterative refinement (the residual in working precision): it restores the
    componentwise accuracy that the unrolled elimination loses on rows of unequal size."""
    X = lu_substitute(factors, rhs)
    return X + lu_substitute(factors, rhs - K_hat @ X)


@jax.custom_jvp
def _refined(factors, K_hat, rhs):
    """:func:`_solve` with `factors` those of `K_hat` (taken on stopped gradients): its derivative
    ``K̂⁻¹ (d rhs − dK̂ X)`` reuses them, so that a second derivative (a Hessian through the impact) never
    differentiates the elimination."""
    return _solve(factors, K_hat, rhs)


@_refined.defjvp
def _refined_jvp(primals, tangents):
    factors, K_hat, rhs = primals
    _, dK_hat, drhs = tangents
    X = _solve(factors, K_hat, rhs)
    return X, _solve(factors, K_hat, drhs - dK_hat @ X)


@functools.partial(jax.custom_jvp, nondiff_argnums=(4,))
@full_precision
def inverse_columns(M_H: MassMatrix, M_L: MassMatrix, A: Float[Array, "m n"], sc: Scaling, scales: bool = True):
    r"""$G = (K^{-1})_{\dot{q} b}$ ``(n, m)`` and $W_c = (K^{-1})_{\lambda  b}$ ``(m, m)``, the columns of ``K⁻¹`` that
    the constraint values reach (``K [G; W_c] = [0; I]``), and the smallest relative pivot of ``K̂``.

    From them: ``Δq̇ = G (b⁺ − A q̇⁻)``, ``λ̄ = W_c (b⁺ − A q̇⁻)``, ``P_a = I − G A``, ``ᵍP_cˡ = G`` and
    ``W_c`` of Ros et al. 2015 (eqs. 20–24), since ``K⁻¹ [M; A] = [I; 0]``.

    `scales` (static): whether the rows are split by mass scale. ``False`` where there is no light body
    (``M_L = 0``, so ``P_N = P_U``) and no limit of vanishing masses (``B = I``): the light rows and the rows
    along ``U`` of the derivative (:func:`_light_rows`, :func:`_unseen_rows`) are then exactly zero, or along
    ``U`` undetermined and flagged by the caller, and are not traced.
    """
    n, m = M_H.shape[0], A.shape[0]
    K_hat = _matrix(M_H, M_L, A, sc, scales)
    factors = lu_factor(K_hat)
    X = _solve(factors, K_hat, _scaled_rhs(jnp.zeros((n, m), M_H.dtype), jnp.eye(m, dtype=M_H.dtype), sc))
    return *_unscaled(X, n, sc), relative_pivot(K_hat, factors)


def _unseen_rows(M_H, M_L, A, dM_H, dM_L, dA, dB, G, sc: Scaling):
    r"""The rows along ``U`` of the derivative's right-hand side: ``P_U B G = 0`` holds for every ``q`` while
    ``U = null(X)``, ``X = [M_H/σ; A/r; M_L/s]``, and ``B`` turn with it, so ``P_U B dG = −P_U (dP_U B + dB) G``.
    With ``dP_U = −X⁺ dX P_U − P_U dXᵀ X⁺ᵀ`` (constant rank) and ``P_U X⁺ = 0``, that is
    ``P_U (dXᵀ X w − dB G)``, ``w = (XᵀX + P_U)⁻¹ B G`` (``X⁺ᵀ v = X (XᵀX)⁺ v`` for ``v = B G ⊥ U``). Zero where
    ``U = {0}`` (no body without mass, or `B` not given: the rows are then those of ``K``)."""
    X = jnp.concatenate([M_H / sc.sigma, A / sc.r[:, None], M_L / sc.s])
    dX = jnp.concatenate([dM_H / sc.sigma, dA / sc.r[:, None], dM_L / sc.s])
    w, _ = solve_lu(X.T @ X + sc.P_U, sc.B @ G)
    w = jnp.where((jnp.trace(sc.P_U) > 0.5) & jnp.isfinite(w), w, 0.0)  # a constant of the tangents
    return sc.P_U @ (dX.T @ (X @ w) - dB @ G)


def _light_rows(M_H, M_L, A, dM_H, dM_L, dA, G, sc: Scaling):
    r"""The light rows' right-hand side ``(P_N − P_U)(dAᵀ W − dM G)`` without its heavy terms: ``P_N M_H = 0`` and
    ``P_N Aᵀ = 0`` for every ``q`` (``N = null(Y)``, ``Y = [M_H/σ; A/r]``, at constant rank) and
    ``M_H G = Aᵀ W − M_L G`` give ``P_N (dAᵀ W − dM_H G) = dP_N M_L G``, so the rows are
    ``−(P_N − P_U)(dP_N M_L + dM_L) G``, ``dP_N = −Y⁺ dY P_N − P_N dYᵀ Y⁺ᵀ``: light terms alone. Formed as written,
    ``dM_H G`` and ``dAᵀ W`` are of the heavy scale and their rounding (``ε ‖M_H‖ ‖G‖``) would cost a light body of
    mass ``m`` the share ``ε ‖M_H‖ / m`` of its rates' derivatives."""
    Y = jnp.concatenate([M_H / sc.sigma, A / sc.r[:, None]])
    dY = jnp.concatenate([dM_H / sc.sigma, dA / sc.r[:, None]])
    pinv, _ = solve_lu(Y.T @ Y + sc.P_N, Y.T)
    pinv = jnp.where((jnp.trace(sc.P_N - sc.P_U) > 0.5) & jnp.isfinite(pinv), pinv, 0.0)  # constant in tangents
    T = pinv @ dY @ sc.P_N
    return -(sc.P_N - sc.P_U) @ (-(T + T.T) @ (M_L @ G) + dM_L @ G) / sc.s


@inverse_columns.defjvp
def _inverse_columns_jvp(scales, primals, tangents):
    """``K [dG; dW] = −dK [G; W]`` with ``dK = [dM −dAᵀ; dA 0]``, ``dM = dM_H + dM_L`` (the scaling is held), and
    along ``U`` (bodies without mass, held by ``P_U B G = 0``) the turn of ``U`` and ``B`` with ``q``
    (:func:`_unseen_rows`): the derivative of the limit of vanishing masses, exact in ``q`` too."""
    M_H, M_L, A, sc = primals
    dM_H, dM_L, dA, dsc = tangents
    n = M_H.shape[0]
    with jax.default_matmul_precision("highest"):
        K_hat = _matrix(M_H, M_L, A, sc, scales)
        factors = lu_factor(jax.lax.stop_gradient(K_hat))
        m = A.shape[0]
        X = _refined(factors, K_hat, _scaled_rhs(jnp.zeros((n, m), M_H.dtype), jnp.eye(m, dtype=M_H.dtype), sc))
        G, W = _unscaled(X, n, sc)
        f = dA.T @ W - (dM_H + dM_L) @ G
        eye = jnp.eye(n, dtype=M_H.dtype)
        top = (eye - sc.P_N) @ f / sc.sigma
        if scales:
            top = top + _light_rows(M_H, M_L, A, dM_H, dM_L, dA, G, sc) + _unseen_rows(
                M_H, M_L, A, dM_H, dM_L, dA, dsc.B, G, sc)
        rhs = jnp.concatenate([top, -(dA @ G) / sc.r[:, None]])
        dX = _refined(factors, K_hat, rhs)
        dG, dW = _unscaled(dX, n, sc)
    pivot = relative_pivot(K_hat, factors)
    return (G, W, pivot), (dG, dW, jnp.zeros_like(pivot))
