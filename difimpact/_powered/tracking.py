"""Tracking an optimal gait: the closed-loop stride map of a powered biped whose actuators follow an
:class:`~difimpact.OptimalGait` by PD feedback (:func:`tracking_stride`: the controller, its two clocks and the
step's events), the map's fixed point and its Floquet multipliers (:func:`tracking_floquet`)."""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import optimistix as optx

from .._custom_types import Array, Bool, Complex, Float, Int, Scalar
from .._gait.fixed_point import newton
from .._gait.stability import multipliers as floquet
from .._gait.stride import GaitResults
from .._hybrid import HybridResults, solve_hybrid
from .._impact.constrained import ImpactResults
from .._validation import as_float, count, instance, positive, tolerance
from .optimal import OptimalGait
from .tracking_system import TrackingSystem

CLOCKS = ("time", "phase")


class TrackingOptions(eqx.Module):
    """Options of a closed-loop step: step tolerances `rtol`, `atol` (on ``θ`` [rad] and ``θ̇`` [rad/s]),
    `max_steps` per phase, the horizon `t_max` in units of the optimum's step time, and the diffrax `adjoint`
    (``ForwardMode`` serves ``jax.jacfwd`` and Newton's method; ``RecursiveCheckpointAdjoint`` reverse mode
    through one stride)."""

    rtol: float = 1e-10
    atol: float = 1e-10
    max_steps: int = eqx.field(static=True, default=4096)
    t_max: float = 2.0
    adjoint: diffrax.AbstractAdjoint = diffrax.ForwardMode()


class TrackingStride(eqx.Module):
    """One closed-loop step (:func:`tracking_stride`) from a post-impact state to the next.

    - `x`: the post-impact state ``(θ, θ̇)`` after the next heel strike, relabelled (``P(x)``).
    - `step_time` [s]; `step_length` [m]: the swing foot's advance at heel strike.
    - `impact_loss` [J]: the kinetic energy lost at heel strike.
    - `lift_off_speed` [m/s]: the trailing foot's normal velocity after heel strike ($v_{Sn}^+$), reported as
      :func:`~difimpact.optimal_gait` does: the step is single support whatever its sign.
    - `theta_minus`, `theta_dot_minus`: the pre-impact state.
    - `result`: a :class:`~difimpact.GaitResults` item (``successful``, ``no_heel_strike``, ``stance_failed``,
      ``impact_failed``).
    """

    x: Float[Array, " s"]
    step_time: Scalar
    step_length: Scalar
    impact_loss: Scalar
    lift_off_speed: Scalar
    theta_minus: Float[Array, " j"]
    theta_dot_minus: Float[Array, " j"]
    result: GaitResults


class TrackingGait(eqx.Module):
    """The periodic gait of a biped tracking an optimal gait (:func:`tracking_floquet`) and its stability.

    - `x`: the closed loop's fixed point ``x* = P(x*)``, the post-impact state ``(θ, θ̇)``; `stride`: its
      :class:`TrackingStride`.
    - `jacobian`: ``∂P/∂x`` at ``x*`` ``(2j, 2j)``.
    - `multipliers`: its eigenvalues, the Floquet multipliers, by decreasing modulus (one or two are zero:
      see :func:`tracking_floquet`); `spectral_radius`: the largest modulus; `stable`: below 1
      at a successful fixed point (local orbital stability).
    - `kp`, `kd`: the gains ``(k,)``.
    - `result`: a :class:`~difimpact.GaitResults` item; `num_steps`: Newton iterations.
    """

    x: Float[Array, " s"]
    stride: TrackingStride
    jacobian: Float[Array, "s s"]
    multipliers: Complex[Array, " s"]
    spectral_radius: Scalar
    stable: Bool[Array, ""]
    kp: Float[Array, " k"]
    kd: Float[Array, " k"]
    result: GaitResults
    num_steps: Int[Array, ""]


