"""Impulsive impact with post-impact velocity constraints and energy decomposition.

The impulse–momentum equations ``M (q̇⁺ − q̇⁻) = Aᵀ λ̄`` with the post-impact constraints ``A q̇⁺ = b⁺``
(seed 002, eqs. 4–5; seed 003, eqs. 3, 8) are solved in KKT form, never through ``M⁻¹``, so that massless
segments (seed 003's μ = 0 and μ_T = 0, where ``M`` is singular) are handled. The spaces of constrained and
admissible motion (seed 003, eqs. 9–23; seed 002, eqs. 13–26) are read off the same factorisation.

The impact of a model on the ground, built on this map, is :func:`~difimpact.impact`.
"""

from typing import Literal

import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Array, Bool, Float, MassMatrix, Scalar, Velocity
from .._results import RESULTS
from .._validation import as_float, flag, psd_matrix

# Relative tolerance below which a singular value counts as zero (row-normalised ``A`` and ``[M/‖M‖; A]``).
_RANK_RTOL = 1e-10


class ImpactResults(RESULTS):  # pyright: ignore
    """Outcomes of :func:`constrained_impact` and :func:`impact`."""

    successful = ""
    redundant_constraints = (
        "The post-impact constraint rows are linearly dependent (redundant): remove the duplicated contact "
        "or blocked coordinate, or avoid a singular posture."
    )
    undetermined = (
        "The impact leaves a massless coordinate undetermined: M is singular on the motions the post-impact "
        "constraints allow (a segment without mass is free to move). Constrain or block that coordinate, give "
        "it mass, or pass massless='keep' to keep its pre-impact velocity."
    )
    no_consistent_set = (
        "No active set of the unilateral contacts is consistent (every choice gives a negative normal impulse "
        "on a staying contact or a penetrating velocity on a released one)."
    )
    several_consistent_sets = (
        "Several active sets of the unilateral contacts are consistent and give different post-impact "
        "velocities: the impact outcome is not unique."
    )
    non_finite = (
        "The impact gave non-finite velocities, impulses or energies from finite input: the velocities or "
        "masses are too large for the floating-point range (overflow)."
    )


class ImpactSolution(eqx.Module):
    """Result of an impulsive impact with post-impact constraints ``A q̇⁺ = b⁺``.

    - `qdot_plus`: post-impact velocities ``q̇⁺ = P_a q̇⁻ + ᵍP_cˡ b⁺`` (seed 002, eq. 21).
    - `impulses`: ``λ̄``, one per constraint row, with ``M (q̇⁺ − q̇⁻) = Aᵀ λ̄`` (seed 002, eqs. 4, 22). For
      :func:`impact` the rows are laid out as documented there, zero for contacts that lifted off.
    - `P_c`, `P_a`: projectors onto the spaces of constrained and admissible motion (seed 003, eqs. 9–10),
      ``P_c + P_a = I``, ``P_cᵀ M P_a = 0``.
    - `v_c`, `v_a`: ``P_c q̇⁻`` and ``P_a q̇⁻`` (seed 003, eq. 11).
    - `T_minus`, `T_plus`: kinetic energies before and after; `Tc_minus`, `Ta_minus`: the pre-impact energy of
      the constrained and admissible spaces (seed 003, eq. 13); `Tc_plus = ½ b⁺ᵀ W_c b⁺` (seed 002, eq. 24).
    - `loss`: ``T⁻ − T⁺ = T_c⁻ − T_c⁺`` (seed 002, eq. 23; seed 003, eq. 21 when ``b⁺ = 0``).
    - `xi`: ``loss / T⁻`` (seed 002, eq. 23), 0 when ``T⁻ = 0``.
    - `lifted_off`, `unilateral_velocity`: for each unilateral contact of :func:`impact`, whether it lifted off
      and its post-impact normal velocity (``v_Sn⁺``, seed 003 eq. 4); empty for :func:`constrained_impact`.
    - `result`: a :class:`ImpactResults` item.
    """

    qdot_plus: Velocity
    impulses: Float[Array, " m"]
    P_c: MassMatrix
    P_a: MassMatrix
    v_c: Velocity
    v_a: Velocity
    T_minus: Scalar
    T_plus: Scalar
    Tc_minus: Scalar
    Ta_minus: Scalar
    Tc_plus: Scalar
    loss: Scalar
    xi: Scalar
    lifted_off: Bool[Array, " k"]
    unilateral_velocity: Float[Array, " k"]
    result: ImpactResults

    @property
    def xi_I(self) -> Scalar:
        """``ξ_I = T_c⁻ / T⁻``, the share of the pre-impact energy in the constrained space (seed 003, eq. 23)."""
        return jnp.where(self.T_minus > 0, self.Tc_minus / jnp.where(self.T_minus > 0, self.T_minus, 1.0), 0.0)


