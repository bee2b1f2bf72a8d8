"""The stride (Poincaré) map of a passive walker: single support until heel strike, impact, leg swap."""

import functools
import math

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp

from .._check import program, result_check
from .._custom_types import Array, Bool, Config, Float, Scalar, Velocity
from .._hybrid import EVENT_SHIFT, AbstractHybridSystem, solve_hybrid
from .._impact.constrained import ImpactResults
from .._results import RESULTS
from .._models.walker import AbstractWalker
from .._check_members import check_members
from .._linalg import full_precision
from .._validation import count, instance, tolerance
from .heel_strike import heel_strike
from .stance_phase import controller, ended, stance


class GaitResults(RESULTS):  # pyright: ignore
    """Outcomes of a step (:func:`stride`) and of a gait search (:func:`~difimpact.periodic_gait`)."""

    fell_forward = "The walker fell: the stance leg reached the ground (|q3| = 90°) before heel strike."
    fell_backward = "The walker fell back: the stance leg stopped (q̇3 = 0) before heel strike."
    no_heel_strike = "No heel strike within `t_max`."
    invalid_strike = (
        "The heel-strike condition was met with the swing foot off the ground, behind, or not approaching it."
    )
    stance_failed = "The single-support integration failed (step limit `max_steps` reached, or a solver failure)."
    trailing_foot_stays = (
        "The trailing foot does not lift off at heel strike: keeping it on the ground needs a pulling impulse, "
        "so the step ends in double support, not in a compass-gait step."
    )
    impact_failed = "The heel-strike impact has no unique consistent outcome (see `ImpactResults`)."
    no_fixed_point = "Newton's method found no fixed point of the stride map from the initial guess."


class Stride(eqx.Module):
    """One step of a walker, from the section state ``x`` just after a heel strike to the next.

    - `x`: section state just after the next heel strike, legs swapped (``P(x)``).
    - `step_time`: duration ``T`` of the step [s]; `step_length`: the advance ``L`` along the ground from
      one heel strike to the next, the distance between the feet at heel strike plus what the stance foot
      rolled, ``R Δq3`` [m] (periodic gaits: ``ΔT = M g L sin γ``); `speed`: ``L / T`` [m/s].
    - `energy_loss`: kinetic energy lost at the impact ``T⁻ − T⁺`` [J].
    - `lifted_off`: whether the trailing foot lifts off at the impact; `trailing_velocity`: its post-impact
      normal velocity [m/s] (``≥ 0`` when it lifts off).
    - `q_minus`, `qdot_minus`: the full pre-impact state.
    - `result`: a :class:`GaitResults` item.
    """

    x: Float[Array, " k"]
    step_time: Scalar
    step_length: Scalar
    speed: Scalar
    energy_loss: Scalar
    lifted_off: Bool[Array, ""]
    trailing_velocity: Scalar
    q_minus: Config
    qdot_minus: Velocity
    result: GaitResults


class StanceTolerances(eqx.Module):
    """Options of the single-support integration: step tolerances ``0 < rtol < 1``, ``atol > 0`` (relative to the
    state ``(θ, θ̇ √(l/g))``; below ``10 ε`` of the state's dtype they are raised to it: float32 resolves no
    less), `max_steps`, the horizon `t_max` in units of ``√(l/g)`` and the diffrax `adjoint`
    (``ForwardMode`` serves ``jax.jacfwd``, Newton's method and the implicit-function gradients of
    :func:`~difimpact.periodic_gait`; ``RecursiveCheckpointAdjoint`` serves reverse mode through one stride)."""

    rtol: float = 1e-10
    atol: float = 1e-10
    max_steps: int = eqx.field(static=True, default=4096)
    t_max: float = 50.0
    adjoint: diffrax.AbstractAdjoint = diffrax.ForwardMode()

    def __check_init__(self):
        """``0 < rtol < 1``, ``atol > 0``, ``t_max > 0`` (finite; checked unless traced), ``max_steps ≥ 1``."""
        for name, below in (("rtol", 1.0), ("atol", None), ("t_max", None)):
            value = getattr(self, name)
            good_number = (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                           and value > 0 and (below is None or value < below))
            if not good_number and not isinstance(value, jax.core.Tracer):  # (no JAX array for a good number: the
                tolerance(f"StanceTolerances.{name}", value, below=below)  # default is built at import)
        count("StanceTolerances.max_steps", self.max_steps)
        instance("StanceTolerances.adjoint", self.adjoint, diffrax.AbstractAdjoint, "diffrax.ForwardMode()")


