"""Pre-emptive push-off: an impulse along the trailing leg immediately before heel strike, then the collision.

Kuo (2002) powers the simplest walking model by an impulsive push-off of the trailing leg just before the
leading leg strikes the ground: the push-off redirects the centre of mass before the collision, which then
costs less. The push-off is an applied impulse ``P n̂`` at the trailing foot, directed along the leg toward a
named point (the hip), with that foot free to leave the ground; the collision is :func:`~difimpact.impact`.
"""

import functools
from collections.abc import Mapping, Sequence
from typing import Literal

import equinox as eqx
import jax.numpy as jnp

from .._check import failed_check, program
from .._custom_types import Array, Bool, Config, Float, MassMatrix, Scalar, Velocity
from .._linalg import full_precision, solve_lu
from .._models.base import AbstractPlanarModel
from .._validation import _is_number, as_float, check, flag, instance, names, positive
from .constrained import _keep
from .ground import _unit_masses, impact
from .ground_options import traced_values
from .kkt import NONFINITE, ImpactResults, ImpactSolution, _massless_limit, diagnose, turning_projector


class PushoffResults(ImpactResults):  # pyright: ignore
    """Outcomes of :func:`pushoff_impact`: those of :func:`~difimpact.impact` (its collision) and the push-off's."""

    pushoff_unresisted = (
        "The push-off impulse acts along a direction that no mass resists (it is not in the range of M): a "
        "massless body would move infinitely fast. Push toward a point whose path carries mass (e.g. the hip), "
        "or give the leg mass."
    )
    pushoff_undetermined = (
        "The push-off leaves a massless coordinate undetermined: a direction that M does not see moves no body's "
        "centre, so the limit of vanishing masses does not fix it. Give that body mass or move its centre off "
        "its joint."
    )


class PushoffSolution(eqx.Module):
    """Result of :func:`pushoff_impact`.

    - `qdot_pushoff`: velocities after the push-off, before the collision, ``q̇' = q̇⁻ + Δq̇`` with
      ``M Δq̇ = J_sᵀ n̂ P``.
    - `qdot_plus`: velocities after the collision, ``q̇⁺`` (``collision.qdot_plus``).
    - `direction`: the push-off's unit direction ``n̂`` (from the `stance` point toward the `toward` point).
    - `generalized_impulse`: ``J_sᵀ n̂ P``, shape ``(n,)``.
    - `pushoff_work`: the work of the push-off, ``T' − T⁻ = ½ (J_sᵀ n̂ P)ᵀ (q̇⁻ + q̇')``.
    - `loss`: the kinetic energy lost in the collision, ``T' − T⁺`` (``collision.loss``).
    - `collision`: the :class:`~difimpact.ImpactSolution` of the heel-strike collision from ``q̇'``.
    - `result`: a :class:`PushoffResults` item.
    """

    qdot_pushoff: Velocity
    qdot_plus: Velocity
    direction: Float[Array, " 2"]
    generalized_impulse: Velocity
    pushoff_work: Scalar
    loss: Scalar
    collision: ImpactSolution
    result: PushoffResults

    @property
    def net_work(self) -> Scalar:
        """``T⁺ − T⁻ = pushoff_work − loss``: zero on a steady gait powered by the push-off alone."""
        return self.pushoff_work - self.loss


def _check_points(model: AbstractPlanarModel, stance, toward, stick, unilateral) -> tuple[str, str]:
    """`stance` and `toward`, checked: two different points of the model, the pushing foot not a contact of the
    collision (it has left the ground)."""
    instance("model", model, AbstractPlanarModel)
    known = model.point_names
    for arg, p in (("stance", stance), ("toward", toward)):
        if not isinstance(p, str):
            raise TypeError(f"`{arg}` must be a point name (a string), got {p!r}.")
        if p not in known:
            raise ValueError(f"`{arg}`: unknown point {p!r}; this model has {list(known)}.")
    if stance == toward:
        raise ValueError(f"`toward` must differ from `stance` (both {stance!r}): the push-off has no direction.")
    contacts = names("stick", stick) + names("unilateral", unilateral)
    if stance in contacts:
        raise ValueError(f"`stance` point {stance!r} pushes off and leaves the ground: it cannot also be a "
                         f"contact of the collision ({list(contacts)}).")
    return stance, toward


