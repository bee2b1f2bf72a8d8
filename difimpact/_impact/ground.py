"""The impulsive impact of a planar model on flat ground, with sticking, blocked and unilateral contacts.

Contacts that were holding before the impact and may lift off (Font & Kövecses 2008, eq. 4; Ros et al. 2015, eq. 9 and
footnote 4) are resolved exactly by enumerating their active sets: every choice of staying or lifting off is
solved by :func:`~difimpact.constrained_impact`'s KKT system and the consistent one is returned.
"""

import functools
import itertools
from collections.abc import Mapping, Sequence
from typing import Literal

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._check import program
from .._custom_types import Array, Bool, Config, Float, MassMatrix, Scalar, Velocity
from .._linalg import full_precision
from .._models.base import AbstractPlanarModel, AbstractSteppingModel
from .._tree import PlanarTree
from .._validation import as_float, check, instance, tolerance
from .constrained import ImpactResults, ImpactSolution, _raise
from .ground_options import check_options, mask_blocked, massless_keep, traced_values
from .kkt import solve_kkt

# Relative tolerance of the sign conditions of a unilateral contact (impulse ≥ 0, separating velocity ≥ 0).
_SIGN_RTOL = 1e-9
# Bodies lighter than this share of the heaviest are solved at their own scale (kkt.solve_kkt's `light`).
_LIGHT = 1e-3


def _unit_masses(tree: PlanarTree, q: Config) -> MassMatrix:
    """Mass matrix of `tree` with every body a unit point mass at its centre: ``D`` of
    :func:`~difimpact._impact.kkt.solve_kkt`. Along a direction that ``M`` does not see only bodies without
    (or with negligible) mass move, so ``ZᵀD`` weighs the momentum of those bodies alone."""
    unit = jnp.ones_like(tree.mass)
    return eqx.tree_at(lambda t: (t.mass, t.inertia), tree, (unit, jnp.zeros_like(tree.inertia))).mass_matrix(q)


def model_size(tree: PlanarTree, q: Config) -> Scalar:
    """The model's extent in posture `q`: the diagonal of the box around its joints, centres of mass and named
    points (1 m if they all coincide)."""
    joints, _ = tree.frames(q)
    points = [joints, tree.com_positions(q)] + [tree.point_position(q, p)[None] for p in tree.point_names]
    xy = jnp.concatenate(points)
    size = jnp.sqrt(jnp.sum((jnp.max(xy, axis=0) - jnp.min(xy, axis=0)) ** 2))
    return jnp.where(size > 0, size, 1.0)


def _light_part(tree: PlanarTree, q: Config) -> MassMatrix:
    """``M_L``: the part of the mass matrix from the light bodies, those with ``m_i ℓ² + I_i`` at most
    ``_LIGHT`` of the heaviest's (``ℓ`` = :func:`model_size`); ``M`` is linear in the masses and inertias.
    :func:`~difimpact._impact.kkt.solve_kkt` solves their rates at their own scale."""
    size = jax.lax.stop_gradient(model_size(tree, q))
    weight = jax.lax.stop_gradient(tree.mass * size**2 + tree.inertia)
    light = weight <= _LIGHT * jnp.max(weight)
    masses = (jnp.where(light, tree.mass, 0.0), jnp.where(light, tree.inertia, 0.0))
    return eqx.tree_at(lambda t: (t.mass, t.inertia), tree, masses).mass_matrix(q)


def _on_ground(model: AbstractPlanarModel, q: Config, points, ground_tol: float) -> Config:
    """``q``, checked to hold every contact point on the ground to within ``ground_tol`` × the model's size
    (:func:`model_size`, ``0 ≤ ground_tol < 1``)."""
    tol = tolerance("ground_tol", ground_tol, below=1.0, allow_zero=True)
    for p in points:
        if p not in model.point_names:
            raise ValueError(f"unknown point {p!r}; this model has {list(model.point_names)}.")
    size = model_size(model.tree(), q)
    for p in points:
        y = model.point(q, p)[1]
        q = check(q, jnp.abs(y) > tol * size, f"contact point {p!r} is not on the ground (|y| > "
                  f"{ground_tol} × model size); place it with model.solve_coordinate.")
    return q


@full_precision
def _fixed_rows(J, M: MassMatrix, qdot_minus: Velocity, stick, rates, coords, restitution):
    """Rows of the sticking points and blocked coordinates, ``A q̇⁺ = b⁺``; ``qdot_minus`` checked to make
    every sticking point approach the ground."""
    n = M.shape[0]
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
    return qdot_minus, A_fixed, b_fixed