_STRIKE, _STOPPED, _DOWN = 0, 1, 2
_CLEARANCE = 1e-6  # strike gap [rad] that arms the heel strike


class StanceSystem(AbstractHybridSystem):
    """Single support of a walker as a hybrid system in the time ``s = t / √(l/g)``: state
    ``y = (θ, dθ/ds)``, three event components (positive during the step) and two modes, the heel strike
    disarmed (0) or armed (1). The first component is, disarmed, ``δ − gap`` and, armed, the heel-strike gap
    ``gap`` (:meth:`AbstractWalker.strike_gap`, ``δ = 10⁻⁶``): the step starts armed when its gap exceeds ``δ``,
    else (a compass walker, whose gap starts at zero) the gap must first rise above ``δ``, and the heel strike
    is its next zero. The other components are the stance leg's rate ``q̇3`` (zero: it stops and falls back)
    and ``π/2 − |q3|`` (zero: the stance leg lies on the ground). The state is continuous and the vector field the
    same in both modes, so arming changes neither the stride map nor its derivatives."""

    walker: AbstractWalker

    def _split(self, y):
        j = y.shape[0] // 2
        return y[:j], y[j:]

    def vector_field(self, t, y, mode):
        # A non-finite state (Newton far from a gait) gives a failed step, never an error inside the solve.
        theta, rate = self._split(jnp.where(jnp.isfinite(y), y, 0.0))
        tau = self.walker.time_scale
        accel = self.walker.stance_accelerations(theta, rate / tau)
        return jnp.concatenate([rate, tau**2 * accel])

    def event_components(self, t, y, mode):
        theta, rate = self._split(y)
        gap = self.walker.strike_gap(theta)
        strike = jnp.where(mode == 1, gap, _CLEARANCE - gap)
        # The engine shifts every component by EVENT_SHIFT at least: less it, the heel strike is found at a zero gap.
        return jnp.stack([strike, rate[0], 0.5 * jnp.pi - jnp.abs(theta[0])]) - EVENT_SHIFT

    def transition(self, t, y, mode, event):
        return y, jnp.ones_like(mode), (mode == 1) | (event != _STRIKE)

    def initial_mode(self, y):
        """Armed (1) when the step starts with its gap above ``δ``."""
        theta, _ = self._split(y)
        return jnp.where(self.walker.strike_gap(theta) > _CLEARANCE, 1, 0).astype(jnp.int32)


def _traced_checked(name, value, below):
    """A traced option (made inside ``jit``/``vmap``, so not checked on construction), checked at run time:
    finite, positive and, with `below`, below it. Python numbers were checked when the options were made."""
    if not isinstance(value, jax.Array):
        return value
    bad = ~jnp.isfinite(value) | (value <= 0) | (False if below is None else value >= below)
    return check_members(value, bad, f"`StanceTolerances.{name}` must be finite and positive"
                                     f"{'' if below is None else f' and below {below}'} (a traced option)")


def _integrate(system: StanceSystem, y0, options: StanceTolerances):
    """Single support on the hybrid-phase engine until heel strike or a fall: ``(s, y, event index, failed)``
    (the index is −1 without an event; `failed`: step limit or solver failure). With the default
    ``ForwardMode`` adjoint the event time is differentiated by :func:`.stance_phase.stance` (no host callback in
    the program), with another adjoint by diffrax."""
    floor = 10 * float(jnp.finfo(y0.dtype).eps)  # what the dtype resolves: 2e-15 in float64, 1.2e-6 in float32
    rtol, atol, t_max = (_traced_checked(n, getattr(options, n), b) for n, b in (("rtol", 1.0), ("atol", None),
                                                                                 ("t_max", None)))
    rtol, atol = jnp.maximum(rtol, floor), jnp.maximum(atol, floor)
    if isinstance(options.adjoint, diffrax.ForwardMode):  # its loops cannot be transposed: say what to use
        t, y, _, event, failed = stance(system, y0, rtol, atol, t_max, max_steps=options.max_steps)
        t, y = eqxi.nondifferentiable_backward((t, y), msg=_NO_REVERSE)
        return t, y, event, failed
    sol = solve_hybrid(
        system, jnp.zeros((), y0.dtype), y0, system.initial_mode(y0), t_max=t_max, solver=diffrax.Tsit5(),
        stepsize_controller=controller(rtol, atol), max_steps=options.max_steps, max_phases=2,
        adjoint=options.adjoint,
    )
    return (sol.t, sol.y, *ended(sol))


