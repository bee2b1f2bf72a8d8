"""The entry point of the compliant contact phase, :func:`compliant_impact`, and its solution."""

import functools
from collections.abc import Mapping, Sequence
from typing import Literal

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp

from .._check import program, result_check
from .._contact import (
    AbstractFrictionLaw,
    AbstractNormalLaw,
    AbstractSmoothFrictionLaw,
    Contact,
)
from .._contact.naming import contacts_of, laws_by_name
from .._custom_types import Array, Bool, Config, Float, Int, Scalar, Velocity
from .._hybrid import HybridResults, HybridSolution, solve_hybrid
from .._models import AbstractPlanarModel
from .._validation import (
    as_float,
    check,
    count,
    finite_result,
    flag,
    instance,
    names,
    positive,
    tolerance,
)
from .dynamics import free_motion
from .peak import peak_force
from .regimes import TOUCH, initial_modes
from .state import MM, MS, PhaseState
from .system import CompliantContactSystem


class CompliantResults(HybridResults):  # pyright: ignore
    """Outcomes of :func:`compliant_impact` (those of the phase engine)."""


class History(eqx.Module):
    """Per accepted step records (padded with ``inf`` in ``t`` after the last step), shape
    ``(max_phases * max_steps, ...)``: `t` [s] from the start, and per contact the `normal_force` and
    `tangential_force` ``F_n, F_t`` [N], the contact point's `normal_velocity` and `tangential_velocity`
    ``v_n, v_t`` [m/s], and the loading rate `normal_force_rate` ``dF_n/dt`` [N/s]."""

    t: Float[Array, " s"]
    normal_force: Float[Array, "s k"]
    tangential_force: Float[Array, "s k"]
    normal_velocity: Float[Array, "s k"]
    tangential_velocity: Float[Array, "s k"]
    normal_force_rate: Float[Array, "s k"]


class CompliantSolution(eqx.Module):
    """Output of :func:`compliant_impact`; per-contact quantities have shape ``(k,)`` in ``contacts`` order.

    - `q_plus`, `qdot_plus`: state at the end event. `duration` [s].
    - `normal_impulse`, `tangential_impulse`: ``P_n, P_t``, the impulses of the normal and tangential forces
      [N s]; `normal_work`, `tangential_work`: ``W_n, W_t``, their works [J].
    - `peak_normal_force`: maximum normal force [N], interpolated between accepted steps (:func:`peak_force`).
    - `stick_time`: time [s] of the first slide → stick switch (``inf`` if none); `final_stick`: sticking
      at the end; `n_phases`: number of phases solved; `n_steps`: accepted steps, all phases; `result`: a
      :class:`CompliantResults` item.
    - `history`: a :class:`History` if requested, else ``None``.
    """

    q_plus: Config
    qdot_plus: Velocity
    duration: Scalar
    normal_impulse: Float[Array, " k"]
    tangential_impulse: Float[Array, " k"]
    normal_work: Float[Array, " k"]
    tangential_work: Float[Array, " k"]
    peak_normal_force: Float[Array, " k"]
    stick_time: Float[Array, " k"]
    final_stick: Bool[Array, " k"]
    n_phases: Int[Array, ""]
    n_steps: Int[Array, ""]
    result: CompliantResults
    history: History | None


def _arguments(*args, **kwargs) -> tuple[tuple, dict]:
    """The Python edge of :func:`compliant_impact`: the laws as mappings ``{point: law}`` (:func:`laws_by_name`: a
    law for every point and a mapping share one compiled program)."""
    points = args[3] if len(args) > 3 else kwargs.get("points")
    return args, {**kwargs, **laws_by_name(points, kwargs.get("normal"), kwargs.get("friction"))}


def _check_contacts(model: AbstractPlanarModel, points, normal, friction, end: str) -> tuple[Contact, ...]:
    """The model, `end`, and the contacts of `points` (one name is one point; each point once, of the model) with
    their laws."""
    instance("model", model, AbstractPlanarModel)
    if end not in ("compression", "separation"):
        raise ValueError(f"`end` must be 'compression' or 'separation', got {end!r}.")
    points = names("points", points)
    if not points:
        raise ValueError("`points` must name at least one contact point (the first is the impacting one).")
    if len(set(points)) != len(points):
        raise ValueError(f"a point may appear once in `points`, got {list(points)}.")
    missing = [p for p in points if p not in model.point_names]
    if missing:
        raise ValueError(f"`points` names points {missing} that the model does not have "
                         f"(it has {model.point_names}).")
    return contacts_of(points, normal, friction)


_MAX_RECORDS = 1 << 24  # max_phases × max_steps: the per-step records alone are ~0.8 GB per contact there