@full_precision
def _active_sets(J, M, A_fixed, b_fixed, qdot_minus, unilateral, unilateral_tangent, keep, D,
                 fixed_active, light) -> ImpactSolution:
    """The solutions of every active set of the unilateral contacts (each stays or lifts off), stacked, with the
    impulses laid out two slots per unilateral contact, ``[normal, tangential]``; `fixed_active` (or ``None``:
    all) the rows of ``A_fixed`` enforced. The sets share one KKT system with every contact row, each set
    dropping the rows it does not enforce (:func:`~difimpact._impact.kkt.solve_kkt`'s `active`), solved under
    ``vmap``: one traced and compiled solve for all $2^k$ sets, and a dropped row's impulse is zero."""
    if not unilateral:
        return jax.tree.map(lambda x: x[None], solve_kkt(M, A_fixed, qdot_minus, b_fixed, keep, D, fixed_active,
                                                                  light))
    m_fixed, k = A_fixed.shape[0], len(unilateral)
    stays = np.array(list(itertools.product((True, False), repeat=k)))  # (2^k, k), the first set: all stay
    tangential = {"free": np.zeros_like(stays), "stick": stays, "always": np.ones_like(stays)}[unilateral_tangent]
    enforced = np.stack([stays, tangential], axis=2).reshape(len(stays), 2 * k)  # [normal, tangential] per contact
    fixed = jnp.ones(m_fixed, bool) if fixed_active is None else fixed_active
    active = jnp.concatenate([jnp.broadcast_to(fixed, (len(stays), m_fixed)), jnp.asarray(enforced)], axis=1)
    A = jnp.concatenate([A_fixed] + [J[p] for p in unilateral], axis=0)
    b = jnp.concatenate([b_fixed, jnp.zeros(2 * k, M.dtype)])
    sets = jax.vmap(lambda rows: solve_kkt(M, A, qdot_minus, b, keep, D, rows, light))(active)
    normals = jnp.stack([J[p][0] for p in unilateral])
    return eqx.tree_at(lambda s: (s.lifted_off, s.unilateral_velocity), sets,
                       (jnp.asarray(~stays), sets.qdot_plus @ normals.T))


def _consistent(stacked: ImpactSolution, v: Float[Array, " r"], m_fixed: int) -> ImpactSolution:
    """The first consistent active set (non-negative normal impulses on staying contacts, non-penetrating
    velocities on released ones, to ``_SIGN_RTOL`` of the scales; ``v`` the pre-impact contact velocities), with
    its result: several consistent sets with different velocities, none, or an irregular one are reported."""
    regular = stacked.result == ImpactResults.successful
    v_scale = jnp.max(jnp.abs(jnp.concatenate([v, stacked.unilateral_velocity.reshape(-1), jnp.ones(1)])))
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
    return eqx.tree_at(lambda s: s.result, chosen, result)