def _gain(name: str, value, k: int, dtype):
    arr = positive(name, value, allow_zero=True)
    if arr.shape not in ((), (k,)):
        raise ValueError(f"`{name}` must be a scalar or one gain per actuator ({k},), got shape {arr.shape}.")
    return jnp.broadcast_to(arr, (k,)).astype(dtype)


def _checked(gait, x, kp, kd, clock, options):
    instance("gait", gait, OptimalGait)
    instance("options", options, TrackingOptions)
    if clock not in CLOCKS:
        raise ValueError(f"`clock` must be one of {CLOCKS}, got {clock!r}.")
    dtype = gait.theta.dtype
    biped = gait.problem.biped
    if x is not None:
        x = as_float("x", x, shape=(2 * biped.joints,)).astype(dtype)
    return x, _gain("kp", kp, biped.controls, dtype), _gain("kd", kd, biped.controls, dtype)


def _stride(system: TrackingSystem, x, options: TrackingOptions) -> TrackingStride:
    """One closed-loop step on the hybrid engine, the heel strike and the relabelling."""
    biped, T = system.biped, system.gait.step_time
    zero = jnp.zeros((), x.dtype)
    timed = system.clock == "time"
    # Phases: one to arm the heel strike, one to strike and, with the phase clock, one per knot.
    sol = solve_hybrid(
        system, zero, x, system.initial_mode(x), t_max=options.t_max * T, solver=diffrax.Tsit5(),
        stepsize_controller=diffrax.PIDController(rtol=options.rtol, atol=options.atol, pcoeff=0.3, icoeff=0.4,
                                                  jump_ts=system.knots if timed else None),
        max_steps=options.max_steps, max_phases=2 if timed else system.knots.shape[0] + 2, adjoint=options.adjoint,
    )
    struck = sol.result == HybridResults.successful
    failed = ~struck & (sol.result != HybridResults.no_end)
    # A step that did not strike is evaluated at the optimum's heel strike: finite, meaningless values.
    end = jnp.concatenate([system.gait.theta[-1], system.gait.theta_dot[-1]])
    theta, theta_dot = system._split(jnp.where(struck, sol.y, end))
    rates_plus, impact = biped.heel_strike(theta, theta_dot)
    result = GaitResults.where(
        failed, GaitResults.stance_failed,
        GaitResults.where(~struck, GaitResults.no_heel_strike,
                          GaitResults.where(impact.result != ImpactResults.successful, GaitResults.impact_failed,
                                            GaitResults.successful)))
    return TrackingStride(x=jnp.concatenate([biped.relabel(theta), rates_plus]), step_time=sol.t,
                          step_length=biped.swing_foot_position(theta)[0], impact_loss=impact.loss,
                          lift_off_speed=biped.lift_off_speed(impact), theta_minus=theta, theta_dot_minus=theta_dot,
                          result=result)


@eqx.filter_jit
def _tracking_stride(gait, x, kp, kd, clock, options):
    return _stride(TrackingSystem(gait, kp, kd, clock), x, options)