def _row_normalise(A):
    norms = jnp.linalg.norm(A, axis=1, keepdims=True)
    return A / jnp.where(norms > 0, norms, 1.0)


def _diagnose(M, A):
    """Rank checks on stopped gradients: (redundant rows of ``A``, projector onto ``null(M) ∩ null(A)``).

    ``K = [M −Aᵀ; A 0]`` is regular iff ``A`` has full row rank and no ``d ≠ 0`` has ``A d = 0``, ``dᵀ M d = 0``;
    for ``M ⪰ 0`` the latter is ``[M; A] d = 0``. Both are read from SVDs with a relative tolerance, taken
    on ``stop_gradient`` values so that the derivative of the map (regular case) never sees an SVD.
    """
    M, A = jax.lax.stop_gradient((M, A))
    n, m = M.shape[0], A.shape[0]
    A_hat = _row_normalise(A)
    if m == 0:
        redundant = jnp.asarray(False)
    elif m > n:
        redundant = jnp.asarray(True)
    else:
        s = jnp.linalg.svd(A_hat, compute_uv=False)
        redundant = s[-1] <= _RANK_RTOL * s[0]
    scale = jnp.max(jnp.abs(M))
    stacked = jnp.concatenate([M / jnp.where(scale > 0, scale, 1.0), A_hat])
    _, s, vt = jnp.linalg.svd(stacked, full_matrices=False)
    free = s <= _RANK_RTOL * jnp.maximum(s[0], 1.0)
    return redundant, (vt.T * free[None, :]) @ vt


def _solve(M, A, qdot_minus, b_plus, keep_massless: bool):
    """Unchecked KKT solve; returns the solution (``result`` from the rank checks) without raising."""
    n, m = M.shape[0], A.shape[0]
    redundant, P0 = _diagnose(M, A)
    undetermined = jnp.trace(P0) > 0.5
    # Adding P0 (zero when regular) keeps the components of q̇ in null(M) ∩ null(A) at their pre-impact value
    # and makes K regular; with massless="error" the result flags them instead.
    M_eff = M + P0
    K = jnp.block([[M_eff, -A.T], [A, jnp.zeros((m, m), M.dtype)]])
    K = jnp.where(redundant, jnp.eye(n + m, dtype=M.dtype), K)  # finite values for a flagged result
    rhs = jnp.block([[M_eff, jnp.zeros((n, m), M.dtype)], [jnp.zeros((m, n), M.dtype), jnp.eye(m, dtype=M.dtype)]])
    S = jnp.linalg.solve(K, rhs)
    P_a, G, L_a, W_c = S[:n, :n], S[:n, n:], S[n:, :n], S[n:, n:]
    qdot_plus = P_a @ qdot_minus + G @ b_plus
    impulses = L_a @ qdot_minus + W_c @ b_plus
    P_c = jnp.eye(n, dtype=M.dtype) - P_a
    v_c, v_a = P_c @ qdot_minus, P_a @ qdot_minus
    energy = lambda v: 0.5 * v @ M @ v  # noqa: E731
    T_minus, Tc_minus, Tc_plus = energy(qdot_minus), energy(v_c), energy(G @ b_plus)
    loss = Tc_minus - Tc_plus
    positive_T = T_minus > 0
    xi = jnp.where(positive_T, loss / jnp.where(positive_T, T_minus, 1.0), 0.0)
    result = ImpactResults.where(redundant, ImpactResults.redundant_constraints, ImpactResults.successful)
    if not keep_massless:
        result = ImpactResults.where(~redundant & undetermined, ImpactResults.undetermined, result)
    return ImpactSolution(
        qdot_plus=qdot_plus, impulses=impulses, P_c=P_c, P_a=P_a, v_c=v_c, v_a=v_a,
        T_minus=T_minus, T_plus=energy(qdot_plus), Tc_minus=Tc_minus, Ta_minus=energy(v_a), Tc_plus=Tc_plus,
        loss=loss, xi=xi, lifted_off=jnp.zeros((0,), bool), unilateral_velocity=jnp.zeros((0,), M.dtype),
        result=result,
    )


