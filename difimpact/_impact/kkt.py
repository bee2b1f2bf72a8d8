"""The impulse–momentum KKT system of an impact, its rank diagnosis and its massless limit, without LAPACK.

``K = [M −Aᵀ; A 0]`` (Ros et al. 2015, eqs. 4–5) is solved one mass scale at a time (:mod:`.scaled`) by the unrolled
``LU`` of :func:`difimpact._linalg.lu_factor` and its rank read by the pivoted Gram–Schmidt of
:func:`difimpact._linalg.row_basis`, so that ``vmap`` of an impact emits no batched LAPACK call. Massless
segments (Font & Kövecses 2008's μ = 0 and μ_T = 0) make ``M`` singular; a coordinate that no body with mass moves and
no constraint holds is then undetermined, and its treatment, value and derivative, is the business of :func:`solve_kkt`.
"""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Array, Bool, Float, MassMatrix, Scalar, Velocity
from .._linalg import full_precision, row_basis, solve_lu, solve_spd
from .._results import RESULTS
from .scaled import Scaling, inverse_columns

# Relative tolerance below which a pivot counts as zero (row-normalised ``A`` and ``[M/‖M‖; A]``).
_RANK_RTOL = 1e-10


class ImpactResults(RESULTS):  # pyright: ignore
    """Outcomes of :func:`constrained_impact` and :func:`impact`; ``nonfinite``: non-finite velocities, impulses or
    energies from finite input (velocities or masses too large for the floating-point range)."""

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


# The reason given when an impact raises on `nonfinite`.
NONFINITE = ("The impact gave non-finite velocities, impulses or energies from finite input: an overflow "
             "(velocities or masses too large for the floating-point range).")