def _check_options(solver, adjoint, rtol, atol, max_steps, max_phases, history, throw, dtype):
    """The solver options: instances, tolerances that `dtype` resolves (defaults by dtype), limits, flags."""
    instance("solver", solver, diffrax.AbstractSolver, "diffrax.Tsit5()")
    instance("adjoint", adjoint, diffrax.AbstractAdjoint, "diffrax.RecursiveCheckpointAdjoint()")
    flag("history", history)
    flag("throw", throw)
    eps = float(jnp.finfo(dtype).eps)
    rtol = max(1e-8, 100 * eps) if rtol is None else tolerance("rtol", rtol, below=1.0)
    atol = 1e-2 * rtol if atol is None else tolerance("atol", atol)
    if isinstance(rtol, float) and rtol < 10 * eps:
        raise ValueError(f"`rtol` = {rtol:g} is below what {jnp.dtype(dtype).name} resolves (10 ε = {10 * eps:.1e}): "
                         "the step size would shrink until `max_steps`; raise it, or use float64.")
    max_steps, max_phases = count("max_steps", max_steps), count("max_phases", max_phases)
    if max_steps * max_phases > _MAX_RECORDS:
        raise ValueError(f"`max_steps` × `max_phases` = {max_steps * max_phases:,} exceeds {_MAX_RECORDS:,}: every "
                         "step's records are allocated up front (and kept for reverse mode). A phase needs a few "
                         "hundred steps at the default tolerances; if it hits `max_steps`, loosen `rtol`/`atol`.")
    return rtol, atol, max_steps, max_phases


def _initial_state(system: CompliantContactSystem, qdot0: Velocity):
    """The flat initial state, checked to be an impact (the first contact not already separating) with a finite
    kinetic energy (no overflow), and the initial regimes."""
    n, k = system.q0.shape[0], len(system.contacts)
    energy = system.model.tree().kinetic_energy(system.q0, qdot0)
    qdot0 = finite_result("the initial kinetic energy", (qdot0, energy), "`q`, `qdot_minus` or the model's "
                          "parameters")[0]
    y0 = jnp.concatenate([jnp.zeros(n), qdot0, jnp.zeros(5 * k)])
    free = free_motion(system.model, system.contacts, system.q0, y0)
    y0 = check(y0, (free.delta[0] >= -TOUCH) & (free.v_n[0] >= 0),
               f"the first contact {system.contacts[0].point!r} starts in contact (δ ≥ 0) but is already "
               "separating (v_n ≥ 0): there is no impact to integrate.")
    return y0, initial_modes(system.contacts, free, y0)


def _default_solver(contacts: tuple[Contact, ...]) -> diffrax.AbstractSolver:
    """``Kvaerno5`` with a smooth friction law (stiff: ``∂F_t/∂v_t = μF_n/v_ε``), else ``Tsit5``."""
    smooth = any(isinstance(c.friction_law, AbstractSmoothFrictionLaw) for c in contacts)
    return diffrax.Kvaerno5() if smooth else diffrax.Tsit5()


def _solution(system: CompliantContactSystem, sol: HybridSolution) -> CompliantSolution:
    """The solution in SI units, with the interpolated peak force of each contact."""
    n, k = system.q0.shape[0], len(system.contacts)
    rec = sol.records
    peak = jax.vmap(peak_force, in_axes=(None, 1, 1))(sol.ts, rec.normal_force, rec.normal_force_rate)
    end = PhaseState.unpack(sol.y, n, k)
    return CompliantSolution(
        q_plus=system.q0 + end.dq * MM, qdot_plus=end.qdot, duration=sol.t * MS, normal_impulse=end.P_n,
        tangential_impulse=end.P_t, normal_work=end.W_n, tangential_work=end.W_t,
        peak_normal_force=jnp.maximum(peak, 0.0), stick_time=sol.mode.stick_time * MS,
        final_stick=sol.mode.stick & sol.mode.active, n_phases=sol.n_phases, n_steps=sol.n_steps,
        result=CompliantResults.promote(sol.result),
        history=History(sol.ts * MS, rec.normal_force, rec.tangential_force, rec.normal_velocity,
                        rec.tangential_velocity, rec.normal_force_rate) if system.history else None,
    )