_NO_REVERSE = (
    "reverse-mode differentiation (jax.grad, jax.vjp) through a stride or a gait needs another adjoint than the "
    "default `StanceTolerances(adjoint=diffrax.ForwardMode())`, which serves jax.jacfwd: use "
    "`StanceTolerances(adjoint=diffrax.DirectAdjoint())` for `periodic_gait`, or "
    "`diffrax.RecursiveCheckpointAdjoint()` for one `stride`."
)
_MASS_RANGE = (1e-60, 1e60)  # total mass [kg] within which a stride's derivatives stay in the float64 range


def _outcome(event, failed, valid, lifted_off, impact_result):
    return GaitResults.where(
        (event == _STRIKE) & ~failed & ~valid, GaitResults.invalid_strike, GaitResults.where(
        failed, GaitResults.stance_failed,
        GaitResults.where(
            event == _STOPPED, GaitResults.fell_backward,
            GaitResults.where(
                event == _DOWN, GaitResults.fell_forward,
                GaitResults.where(
                    event != _STRIKE, GaitResults.no_heel_strike,
                    GaitResults.where(
                        impact_result != ImpactResults.successful, GaitResults.impact_failed,
                        GaitResults.where(lifted_off, GaitResults.successful, GaitResults.trailing_foot_stays)))))))


def _checked_walker(walker: AbstractWalker, x):
    """`x`, after checking that the walker's total mass lies in :data:`_MASS_RANGE` (a gait depends on mass ratios
    only, but the derivatives of a stride multiply masses and overflow far outside it)."""
    mass, (lo, hi) = walker.total_mass, _MASS_RANGE
    return check_members(x, ~((mass >= lo) & (mass <= hi)),
                         f"`walker`'s total mass must lie within {lo:g}…{hi:g} kg (a stride's derivatives overflow "
                         "outside it); a gait depends only on the mass ratios: scale the masses (energies scale with "
                         "them).")


def _section(walker: AbstractWalker, x) -> Float[Array, " k"]:
    """`x` as a float array, after checking `walker`'s type and `x`'s shape."""
    if not isinstance(walker, AbstractWalker):
        raise TypeError(f"`walker` must be an AbstractWalker (CompassGait, RimlessWheel), got {type(walker).__name__}.")
    x = jnp.asarray(x, dtype=jnp.result_type(float))
    if x.shape != (walker.section_size,):
        raise ValueError(f"`x` must have shape ({walker.section_size},) = {walker.section_names}, got {x.shape}.")
    return x


def _arguments(walker, x, *, options: StanceTolerances = StanceTolerances(), throw: bool = True
               ) -> tuple[tuple, dict]:
    """The Python edge of :func:`stride`: `x` as an array, the walker's mass range checked in Python where it is
    concrete (``ValueError``), before the program."""
    x = _checked_walker(walker, _section(walker, x))
    return (walker, x), dict(options=options, throw=throw)