def tracking_stride(gait: OptimalGait, x: Float[Array, " s"], *, kp=0.0, kd=0.0, clock: str = "time",
                    options: TrackingOptions = TrackingOptions(),
                    throw: bool = True) -> tuple[Float[Array, " s"], TrackingStride]:
    r"""The closed-loop stride map $x^+ = P(x)$ of ``gait.problem.biped`` tracking the optimal `gait` by PD
    feedback: single support from the post-impact state ``x = (θ, θ̇)`` until heel strike, then the impact and
    the legs' relabelling.

    **The controller.** The torques are the optimum's plus PD feedback on the actuators' joint angles
    $\omega  = B_\theta^T \theta$ and rates (``B_θ`` the joint rows of :meth:`~difimpact.PoweredBiped.actuation`),
    against the optimum at a point ``τ`` of its step,

    $$u = u^*(τ) + K_p\,B_θ^T\big(θ_d - θ\big) + K_d\,B_θ^T\big(\dot θ_d - \dot θ\big),$$

    with diagonal gains ``K_p``, ``K_d`` and the reference $(\theta^*, \dot \theta^*, u^*)$ the collocation solution's
    own interpolation (:meth:`~difimpact.OptimalGait.state`: Hermite–Simpson's cubic states and quadratic
    torques per segment), held at its end value outside $[0, T^*]$. The `clock` says what ``τ`` is:

    - ``"time"``: the time since the last heel strike; $\theta_d = \theta^*(\tau)$,
      $\dot \theta_d = \dot \theta^*(\tau)$: PD on the optimal joint trajectory, a time-varying controller. Held after
      $T^*$, the reference is continuous, so the stride map stays continuously differentiable where the step time
      crosses $T^*$.
    - ``"phase"``: virtual constraints as in hybrid zero dynamics (Westervelt, Grizzle & Koditschek, *IEEE TAC*
      48, 2003), the optimum being the constraint: ``τ`` is where the optimum's phase $c^T \theta^*$ equals the
      walker's, $s = c^T \theta$, the stance link's absolute angle (the unactuated coordinate of the walkers here; it
      must be monotonic along the optimum); $\theta_d = \theta^*(\tau)$,
      $\dot \theta_d = \dot \theta^*(\tau)\,\dot s / \dot s^*(\tau)$. A time-invariant controller; PD on the outputs
      $B_\theta^T(\theta  - \theta_d(\theta))$, not the papers' feedback linearisation, so the outputs vanish only as
      the gains grow, and the gait tends to the hybrid zero dynamics' as they do.

    **The step** ends at heel strike: the swing foot's height ``h`` reaching zero from above once the event is
    armed, which it is when the foot is both above the ground by ``δ = 10⁻⁶`` m and ahead of the stance foot by
    half the optimum's step length $L^*$ (the disarmed event component is $max(\delta  - h, L^*/2 - x_{swing})$,
    the armed one ``h``, in the phases of :func:`~difimpact.solve_hybrid`, as :func:`~difimpact.stride` arms its
    heel strike). The half step keeps out the passage of a straight-legged swing foot through the ground as the
    legs cross (``h = 0`` at ``x_{swing} = 0``), which collocation does not forbid. The heel strike is the
    impulsive impact of :meth:`~difimpact.PoweredBiped.heel_strike`; ``τ`` then starts again. The reference's
    segment ends are kinks of the closed loop (its torques are only continuous there): the integrator steps onto
    them (``jump_ts``, time clock) or stops at them as further events (phase clock), so that no step straddles
    one; the forward-mode tangents, whose error no step-size control sees, would otherwise carry an error of
    ~10⁻³ there.

    **Arguments:**

    - `gait`: an :class:`~difimpact.OptimalGait`, the reference.
    - `x`: the post-impact state ``(2j,)``: joint angles, then rates (the optimum's is
      ``concatenate([gait.theta[0], gait.theta_dot[0]])``).
    - `kp` [N m/rad], `kd` [N m s/rad]: gains, scalars or one per actuator ``(k,)``, ``≥ 0``; zero gains replay
      the optimum's torques open loop (with the time clock).
    - `clock`: ``"time"`` or ``"phase"``.
    - `options`: :class:`TrackingOptions`; `throw`: raise on a failed step (with ``throw=False``, read the info's
      `result`).

    **Returns:** ``(P(x), info)``, `info` a :class:`TrackingStride`. One compiled program serves every gain,
    state and gait of the same mesh; under ``vmap`` and ``jax.jacfwd`` (default adjoint).
    """
    x, kp, kd = _checked(gait, x, kp, kd, clock, options)
    info = _tracking_stride(gait, x, kp, kd, clock, options)
    if throw:
        info = info.result.error_if(info, info.result != GaitResults.successful)
    return info.x, info


