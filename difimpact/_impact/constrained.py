"""Impulsive impact with post-impact velocity constraints and energy decomposition.

The impulse–momentum equations ``M (q̇⁺ − q̇⁻) = Aᵀ λ̄`` with the post-impact constraints ``A q̇⁺ = b⁺``
(seed 002, eqs. 4–5; seed 003, eqs. 3, 8) are solved in KKT form, never through ``M⁻¹``, so that massless
segments (seed 003's μ = 0 and μ_T = 0, where ``M`` is singular) are handled. The spaces of constrained and
admissible motion (seed 003, eqs. 9–23; seed 002, eqs. 13–26) are read off the same factorisation.

Contacts that were holding before the impact and may lift off (seed 003, eq. 4; seed 002, eq. 9 and
footnote 4) are resolved exactly by enumerating their active sets in :func:`impact`.
"""

import itertools
from collections.abc import Mapping, Sequence
from typing import Literal

import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Array, Bool, Config, Float, MassMatrix, Scalar, Velocity
from .._models.base import AbstractPlanarModel
from .._results import RESULTS
from .._validation import as_float, check

# Relative tolerance below which a singular value counts as zero (row-normalised ``A`` and ``[M/‖M‖; A]``).
_RANK_RTOL = 1e-10
# Relative tolerance of the sign conditions of a unilateral contact (impulse ≥ 0, separating velocity ≥ 0).
_SIGN_RTOL = 1e-9


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
    return sol.result.error_if(sol, sol.result != ImpactResults.successful) if throw else sol


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

    - `M`: mass matrix ``(n, n)``, symmetric positive semi-definite (may be singular).
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
    M = as_float("M", M)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"`M` must be a square matrix, got shape {M.shape}.")
    n = M.shape[0]
    A = as_float("A", A)
    if A.ndim != 2 or A.shape[1] != n:
        raise ValueError(f"`A` must have shape (m, {n}), got {A.shape}.")
    qdot_minus = as_float("qdot_minus", qdot_minus, shape=(n,))
    b_plus = jnp.zeros(A.shape[0], M.dtype) if b_plus is None else as_float("b_plus", b_plus, shape=A.shape[:1])
    return _raise(_solve(M, A, qdot_minus, b_plus, keep), throw)


def _coordinate(model: AbstractPlanarModel, c) -> int:
    names = model.coordinate_names
    if isinstance(c, str):
        if c not in names:
            raise ValueError(f"`blocked`: unknown coordinate {c!r}; this model has {list(names)}.")
        return names.index(c)
    if isinstance(c, int) and not isinstance(c, bool) and -len(names) <= c < len(names):
        return c % len(names)
    raise ValueError(f"`blocked`: {c!r} is neither a coordinate name nor an index in 0..{len(names) - 1}.")