def _keep(massless: str) -> bool:
    if massless not in ("error", "keep"):
        raise ValueError(f"`massless` must be 'error' or 'keep', got {massless!r}.")
    return massless == "keep"


def _raise(sol: ImpactSolution, throw: bool) -> ImpactSolution:
    """Flag a non-finite solution of a successful solve (an overflow), then raise on any failure with `throw`."""
    finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(sol) if x.dtype != bool]))
    result = ImpactResults.where(finite | (sol.result != ImpactResults.successful), sol.result,
                                 ImpactResults.non_finite)
    sol = eqx.tree_at(lambda s: s.result, sol, result)
    return sol.result.error_if(sol, sol.result != ImpactResults.successful) if flag("throw", throw) else sol


@eqx.filter_jit
def constrained_impact(
    M: MassMatrix,
    A: Float[Array, "m n"],
    qdot_minus: Velocity,
    b_plus: Float[Array, " m"] | None = None,
    *,
    massless: Literal["error", "keep"] = "error",
    throw: bool = True,
) -> ImpactSolution:
    r"""Impulsive impact with bilateral post-impact constraints ``A q̇⁺ = b⁺`` (seed 002, eqs. 4–5, 21–22).

    Solves the KKT system

    $$\begin{bmatrix} M & -A^T \\ A & 0 \end{bmatrix}\begin{bmatrix}\dot q^+ \\ \bar\lambda\end{bmatrix}
      = \begin{bmatrix} M \dot q^- \\ b^+ \end{bmatrix}$$

    and, from the same factorisation, ``P_a`` (the map ``q̇ ↦ q̇⁺`` at ``b⁺ = 0``), ``P_c = I − P_a`` and
    ``ᵍP_cˡ`` (seed 003, eqs. 9–10; seed 002, eq. 20), which equal the ``M⁻¹`` formulas when ``M`` is regular.

    **Arguments:**

    - `M`: mass matrix ``(n, n)``, symmetric positive semi-definite (may be singular); checked (to ``√ε``).
    - `A`: constraint rows ``(m, n)``, full row rank.
    - `qdot_minus`: pre-impact velocities ``(n,)``.
    - `b_plus`: prescribed post-impact values ``(m,)`` (rheonomic constraints, partial blocking); zero by
      default (sticking contacts, total blocking).
    - `massless`: ``"error"`` (default) reports ``ImpactResults.undetermined`` when a massless coordinate is left
      free by the constraints; ``"keep"`` keeps the pre-impact value of those velocity components (the
      Euclidean-nearest of the equally valid solutions; impulses and energies do not depend on this choice).
    - `throw`: raise on a failed result (else return it in ``result``).

    **Returns:** an :class:`ImpactSolution`.
    """
    keep = _keep(massless)
    M = psd_matrix("M", M)
    n = M.shape[0]
    A = as_float("A", A)
    if A.ndim != 2 or A.shape[1] != n:
        raise ValueError(f"`A` must have shape (m, {n}), got {A.shape}.")
    qdot_minus = as_float("qdot_minus", qdot_minus, shape=(n,))
    b_plus = jnp.zeros(A.shape[0], M.dtype) if b_plus is None else as_float("b_plus", b_plus, shape=A.shape[:1])
    return _raise(_solve(M, A, qdot_minus, b_plus, keep), throw)