@full_precision
def _pushoff_velocity(M: MassMatrix, g: Velocity, unit_masses: MassMatrix
                      ) -> tuple[Velocity, Bool[Array, ""], Bool[Array, ""]]:
    r"""``Δq̇`` with ``M Δq̇ = g`` and no constraint, ``M`` possibly singular (massless bodies); whether ``g``
    leaves ``range(M)`` (no finite solution), and whether the massless limit is undetermined.

    The unconstrained KKT system of :func:`~difimpact._impact.kkt.solve_kkt` is ``(M + P_0) Δq̇ = g`` with
    ``P_0`` the projector onto ``null(M)``; for ``g ∈ range(M)`` it gives the solution without a ``null(M)``
    component. The component along ``null(M)`` is that of the limit of vanishing masses (``M + ε D``,
    ``ε → 0⁺``): $\Delta \dot{q} = (I - E)(M + P_0)^{-1} g$ with ``E`` of
    :func:`~difimpact._impact.kkt._massless_limit`, as :func:`~difimpact.impact` does with ``massless="keep"``. It
    carries no energy (``gᵀ z = 0`` for ``z ∈ null(M)``) and does not change a collision whose rows see every massless
    coordinate.
    """
    n = M.shape[0]
    _, P0 = diagnose(M, jnp.zeros((0, n), M.dtype))
    P0 = turning_projector(M, P0)  # exact derivatives in q at massless bodies (the limit turns with null(M))
    x, _ = solve_lu(M + P0, g[:, None])
    _, dq, determined = _massless_limit(P0, unit_masses, jnp.eye(n, dtype=M.dtype), x)
    rtol = jnp.sqrt(jnp.finfo(M.dtype).eps)
    unresisted = jnp.linalg.norm(P0 @ g) > rtol * jnp.linalg.norm(g)
    return dq[:, 0], unresisted, ~determined


def _traced_numbers(*args, **kwargs) -> tuple[tuple, dict]:
    """The arguments of :func:`pushoff_impact` with the collision's values traced (:func:`traced_values`), an
    `impulse` that is a Python number as a checked float array, and `q`, `qdot_minus` given as lists or tuples of
    numbers as float arrays: ``eqx.filter_jit`` makes Python numbers compile-time constants, so each new value
    would compile a new program; arrays are traced, and one program serves every value."""
    args, kwargs = traced_values(*args, **kwargs)
    args = list(args)
    for i, name in ((1, "q"), (2, "qdot_minus"), (3, "impulse")):
        value = args[i] if len(args) > i else kwargs.get(name)
        if name == "impulse" and _is_number(value):
            value = positive(name, value, allow_zero=True, shape=())
        elif isinstance(value, (list, tuple)):
            value = as_float(name, value)
        else:
            continue
        if len(args) > i:
            args[i] = value
        else:
            kwargs[name] = value
    return tuple(args), kwargs