@eqx.filter_jit
def impact(
    model: AbstractPlanarModel,
    q: Config,
    qdot_minus: Velocity,
    *,
    stick: Sequence[str] = (),
    blocked: Sequence[str | int] | Mapping[str | int, float] = (),
    unilateral: Sequence[str] = (),
    restitution: Mapping[str, float] | None = None,
    unilateral_tangent: Literal["free", "stick", "always"] = "free",
    massless: Literal["error", "keep"] = "error",
    ground_tol: float = 1e-6,
    throw: bool = True,
) -> ImpactSolution:
    r"""Impulsive impact of a planar model on flat ground (seed 003, eqs. 3–4, 8–23; seed 002, eqs. 4–26).

    Constraint rows after the impact, in this order (also the layout of ``impulses``):

    1. each point of `stick` collides and sticks: rows ``[normal; tangential]`` of
       ``model.contact_jacobian`` with ``v⁺ = 0`` (seed 003, eq. 3), or a normal velocity ``v_n⁺ = −e v_n⁻``
       with `restitution` (below);
    2. each coordinate of `blocked` (name or index): ``q̇_j⁺ = 0``, or ``q̇_j⁺ = `` the given value when
       `blocked` is a mapping (partial blocking, seed 002, eqs. 5, 10–12);
    3. each point of `unilateral` was holding before the impact and either stays (normal row, ``v_n⁺ = 0``,
       normal impulse ≥ 0) or lifts off (``v_n⁺ ≥ 0``, no normal impulse) (seed 003, eq. 4; seed 002, eq. 9).
       Its tangential row depends on `unilateral_tangent`: ``"free"`` never (seed 003, eq. 4: only ``B_S``),
       ``"stick"`` while it stays, ``"always"`` in both cases (seed 002, eqs. 8–9). All ``2^k`` choices are
       solved and the consistent one is returned (seed 002, footnote 4). Two impulse slots per contact,
       ``[normal, tangential]``, zero for a row not enforced.

    `restitution` maps points of `stick` to Newton's kinematic coefficient ``e ∈ [0, 1]``:
    ``v_n⁺ = −e v_n⁻``, a non-zero ``b⁺`` (seed 002, eq. 5) while the tangential velocity stays zero. For a
    single sticking contact with no tangential pre-impact velocity this equals Stronge's energetic coefficient
    (``e² = −W_restitution / W_compression``; Stronge, *Impact Mechanics*, 2000, §4.3).

    **Arguments:**

    - `model`: the planar model; `q`, `qdot_minus`: configuration and pre-impact velocities ``(n,)``.
    - `stick`, `blocked`, `unilateral`, `restitution`: the constraints above. Contact points must lie on the
      ground (``|y| ≤ ground_tol ×`` the model's size in posture `q`); `stick` points must approach it
      (``v_n⁻ < 0``).
    - `unilateral_tangent`: ``"free"``, ``"stick"`` or ``"always"``, see 3.
    - `massless`, `throw`: as in :func:`constrained_impact`.

    **Returns:** an :class:`ImpactSolution`, with `lifted_off` and `unilateral_velocity` for `unilateral`.

    Works under ``jit``/``vmap``/``grad``; ``stick``, ``blocked``'s keys, ``unilateral`` and the options are
    static (a Python float in `blocked` or `restitution` is static too: pass arrays to sweep without
    recompiling). Derivatives are those of the selected active set: one-sided where the outcome switches
    between staying and lifting off.
    """
    keep = _keep(massless)
    if unilateral_tangent not in ("free", "stick", "always"):
        raise ValueError(f"`unilateral_tangent` must be 'free', 'stick' or 'always', got {unilateral_tangent!r}.")
    stick, unilateral = tuple(stick), tuple(unilateral)
    for name, pts in (("stick", stick), ("unilateral", unilateral)):
        if isinstance(pts, str) or not all(isinstance(p, str) for p in pts):
            raise ValueError(f"`{name}` must be a sequence of point names, got {pts!r}.")
    points = stick + unilateral
    if len(set(points)) != len(points):
        raise ValueError(f"a point may appear once in `stick` and `unilateral`, got {list(points)}.")
    if isinstance(blocked, str):
        raise ValueError(f"`blocked` must be a sequence or a mapping of coordinates, got {blocked!r}.")
    rates = dict(blocked) if isinstance(blocked, Mapping) else {c: 0.0 for c in blocked}
    coords = [_coordinate(model, c) for c in rates]
    if len(set(coords)) != len(coords):
        raise ValueError(f"`blocked` names a coordinate twice: {list(rates)}.")
    restitution = {} if restitution is None else dict(restitution)
    for p in restitution:
        if p not in stick:
            raise ValueError(f"`restitution` point {p!r} is not in `stick` {list(stick)}.")

    q = as_float("q", q, shape=(model.n,))
    qdot_minus = as_float("qdot_minus", qdot_minus, shape=(model.n,))
    position = {p: model.point(q, p) for p in model.point_names}
    for p in points:
        if p not in position:
            raise ValueError(f"unknown point {p!r}; this model has {list(model.point_names)}.")
    all_pos = jnp.stack(list(position.values()))
    size = jnp.max(jnp.linalg.norm(all_pos[:, None] - all_pos[None], axis=-1))
    for p in points:
        y = position[p][1]
        q = check(q, jnp.abs(y) > ground_tol * size, f"contact point {p!r} is not on the ground (|y| > "
                  f"{ground_tol} × model size); place it with model.solve_coordinate.")
    M = model.mass_matrix(q)
    n = model.n
    J = {p: model.contact_jacobian(q, p) for p in points}
    b_rows = []
    for p in stick:
        vn = J[p][0] @ qdot_minus
        qdot_minus = check(qdot_minus, vn >= 0, f"`stick` point {p!r} is not approaching the ground "
                           "(v_n⁻ ≥ 0): nothing collides there.")
        if p in restitution:
            e = as_float(f"restitution[{p!r}]", restitution[p], shape=())
            e = check(e, (e < 0) | (e > 1), f"`restitution[{p!r}]` must lie in [0, 1].")
            b_rows += [-e * vn, jnp.zeros((), M.dtype)]
        else:
            b_rows += [jnp.zeros((), M.dtype)] * 2
    for c, r in rates.items():
        b_rows.append(as_float(f"blocked[{c!r}]", r, shape=()))
    eye = jnp.eye(n, dtype=M.dtype)
    A_fixed = jnp.concatenate([J[p] for p in stick] + [eye[c][None] for c in coords], axis=0).reshape(-1, n)
    b_fixed = jnp.stack(b_rows) if b_rows else jnp.zeros((0,), M.dtype)
    m_fixed = A_fixed.shape[0]

    candidates = []
    for stays in itertools.product((True, False), repeat=len(unilateral)):
        # rows of each unilateral contact in this active set: (normal, tangential)
        has = [(s, (s and unilateral_tangent == "stick") or unilateral_tangent == "always") for s in stays]
        rows = [J[p][i:i + 1] for p, hp in zip(unilateral, has) for i, h in enumerate(hp) if h]
        A = jnp.concatenate([A_fixed] + rows, axis=0)
        b = jnp.concatenate([b_fixed, jnp.zeros(A.shape[0] - m_fixed, M.dtype)])
        sol = _solve(M, A, qdot_minus, b, keep)
        lam, i = [sol.impulses[:m_fixed]], m_fixed
        for hp in has:
            for h in hp:
                lam.append(sol.impulses[i:i + 1] if h else jnp.zeros(1, M.dtype))
                i += h
        vn_u = jnp.stack([J[p][0] @ sol.qdot_plus for p in unilateral]) if unilateral else jnp.zeros(0, M.dtype)
        candidates.append(eqx.tree_at(
            lambda s: (s.impulses, s.lifted_off, s.unilateral_velocity), sol,
            (jnp.concatenate(lam), ~jnp.asarray(stays, bool).reshape(-1), vn_u),
        ))
    stacked = jax.tree.map(lambda *xs: jnp.stack(xs), *candidates)
    regular = jnp.stack([c.result == ImpactResults.successful for c in candidates])
    v_scale = jnp.max(jnp.abs(jnp.concatenate([A_fixed @ qdot_minus] + [J[p] @ qdot_minus for p in points]
                                               + [stacked.unilateral_velocity.reshape(-1), jnp.ones(1)])))
    lam_scale = jnp.max(jnp.abs(jnp.where(regular[:, None], stacked.impulses, 0.0)), initial=0.0)
    lam_n = stacked.impulses[:, m_fixed::2]
    ok = jnp.where(stacked.lifted_off, stacked.unilateral_velocity >= -_SIGN_RTOL * v_scale,
                   lam_n >= -_SIGN_RTOL * lam_scale)
    consistent = regular & jnp.all(ok, axis=1)
    pick = jnp.argmax(consistent)
    chosen = jax.tree.map(lambda x: x[pick], stacked)
    q_scale = jnp.max(jnp.abs(stacked.qdot_plus), initial=1.0)
    differs = jnp.max(jnp.abs(stacked.qdot_plus - chosen.qdot_plus[None]), axis=1) > 1e-8 * q_scale
    several = jnp.any(consistent & differs)
    any_redundant = jnp.any(stacked.result == ImpactResults.redundant_constraints)
    any_undetermined = jnp.any(stacked.result == ImpactResults.undetermined)
    failed = ImpactResults.where(
        any_redundant, ImpactResults.redundant_constraints,
        ImpactResults.where(any_undetermined, ImpactResults.undetermined, ImpactResults.no_consistent_set),
    )
    # An irregular active set (redundant rows, or a massless coordinate left free) makes the outcome
    # uncertain even when another set is consistent: it is reported, not skipped.
    result = ImpactResults.where(
        jnp.any(consistent) & ~any_redundant & ~any_undetermined,
        ImpactResults.where(several, ImpactResults.several_consistent_sets, ImpactResults.successful),
        failed,
    )
    return _raise(eqx.tree_at(lambda s: s.result, chosen, result), throw)


def loss_per_distance(model: AbstractPlanarModel, q: Config, solution: ImpactSolution) -> Scalar:
    """``ξ_L = (T⁻ − T⁺) / L`` with the model's step length ``L(q)`` (seed 003, eq. 23: ``T_c⁻ / L`` when
    ``b⁺ = 0``), in J/m."""
    if not hasattr(model, "step_length"):
        raise ValueError(f"{type(model).__name__} defines no `step_length`.")
    return solution.loss / model.step_length(q)