class ImpactSolution(eqx.Module):
    """Result of an impulsive impact with post-impact constraints ``A q̇⁺ = b⁺``.

    - `qdot_plus`: post-impact velocities ``q̇⁺ = P_a q̇⁻ + ᵍP_cˡ b⁺`` (Ros et al. 2015, eq. 21).
    - `impulses`: ``λ̄``, one per constraint row, with ``M (q̇⁺ − q̇⁻) = Aᵀ λ̄`` (Ros et al. 2015, eqs. 4, 22). For
      :func:`impact` the rows are laid out as documented there, zero for contacts that lifted off.
    - `P_c`, `P_a`: projectors onto the spaces of constrained and admissible motion (Font & Kövecses 2008, eqs. 9–10),
      ``P_c + P_a = I``, ``P_cᵀ M P_a = 0``.
    - `v_c`, `v_a`: ``P_c q̇⁻`` and ``P_a q̇⁻`` (Font & Kövecses 2008, eq. 11).
    - `T_minus`, `T_plus`: kinetic energies before and after; `Tc_minus`, `Ta_minus`: the pre-impact energy of
      the constrained and admissible spaces (Font & Kövecses 2008, eq. 13); `Tc_plus = ½ b⁺ᵀ W_c b⁺` (Ros et al. 2015,
      eq. 24).
    - `loss`: ``T⁻ − T⁺ = T_c⁻ − T_c⁺`` (Ros et al. 2015, eq. 23; Font & Kövecses 2008, eq. 21 when ``b⁺ = 0``).
    - `xi`: ``loss / T⁻`` (Ros et al. 2015, eq. 23), 0 when ``T⁻ = 0``.
    - `lifted_off`, `unilateral_velocity`: for each unilateral contact of :func:`impact`, whether it lifted off
      and its post-impact normal velocity (``v_Sn⁺``, Font & Kövecses 2008, eq. 4); empty for
      :func:`constrained_impact`.
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
        """``ξ_I = T_c⁻ / T⁻``, the share of the pre-impact energy in the constrained space (Font & Kövecses 2008,
        eq. 23)."""
        return jnp.where(self.T_minus > 0, self.Tc_minus / jnp.where(self.T_minus > 0, self.T_minus, 1.0), 0.0)


def _row_normalise(A):
    norms = jnp.sqrt(jnp.sum(A * A, axis=1, keepdims=True))
    return A / jnp.where(norms > 0, norms, 1.0)


def _outer_sum(Q):
    """``QᵀQ`` as elementwise products (no batched ``dot_general`` on tiny operands)."""
    return jnp.sum(Q[:, :, None] * Q[:, None, :], axis=0)


def diagnose(M, A, active=None):
    """Rank checks on stopped gradients: (redundant rows of ``A``, projector ``P0`` onto ``null(M) ∩ null(A)``).

    ``K`` is regular iff ``A`` has full row rank and no ``d ≠ 0`` has ``A d = 0``, ``dᵀ M d = 0``; for ``M ⪰ 0``
    the latter is ``[M; A] d = 0``. Both are read from pivoted Gram–Schmidt (rank-revealing QR) with a relative
    tolerance, on ``stop_gradient`` values so that the derivative of the map never sees the pivoting. With
    `active`, ``A``'s inactive rows are zero and the rank is compared with the number of active rows.
    """
    M, A = jax.lax.stop_gradient((M, A))
    n, m = M.shape[0], A.shape[0]
    A_hat = _row_normalise(A)
    if m == 0:
        redundant = jnp.asarray(False)
    elif active is not None:
        _, kept, _ = row_basis(A_hat, min(m, n), _RANK_RTOL)
        redundant = jnp.sum(kept) < jnp.sum(active)
    elif m > n:
        redundant = jnp.asarray(True)
    else:
        _, _, r = row_basis(A_hat, m, _RANK_RTOL)
        redundant = r[-1] <= _RANK_RTOL * r[0]
    scale = jnp.max(jnp.abs(M))
    Q, kept, _ = row_basis(jnp.concatenate([M / jnp.where(scale > 0, scale, 1.0), A_hat]), n, _RANK_RTOL)
    return redundant, _complement(Q, kept)


def _complement(Q, kept):
    """``I − QᵀQ``, the projector onto the complement of the rows of `Q`, exactly ``0`` when all are kept: its
    rounding (``ε`` over the smallest kept residual) would otherwise add a spurious mass along a light direction."""
    n = Q.shape[1]
    return jnp.where(jnp.all(kept), 0.0, jnp.eye(n, dtype=Q.dtype) - _outer_sum(Q))


@full_precision
def _massless_limit(P0, unit_masses, P_a, G):
    r"""``(P_a, G)`` of the limit of vanishing masses, and whether that limit is determined.

    Let the massless bodies gain equal masses ``ε > 0``: ``M_ε = M + ε D_0`` with ``D_0`` their mass matrix as
    unit point masses. Projected on ``N = null(M) ∩ null(A) = span(Z)``, ``M_ε Δq̇ − Aᵀλ̄ = 0`` (Ros et al. 2015,
    eq. 4) reads $\varepsilon  Z^T D_0 \Delta \dot{q} = 0$, for every ``ε``: the change of velocity carries no momentum
    of the massless bodies along ``N``. Along ``N`` the bodies with mass do not move, so ``ZᵀD_0 = ZᵀD`` with ``D`` =
    `unit_masses`, every body a unit point mass. The other components of ``Δq̇`` are those of any solution at ``ε = 0``,
    so the limit ``ε → 0⁺`` is ``Δq̇ ← (I − E) Δq̇`` with the oblique projector onto ``N``

    $$
    E = Z (Z^T D Z)^{-1} Z^T D = (P_0 D P_0 + I - P_0)^{-1} P_0 D,
    $$

    which exists when ``ZᵀDZ`` is regular (every free direction moves some body's centre).
    """
    eye = jnp.eye(P0.shape[0], dtype=P0.dtype)
    scale = jnp.max(jnp.abs(unit_masses))
    D = unit_masses / jnp.where(scale > 0, scale, 1.0)
    E, pivot = solve_lu(P0 @ D @ P0 + eye - P0, P0 @ D)
    return P_a - E @ (P_a - eye), G - E @ G, pivot > _RANK_RTOL


@jax.custom_jvp
def turning_projector(X: Float[Array, "k n"], P: MassMatrix) -> MassMatrix:
    """`P`, the projector onto ``null(X)`` (from stopped values: :func:`diagnose`, :func:`_unseen`), with the
    derivative of that null space as ``X`` moves at constant rank (bodies without mass stay so as ``q`` moves):
    ``dP = −X⁺ dX P − P dXᵀ X⁺ᵀ``, ``X⁺ = (XᵀX + P)⁻¹ Xᵀ``. Zero where ``P = 0``."""
    return P


@turning_projector.defjvp
def _turning_projector_jvp(primals, tangents):
    X, P = primals
    dX, _ = tangents
    pinv, _ = solve_lu(X.T @ X + P, X.T)
    pinv = jnp.where((jnp.trace(P) > 0.5) & jnp.isfinite(pinv), pinv, 0.0)  # a constant of the tangents
    T = pinv @ dX @ P
    return P, -(T + T.T)


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _no_derivative_where(x, bad, message):
    """``x``, whose derivative raises ``message`` where ``bad`` (its value does not)."""
    return x


@_no_derivative_where.defjvp
def _no_derivative_where_jvp(message, primals, tangents):
    x, bad = primals
    return eqx.error_if(x, bad, message), tangents[0]


_UNDETERMINED_DERIVATIVE = (
    "The derivative of an impact with a massless coordinate left free (massless='keep') is undetermined: it "
    "depends on how the missing mass goes to zero. `impact` derives it from the model's massless bodies; with "
    "`constrained_impact` give the coordinate a small mass, or differentiate away from the bound."
)


def _unseen(M_H, A, M_L):
    """Projector onto ``U = null([M_H; A; M_L])`` (each block scaled to unit size), on stopped gradients: the
    directions along which no body with mass moves and no constraint acts."""
    M_H, A, M_L = jax.lax.stop_gradient((M_H, A, M_L))
    unit = lambda X: X / jnp.where(jnp.max(jnp.abs(X)) > 0, jnp.max(jnp.abs(X)), 1.0)
    Q, kept, _ = row_basis(jnp.concatenate([unit(M_H), _row_normalise(A), unit(M_L)]), M_H.shape[0], _RANK_RTOL)
    return _complement(Q, kept)


def _scaling(M_H, M_L, A, P_N, P_U, dropped, unit_masses, redundant) -> Scaling:
    """The :class:`~difimpact._impact.scaled.Scaling` of the rows (module docstring of ``scaled``)."""
    M_H, M_L, A = jax.lax.stop_gradient((M_H, M_L, A))
    positive = lambda x: jnp.where(x > 0, x, 1.0)
    n, m = A.shape[1], A.shape[0]
    # B keeps its derivative in q (the rows P_U B Δq̇ = 0 turn with it); its scale does not (those rows are = 0)
    B = jnp.eye(n, dtype=M_H.dtype) if unit_masses is None else (
        unit_masses / jax.lax.stop_gradient(positive(jnp.max(jnp.abs(unit_masses)))))
    # A redundant set is flagged; its rows are dropped so that the values stay finite.
    dropped = jnp.where(redundant, jnp.ones(m, M_H.dtype), dropped)
    A_norms = jnp.where(dropped > 0, 1.0, jnp.sqrt(jnp.sum(A * A, axis=1)))
    return Scaling(P_N=P_N, P_U=P_U, sigma=positive(jnp.max(jnp.abs(M_H))), s=positive(jnp.max(jnp.abs(M_L))),
                   r=positive(A_norms), B=B, dropped=dropped)


@full_precision
def solve_kkt(M: MassMatrix, A: Float[Array, "m n"], qdot_minus: Velocity, b_plus: Float[Array, " m"],
              keep: bool | str, unit_masses: MassMatrix | None = None, active: Bool[Array, " m"] | None = None,
              light: MassMatrix | None = None) -> ImpactSolution:
    """Unchecked KKT solve; returns the solution (``result`` from the rank checks) without raising.

    With `active`, a row where it is ``False`` is dropped: its row and column of ``K`` become those of the
    identity and its ``b⁺`` zero, so its impulse is zero and it constrains nothing; the active rows give the
    solution of ``K`` without it. One compiled program then serves every subset of the rows.

    `light` is the part ``M_L`` of `M` that the light bodies contribute (:mod:`~difimpact._impact.scaled`):
    their rates are then solved at their own scale, to full accuracy whatever their mass. Coordinates that no
    body with mass moves and no constraint holds (``P_U ≠ 0``) are held at their pre-impact velocity
    (``keep=True``) or flagged (``False``); with `unit_masses` (``D`` of :func:`_massless_limit`) the solve gives
    them the limit of vanishing masses instead, ``Z_Uᵀ D Δq̇ = 0``, which ``keep="limit"`` reports and
    ``keep=True`` differentiates (it reports the pre-impact value); without it a derivative raises.
    """
    m = A.shape[0]
    dropped = jnp.zeros(m, M.dtype)
    if active is not None:
        A, b_plus = jnp.where(active[:, None], A, 0.0), jnp.where(active, b_plus, 0.0)
        dropped = jnp.where(active, 0.0, 1.0).astype(M.dtype)
    M_L = jnp.zeros_like(M) if light is None else light
    M_H = M if light is None else M - M_L
    redundant, P_N = diagnose(M_H, A, active)
    P_U = P_N if light is None else _unseen(M_H, A, M_L)
    undetermined = jnp.trace(P_U) > 0.5
    limit = bool(keep) and unit_masses is not None
    sc = _scaling(M_H, M_L, A, P_N, P_U, dropped, unit_masses if limit else None, redundant)
    G, W, pivot = inverse_columns(M_H, M_L, A, sc, light is not None or limit)
    singular = ~redundant & ~(pivot > _RANK_RTOL)  # the limit is undetermined too (Z_Uᵀ D Z_U singular)
    if keep:
        bad = (undetermined & singular) if limit else undetermined
        G = _no_derivative_where(G, bad, _UNDETERMINED_DERIVATIVE)
    result = ImpactResults.where(redundant, ImpactResults.redundant_constraints, ImpactResults.successful)
    failed = singular if keep else (singular | undetermined)
    result = ImpactResults.where(~redundant & failed, ImpactResults.undetermined, result)
    # the held components turn with q: U's derivative (at constant rank) in the reported velocities
    X = jnp.concatenate([M_H / sc.sigma, A / sc.r[:, None], M_L / sc.s])
    held = turning_projector(X, P_U) if keep is True else None
    return _solution(M, A, G, W, held, qdot_minus, b_plus, result)


@full_precision
def solve_kkt_regular(M: MassMatrix, A: Float[Array, "m n"], qdot_minus: Velocity,
                      b_plus: Float[Array, " m"]) -> ImpactSolution:
    r""":func:`solve_kkt` where ``M`` is positive definite and ``A`` has full row rank (a gait's heel strike,
    which a transcription differentiates twice), by the Schur complement alone:

    $$W = (A M^{-1} A^T)^{-1}, \qquad G = M^{-1} A^T W$$

    (Ros et al. 2015, eqs. 4–9): two unrolled ``LDLᵀ`` solves, no rank diagnosis. Where ``M`` or ``A M⁻¹Aᵀ``
    is singular to working precision :func:`~difimpact._linalg.solve_spd` raises (NaN inside a program that
    makes checks NaN)."""
    X = solve_spd(M, A.T, "M")
    W = solve_spd(A @ X, jnp.eye(A.shape[0], dtype=M.dtype), "A M^-1 A^T")
    result = ImpactResults.where(jnp.asarray(False), ImpactResults.undetermined, ImpactResults.successful)
    return _solution(M, A, X @ W, W, None, qdot_minus, b_plus, result)


@full_precision
def _solution(M, A, G, W, held, qdot_minus, b_plus, result) -> ImpactSolution:
    """The :class:`ImpactSolution` of ``G``, ``W_c`` (:func:`~difimpact._impact.scaled.inverse_columns`):
    energies from them; with `held` (``P_U``), the reported velocities keep the components along ``U`` at
    their pre-impact value (``massless="keep"``)."""
    n = M.shape[0]
    eye = jnp.eye(n, dtype=M.dtype)
    energy = lambda v: 0.5 * v @ M @ v
    jump = b_plus - A @ qdot_minus
    P_a = eye - G @ A
    qdot_plus = qdot_minus + G @ jump
    v_c = G @ (A @ qdot_minus)
    v_a = qdot_minus - v_c
    T_minus, Tc_minus, Tc_plus = energy(qdot_minus), energy(v_c), energy(G @ b_plus)
    T_plus, Ta_minus = energy(qdot_plus), energy(v_a)
    if held is not None:
        G = G - held @ G
        P_a = eye - G @ A
        qdot_plus = qdot_minus + G @ jump
        v_c = G @ (A @ qdot_minus)
        v_a = qdot_minus - v_c
    loss = Tc_minus - Tc_plus
    positive_T = T_minus > 0
    xi = jnp.where(positive_T, loss / jnp.where(positive_T, T_minus, 1.0), 0.0)
    return ImpactSolution(
        qdot_plus=qdot_plus, impulses=W @ jump, P_c=eye - P_a, P_a=P_a, v_c=v_c, v_a=v_a,
        T_minus=T_minus, T_plus=T_plus, Tc_minus=Tc_minus, Ta_minus=Ta_minus, Tc_plus=Tc_plus,
        loss=loss, xi=xi, lifted_off=jnp.zeros((0,), bool), unilateral_velocity=jnp.zeros((0,), M.dtype),
        result=result,
    )