@functools.partial(program, normalise=_traced_numbers)
@full_precision
def pushoff_impact(
    model: AbstractPlanarModel,
    q: Config,
    qdot_minus: Velocity,
    impulse: float | Scalar,
    *,
    stance: str = "stance_foot",
    toward: str = "H",
    stick: Sequence[str] = ("swing_foot",),
    blocked: Sequence[str | int] | Mapping[str | int, float] = (),
    blocked_active: Mapping[str | int, bool | Bool[Array, ""]] | None = None,
    unilateral: Sequence[str] = (),
    restitution: Mapping[str, float] | None = None,
    unilateral_tangent: Literal["free", "stick", "always"] = "free",
    massless: Literal["error", "keep"] = "error",
    ground_tol: float = 1e-6,
    throw: bool = True,
) -> PushoffSolution:
    r"""Heel strike preceded by an impulsive push-off along the trailing leg (Kuo 2002, J. Biomech. Eng. 124,
    113–120: "pre-emptive push-off").

    First the push-off: an impulse of magnitude ``P`` = `impulse` at the point `stance` (the trailing foot),
    directed from it toward the point `toward` (the hip), ``n̂ = (r_toward − r_stance) / |r_toward − r_stance|``,
    with the trailing foot free (it leaves the ground):

    $$M (\dot q' - \dot q^-) = J_s^T \hat n\, P,$$

    solved in KKT form with massless bodies in the limit of vanishing masses (never through ``M⁻¹``). Then the
    collision of :func:`~difimpact.impact` from ``q̇'`` with `stick`, `blocked`, `unilateral`, `restitution`
    (the leading foot strikes and sticks by default). The push-off's work is ``T' − T⁻ = ½ (J_sᵀ n̂ P)ᵀ (q̇⁻ + q̇')``
    (an impulse times the mean velocity of its point).

    For Kuo's point-mass walker (hip mass ``M``, massless legs, inter-leg angle ``2α``, ``v⁻`` normal to the
    trailing leg) the collision leaves ``v⁺ = v⁻ cos 2α + (P/M) sin 2α`` normal to the leading leg; a steady
    gait (``v⁺ = v⁻``) needs ``P = M v⁻ tan α``, whose work ``P²/2M`` equals the collision's loss.

    **Arguments:**

    - `model`, `q`, `qdot_minus`: as in :func:`~difimpact.impact` (velocities before the push-off).
    - `impulse`: ``P ≥ 0`` [N s], a scalar: a push-off pushes (a pull would be ``P < 0``). Differentiable; a
      Python number is traced like an array (as are `q` and `qdot_minus` given as lists), so one compiled program
      serves every value.
    - `stance`, `toward`: the pushing point and the point it pushes toward, different points of `model`; for a
      massless leg `toward` must be the point where the leg meets a mass (the impulse must be resisted).
      `stance` may not be a contact of the collision.
    - `stick`, `blocked`, `blocked_active`, `unilateral`, `restitution`, `unilateral_tangent`, `massless`,
      `ground_tol`: the collision's, as in :func:`~difimpact.impact` (a massless leg needs ``massless="keep"``).
    - `throw`: raise on a failed result (else return it in ``result``).

    **Returns:** a :class:`PushoffSolution`; with ``impulse = 0`` its `collision` is :func:`~difimpact.impact`'s.
    """
    stance, toward = _check_points(model, stance, toward, stick, unilateral)
    _keep(massless)
    q = as_float("q", q, shape=(model.n,))
    qdot_minus = as_float("qdot_minus", qdot_minus, shape=(model.n,))
    impulse = positive("impulse", impulse, allow_zero=True, shape=())
    arm = model.point(q, toward) - model.point(q, stance)
    length = jnp.linalg.norm(arm)
    direction = check(arm / jnp.where(length > 0, length, 1.0), length == 0,
                      f"points `stance` {stance!r} and `toward` {toward!r} coincide in posture `q`: the push-off "
                      "has no direction.")
    g_unit = model.point_jacobian(q, stance).T @ direction
    dq_unit, unresisted, undetermined = _pushoff_velocity(model.mass_matrix(q), g_unit, _unit_masses(model.tree(), q))
    qdot_pushoff = qdot_minus + impulse * dq_unit
    collision = impact(model, q, qdot_pushoff, stick=stick, blocked=blocked, blocked_active=blocked_active,
                       unilateral=unilateral, restitution=restitution, unilateral_tangent=unilateral_tangent,
                       massless=massless, ground_tol=ground_tol, throw=False)
    result = PushoffResults.where(
        unresisted, PushoffResults.pushoff_unresisted,
        PushoffResults.where(undetermined, PushoffResults.pushoff_undetermined,
                             PushoffResults.promote(collision.result)))
    g = impulse * g_unit
    sol = PushoffSolution(qdot_pushoff=qdot_pushoff, qdot_plus=collision.qdot_plus, direction=direction,
                          generalized_impulse=g, pushoff_work=0.5 * g @ (qdot_minus + qdot_pushoff),
                          loss=collision.loss, collision=collision, result=result)
    return failed_check(sol, sol.result, PushoffResults, NONFINITE) if flag("throw", throw) else sol