@functools.partial(program, normalise=_arguments)
def compliant_impact(
    model: AbstractPlanarModel,
    q: Config,
    qdot_minus: Velocity,
    points: str | Sequence[str],
    *,
    normal: AbstractNormalLaw | Mapping[str, AbstractNormalLaw],
    friction: AbstractFrictionLaw | Mapping[str, AbstractFrictionLaw | None] | None = None,
    end: Literal["compression", "separation"] = "compression",
    solver: diffrax.AbstractSolver | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    t_max: float = 0.5,
    max_steps: int = 4096,
    max_phases: int = 4,
    adjoint: diffrax.AbstractAdjoint = diffrax.RecursiveCheckpointAdjoint(),
    history: bool = False,
    throw: bool = True,
) -> CompliantSolution:
    r"""Integrate the compliant contact phase from the pre-impact state ``(q, qdot_minus)`` to its end event.

    The first point of ``points`` is the impacting one: the phase ends at its end of compression (``v_n = 0``,
    Font-Llagunes et al. 2012, §5) or, with ``end="separation"``, when its normal force returns to zero. The other
    contacts stay compliant throughout (they may open and close). The forces are those of
    :mod:`~difimpact._compliant.dynamics`; the phases (contact onset and separation, stick and slip switches, the
    end) are solved by the hybrid-phase engine (:func:`~difimpact._hybrid.solve_hybrid`), with the events of
    :mod:`~difimpact._compliant.events` and the regime switches of :mod:`~difimpact._compliant.regimes`.

    **Arguments:**

    - `model`: an :class:`~difimpact.AbstractPlanarModel`.
    - `q`, `qdot_minus`: initial state; a point with ``δ ≥ 0`` is in contact. The first must not start in contact
      while already separating (``δ ≥ 0`` and ``v_n ≥ 0``).
    - `points`: the contacts, by their points' names (one name is one point), each at most once.
    - `normal`: the normal law (:class:`~difimpact.AbstractNormalLaw`) of every point, or ``{point: law}`` with a
      law for each. `friction`: the friction law (:class:`~difimpact.AbstractFrictionLaw`) of every point, or
      ``{point: law}`` (a point it does not name is frictionless); ``None``: frictionless. Their parameters are traced.
    - `end`: ``"compression"`` or ``"separation"``.
    - `solver`: a diffrax solver; default ``Tsit5``, or ``Kvaerno5`` with a smooth friction law
      (:class:`~difimpact.AbstractSmoothFrictionLaw`, stiff: ``∂F_t/∂v_t = μF_n/v_ε``).
    - `rtol`, `atol`: step-size control tolerances of ``PIDController(pcoeff=0.3, icoeff=0.4)`` (state in mm,
      ms, m/s, N s, J), ``10 ε ≤ rtol < 1`` (ε of `q`'s dtype), ``atol > 0``; by default ``rtol = 1e-8``
      (float64; ``1.2e-5`` in float32) and ``atol = rtol / 100``.
    - `t_max` [s] ``> 0``: the phase must end before this time. `max_steps` ``≥ 1``: steps per phase;
      `max_phases`: number of phases (contact/stick/slip switches + 1; ``max_steps × max_phases ≤ 2²⁴``); each
      costs reverse-mode memory and time whether used or not; raise it for several contacts (two feet need 4–5).
    - `adjoint`: diffrax adjoint (``diffrax.ForwardMode()`` for ``jax.jacfwd``). `history`: also return the
      per-step :class:`History`.
    - `throw`: raise on failure (``max_steps``, no end, too many phases); otherwise see ``result``.

    **Returns:** a :class:`CompliantSolution`.

    **Example:**

    ```python
    import math
    import difimpact as di

    walker = di.CrutchWalker()
    q, qdot = walker.pre_impact_state(q3=math.radians(12), q5dot=-0.2)
    law = di.HuntCrossley(di.hertz_stiffness(0.05, 0.1e9, 0.5, 30e9, 0.2), 1e7)  # 5 cm rubber tip on concrete
    out = di.compliant_impact(walker, q, qdot, "Q", normal=law, friction=di.Coulomb(0.75))
    print(out.duration, out.peak_normal_force, out.normal_impulse)   # 0.00398 s, [6204.] N, [14.41] N s: compression
    ```
    """
    contacts = _check_contacts(model, points, normal, friction, end)
    solver = _default_solver(contacts) if solver is None else solver
    q = as_float("q", q, shape=(model.n,))
    rtol, atol, max_steps, max_phases = _check_options(solver, adjoint, rtol, atol, max_steps, max_phases, history,
                                                       throw, q.dtype)
    qdot_minus = as_float("qdot_minus", qdot_minus, shape=(model.n,))
    system = CompliantContactSystem(model, contacts, q, end, history)
    y0, modes0 = _initial_state(system, qdot_minus)
    sol = solve_hybrid(system, jnp.zeros(()), y0, modes0, t_max=positive("t_max", t_max) / MS, solver=solver,
                       stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol, pcoeff=0.3, icoeff=0.4),
                       max_steps=max_steps, max_phases=max_phases, adjoint=adjoint, record=True)
    out = _solution(system, sol)
    return result_check(out, out.result, out.result != CompliantResults.successful) if throw else out