@functools.partial(program, normalise=traced_values)
@full_precision
def impact(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity, *, stick: Sequence[str] = (),
           blocked: Sequence[str | int] | Mapping[str | int, float] = (),
           blocked_active: Mapping[str | int, bool | Bool[Array, ""]] | None = None, unilateral: Sequence[str] = (),
           restitution: Mapping[str, float] | None = None,
           unilateral_tangent: Literal["free", "stick", "always"] = "free",
           massless: Literal["error", "keep", "limit"] = "error", ground_tol: float = 1e-6,
           throw: bool = True) -> ImpactSolution:
    r"""Impulsive impact of a planar model on flat ground (Font & Kövecses 2008, eqs. 3–4, 8–23;
    Ros et al. 2015, eqs. 4–26).

    Constraint rows after the impact, in this order (also the layout of ``impulses``):

    1. each point of `stick` collides and sticks: rows ``[normal; tangential]`` of ``model.contact_jacobian`` with
       ``v⁺ = 0`` (Font & Kövecses 2008, eq. 3), or a normal velocity ``v_n⁺ = −e v_n⁻`` with `restitution` (below);
    2. each coordinate of `blocked` (name or index): ``q̇_j⁺ = 0``, or ``q̇_j⁺ = `` the given value when
       `blocked` is a mapping (partial blocking, Ros et al. 2015, eqs. 5, 10–12), a mapping's coordinates in sorted
       order (as JAX flattens a ``dict``); with `blocked_active`, only those where it is not ``False`` (the
       others move freely and their impulse slot is zero);
    3. each point of `unilateral` was holding before the impact and either stays (normal row, ``v_n⁺ = 0``,
       normal impulse ≥ 0) or lifts off (``v_n⁺ ≥ 0``, no normal impulse) (Font & Kövecses 2008, eq. 4; Ros et al. 2015,
       eq. 9). Its tangential row depends on `unilateral_tangent`: ``"free"`` never (Font & Kövecses 2008, eq. 4: only
       ``B_S``), ``"stick"`` while it stays, ``"always"`` in both cases (Ros et al. 2015, eqs. 8–9). All $2^k$ choices
       are solved and the consistent one is returned (Ros et al. 2015, footnote 4). Two impulse slots per contact,
       ``[normal, tangential]``, zero for a row not enforced.

    `restitution` maps points of `stick` to Newton's kinematic coefficient ``e ∈ [0, 1]``: ``v_n⁺ = −e v_n⁻``, a
    non-zero ``b⁺`` (Ros et al. 2015, eq. 5) while the tangential velocity stays zero; for a single sticking contact
    with no tangential pre-impact velocity, Stronge's energetic coefficient (*Impact Mechanics*, 2000, §4.3).

    **Arguments:**

    - `model`: the planar model; `q`, `qdot_minus`: configuration and pre-impact velocities ``(n,)``.
    - `stick`, `blocked`, `unilateral`, `restitution`: the constraints above, at least one row in all (a
      single name is one point). Contact points must lie on the ground (``|y| ≤ ground_tol ×`` the model's
      size in posture `q`, ``0 ≤ ground_tol < 1``); `stick` points must approach it (``v_n⁻ < 0``).
    - `blocked_active`: ``{coordinate of blocked: bool}``, whether that coordinate is blocked in this impact
      (coordinates it does not name are). Its values are traced (pass JAX booleans), so one compiled program
      serves every blocking case, ``vmap`` over cases included, where each set of `blocked` keys compiles its own.
    - `unilateral_tangent`: ``"free"``, ``"stick"`` or ``"always"``, see 3.
    - `massless`: what a coordinate that no body with mass moves and no constraint holds gets: ``"error"``
      (default) reports ``ImpactResults.undetermined``; ``"keep"`` keeps its pre-impact velocity (derivatives
      are those of the limit below); ``"limit"`` the limit of vanishing masses (every massless body a point mass
      ``ε → 0⁺`` at its centre: the change of velocity carries none of their momentum along that coordinate).
      Bodies much lighter than the rest are not massless: their rates are solved at their own scale, and tend
      to the ``"limit"`` value continuously as their masses vanish.
    - `throw`: raise on a failed result (else return it in ``result``).

    **Returns:** an :class:`ImpactSolution`, with `lifted_off` and `unilateral_velocity` for `unilateral`.

    Works under ``jit``/``vmap``/``grad``. Names (points, coordinates) and options are static: each set compiles
    its own program. The values of ``blocked``, ``restitution`` and ``blocked_active`` are traced, Python numbers
    included (they become arrays before the program is looked up): a new value runs the same program. Derivatives are
    those of the selected active set: one-sided where the outcome switches between staying and lifting off.

    **Example:**

    ```python
    import math
    import difimpact as di

    walker = di.CrutchWalker()                                   # Font-Llagunes et al. 2012, Table 1
    q, qdot = walker.pre_impact_state(q3=math.radians(12), q5dot=-0.2)   # the crutch tip Q on the ground
    hit = di.impact(walker, q, qdot, stick=("Q",))               # Q sticks: its velocity after the impact is 0
    print(hit.impulses, hit.loss, hit.xi)                        # [14.155 -9.769] N s, 8.121 J lost, 18.6 % of T⁻
    ```
    """
    keep = massless_keep(massless)
    stick, unilateral, rates, coords, restitution = check_options(model, stick, blocked, unilateral, restitution,
                                                                   unilateral_tangent)
    points = stick + unilateral
    q = _on_ground(model, as_float("q", q, shape=(model.n,)), points, ground_tol)
    qdot_minus = as_float("qdot_minus", qdot_minus, shape=(model.n,))
    M, J = model.mass_matrix(q), {p: model.contact_jacobian(q, p) for p in points}
    qdot_minus, A_fixed, b_fixed = _fixed_rows(J, M, qdot_minus, stick, rates, coords, restitution)
    A_fixed, fixed_active = mask_blocked(A_fixed, stick, rates, blocked_active)
    tree = model.tree()
    sets = _active_sets(J, M, A_fixed, b_fixed, qdot_minus, unilateral, unilateral_tangent, keep,
                        _unit_masses(tree, q) if keep else None, fixed_active, _light_part(tree, q))
    v = jnp.concatenate([A_fixed @ qdot_minus] + [J[p] @ qdot_minus for p in points])
    return _raise(_consistent(sets, v, A_fixed.shape[0]), throw)


def loss_per_distance(model: AbstractPlanarModel, q: Config, solution: ImpactSolution) -> Scalar:
    """``ξ_L = (T⁻ − T⁺) / L`` with the model's step length ``L(q)`` (Font & Kövecses 2008, eq. 23: ``T_c⁻ / L`` when
    ``b⁺ = 0``), in J/m."""
    instance("model", model, AbstractPlanarModel)
    instance("solution", solution, ImpactSolution)
    if not isinstance(model, AbstractSteppingModel):
        raise ValueError(f"{type(model).__name__} defines no `step_length` (it is no AbstractSteppingModel).")
    return solution.loss / model.step_length(q)