@functools.partial(program, normalise=_arguments)
@full_precision
def stride(walker: AbstractWalker, x: Float[Array, " k"], *, options: StanceTolerances = StanceTolerances(),
           throw: bool = True) -> Stride:
    r"""The stride (Poincaré) map ``x⁺ = P(x)`` of a passive walker and the step it takes.

    From the section state ``x`` just after a heel strike: single support with the stance foot rolling
    (:meth:`AbstractWalker.stance_accelerations`) until the swing foot strikes the ground ahead
    (:meth:`AbstractWalker.strike_gap` ``= 0``, the event time differentiated by the implicit-function theorem);
    then the heel strike, :func:`~difimpact.heel_strike` by the walker's impact law: for every walker the impulsive
    impact of :func:`~difimpact.impact` with the striking foot sticking and the trailing foot unilateral (it lifts
    off or stays, Font & Kövecses 2008, eq. 4), for :class:`~difimpact.SimplestWalker` its closed-form limit; then
    the legs are swapped (:meth:`AbstractWalker.swap`).
    A passive step on slope ``γ`` loses at the impact what gravity gave, ``ΔT = M g L sin γ`` on a periodic
    gait (McGeer 1990).

    **Arguments:**

    - `walker`: an :class:`~difimpact.AbstractWalker` (its slope and parameters are differentiable leaves).
    - `x`: section state ``(k,)`` (:attr:`AbstractWalker.section_names`).
    - `options`: a :class:`StanceTolerances`.
    - `throw`: raise on a failed step; with ``throw=False`` read `result` instead (a batch is then never stopped
      by one member).

    **Returns:** a :class:`Stride`. Works under ``jit``, ``vmap``, ``jax.jacfwd`` (default adjoint) and
    ``jax.grad`` (with ``options.adjoint = diffrax.RecursiveCheckpointAdjoint()``).

    **Example:**

    ```python
    import jax.numpy as jnp
    import difimpact as di

    walker = di.SimplestWalker(0.009)                            # Garcia et al. 1998: slope 0.009 rad, g = l = 1
    step = di.stride(walker, jnp.array([-0.2, 0.2, 0.016]))      # x = (q3, q̇3, q̇4) after heel strike
    print(step.x, step.step_time, step.step_length)              # [-0.2031 0.2022 0.0165] 3.843 0.4034
    ```
    """
    x = _checked_walker(walker, _section(walker, x))
    tau = walker.time_scale
    theta0, theta_dot0 = walker.from_section(x)
    s1, y1, event, failed = _integrate(StanceSystem(walker), jnp.concatenate([theta0, tau * theta_dot0]), options)
    theta, theta_dot = jnp.split(y1, 2)
    theta_dot = theta_dot / tau
    q, qdot = jax.jvp(walker.stance_configuration, (theta,), (theta_dot,))
    # A member that did not strike is evaluated at a valid heel strike (impact would raise on it).
    height = walker.point(q, "swing_foot")[1]
    approach = walker.contact_jacobian(q, "swing_foot")[0] @ qdot
    # On the ground to the rounding of the event location: 1e-7 l in float64, 256 ε l in float32.
    valid = (jnp.abs(height) <= max(1e-7, 256 * float(jnp.finfo(q.dtype).eps)) * walker.l) & (approach < 0)
    struck = (event == _STRIKE) & ~failed & valid
    q_safe, qdot_safe = walker.strike_posture()
    q_i, qdot_i = jnp.where(struck, q, q_safe), jnp.where(struck, qdot, qdot_safe)
    # A walker whose swing foot never approaches (R = l: the foot's centre is the hip) has no valid heel strike;
    # its substitute is made to approach by moving the base down (q[1] is its height), so the impact evaluates.
    approach_i = walker.contact_jacobian(q_i, "swing_foot")[0] @ qdot_i
    qdot_i = qdot_i.at[1].add(jnp.where(approach_i < 0, 0.0, -1.0 - approach_i))
    strike = heel_strike(walker, q_i, qdot_i)
    new_theta, new_rate = jax.jvp(walker.swap, (theta,), (strike.theta_dot,))
    # The walker advances by the stance foot's rolling plus the distance between the feet at heel strike.
    rolled = walker.stance_configuration(theta)[0] - walker.stance_configuration(theta0)[0]
    length = walker.step_length(q_i) + jnp.where(struck, rolled, 0.0)
    step_time = s1 * tau
    result = _outcome(event, failed, valid, strike.lifted_off, strike.result)
    out = Stride(x=walker.to_section(new_theta, new_rate), step_time=step_time, step_length=length,
                 speed=length / step_time, energy_loss=strike.energy_loss, lifted_off=strike.lifted_off,
                 trailing_velocity=strike.trailing_velocity, q_minus=q, qdot_minus=qdot, result=result)
    return result_check(out, result, result != GaitResults.successful) if throw else out