@eqx.filter_jit
def _tracking_floquet(gait, x0, kp, kd, clock, options, rtol, atol, max_steps):
    system = TrackingSystem(gait, kp, kd, clock)

    def residual(x, system):
        info = _stride(system, x, options)
        return info.x - x, None, info.result

    sol = newton(residual, x0, system, rtol=rtol, atol=atol, max_steps=max_steps)

    def step(x):
        info = _stride(system, x, options)
        return info.x, info

    jac, info = jax.jacfwd(step, has_aux=True)(sol.value)
    multipliers = floquet(jac)  # the gaits' one function of the multipliers
    multipliers = multipliers[jnp.argsort(-jnp.abs(multipliers))]
    radius = jnp.abs(multipliers[0])
    result = GaitResults.where(
        info.result != GaitResults.successful, info.result,
        GaitResults.where(sol.result == optx.RESULTS.successful, GaitResults.successful, GaitResults.no_fixed_point))
    return TrackingGait(x=sol.value, stride=info, jacobian=jac, multipliers=multipliers, spectral_radius=radius,
                        stable=(radius < 1) & (result == GaitResults.successful), kp=kp, kd=kd, result=result,
                        num_steps=sol.stats["num_steps"])


def tracking_floquet(gait: OptimalGait, *, kp=0.0, kd=0.0, clock: str = "time", x0=None, rtol: float = 1e-8,
                     atol: float = 1e-8, max_steps: int = 40, options: TrackingOptions = TrackingOptions(),
                     throw: bool = True) -> TrackingGait:
    r"""The periodic gait of ``gait.problem.biped`` tracking the optimal `gait` (:func:`tracking_stride`) and
    its Floquet multipliers.

    The collocation optimum is periodic only up to its discretisation error: its start
    $(\theta^*(0), \dot \theta^*(0))$ is Newton's first guess (optimistix, the Jacobian by ``jax.jacfwd`` through the
    step, as :func:`~difimpact.periodic_gait`) for the closed loop's fixed point ``x* = P(x*)``. The multipliers
    are the eigenvalues of ``∂P/∂x`` there (forward mode through the step, the event time by the
    implicit-function theorem: the saltation-corrected linearisation); the gait is locally orbitally stable when
    they all lie inside the unit circle. One is zero with either clock: ``P`` maps every state onto the
    post-impact surface, where the trailing foot is on the ground ($h(\theta^+) = 0$), of codimension one. With the
    ``"phase"`` clock a second is zero: the closed loop is autonomous, so a state moved along its own orbit takes
    the same next step, ``P(φ_t(x)) = P(x)``, and the vector field is in the kernel of ``∂P/∂x``; with the
    ``"time"`` clock that direction is not neutral.

    **Arguments:**

    - `gait`: an :class:`~difimpact.OptimalGait`; `kp`, `kd`, `clock`: the controller, as for
      :func:`tracking_stride`.
    - `x0`: Newton's first guess ``(2j,)`` (``None``: the optimum's start).
    - `rtol`, `atol`: Newton's tolerances on ``x`` (a step's integration error, at the default
      :class:`TrackingOptions`, is ~10⁻⁹ in ``x``); `max_steps`: its iteration limit.
    - `options`: :class:`TrackingOptions` of each step; `throw`: raise on failure (with ``throw=False``, read
      `result`).

    **Returns:** a :class:`TrackingGait`. One compiled program serves every gain and every gait of the same mesh,
    and ``vmap`` over gains.
    """
    x0, kp, kd = _checked(gait, x0, kp, kd, clock, options)
    if x0 is None:
        x0 = jnp.concatenate([gait.theta[0], gait.theta_dot[0]])
    rtol, atol = tolerance("rtol", rtol, below=1.0), tolerance("atol", atol)
    out = _tracking_floquet(gait, x0, kp, kd, clock, options, rtol, atol, count("max_steps", max_steps))
    if throw:
        out = out.result.error_if(out, out.result != GaitResults.successful)
    return out
