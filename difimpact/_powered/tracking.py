"""Tracking an optimal gait: the closed-loop stride map of a powered biped whose actuators follow an
:class:`~difimpact.OptimalGait` by PD feedback (:func:`tracking_stride`: the controller, its two clocks and the
step's events), the map's fixed point and its Floquet multipliers (:func:`tracking_floquet`)."""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import optimistix as optx

from .._custom_types import Array, Bool, Complex, Float, Int, Scalar
from .._gait.fixed_point import _ImplicitLU, _Newton
from .._gait.stride import GaitResults
from .._hybrid import AbstractHybridSystem, HybridResults, solve_hybrid
from .._hybrid.engine import _ARM
from .._impact.constrained import ImpactResults
from .._linalg import full_precision, SmallLU
from .._validation import as_float, count, instance, positive, tolerance
from . import collocation
from .optimal import OptimalGait

CLOCKS = ("time", "phase")
_CLEARANCE = 1e-6  # height [m] above the ground that arms the heel strike
_STRIKE = 0  # the event components: the heel strike, the next knot of the reference
_INACTIVE = 1e3  # a knot component once every knot is behind


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


class _Reference(eqx.Module):
    """The optimum's states, their rates and torques at the collocation points, interpolated by the method's
    own rule (:func:`.collocation.interpolate`) and held outside $[0, T^*]$."""

    t: Float[Array, " G"]
    x: Float[Array, "G s"]
    f: Float[Array, "G s"]
    u: Float[Array, "G k"]
    method: str = eqx.field(static=True)

    def _interpolate(self, tau):
        return collocation.interpolate(self.method, self.t, self.x, self.f, self.u, tau)

    def __call__(self, tau) -> tuple[Float[Array, " j"], Float[Array, " j"], Float[Array, " k"]]:
        """$(\\theta^*, \\dot\\theta^*, u^*)$ at ``τ``, held at the ends."""
        x, u = self._interpolate(jnp.clip(tau, 0.0, self.t[-1]))
        j = x.shape[0] // 2
        return x[:j], x[j:], u

    def time_of(self, s, c) -> Scalar:
        """``τ`` where the reference's phase $c^T \\theta^*(\\tau)$ (increasing) is ``s``: the inverse of the collocation
        points' piecewise-linear phase, then three Newton steps on the interpolated one; clipped to $[0, T^*]$."""
        j = c.shape[0]
        tau = jnp.interp(s, self.x[:, :j] @ c, self.t)
        for _ in range(3):
            phase, rate = jax.jvp(lambda t: self._interpolate(t)[0][:j] @ c, (tau,), (jnp.ones_like(tau),))
            tau = tau - (phase - s) / jnp.where(rate > 0, rate, 1.0)
        return jnp.clip(tau, 0.0, self.t[-1])

    @property
    def knots(self) -> Float[Array, " N"]:
        """The segments' ends, where the interpolation's derivatives jump."""
        return self.t[::2] if self.method == "hermite-simpson" else self.t


class _Mode(eqx.Module):
    """The hybrid mode of a step: whether the heel strike is armed, and the next of the reference's knots."""

    armed: Bool[Array, ""]
    knot: Int[Array, ""]


class TrackingSystem(AbstractHybridSystem):
    """Single support of a :class:`~difimpact.PoweredBiped` under the tracking controller of
    :func:`tracking_stride` as a hybrid system in the time since heel strike: state ``y = (θ, θ̇)``, two event
    components, the heel strike and (phase clock) the phase reaching the reference's next knot, and a mode
    (:class:`_Mode`): the heel strike disarmed or armed, and the next knot. The vector field is the same in every
    mode, so the mode changes neither the stride map nor its derivatives."""

    gait: OptimalGait
    reference: _Reference
    kp: Float[Array, " k"]
    kd: Float[Array, " k"]
    knots: Float[Array, " K"]
    clock: str = eqx.field(static=True)

    def __init__(self, gait: OptimalGait, kp, kd, clock: str = "time"):
        x = jnp.concatenate([gait.theta, gait.theta_dot], axis=1)
        f, _ = gait.problem._field(x, gait.u)
        self.gait, self.kp, self.kd, self.clock = gait, kp, kd, clock
        self.reference = _Reference(gait.t, x, f, gait.u, gait.problem.method)
        # The clock's readings at the reference's segment ends, where its derivatives jump (the torques are only
        # continuous there): no integration step may straddle one, whose error the forward-mode tangents would
        # carry uncontrolled. The integrator steps to the times (`jump_ts`); the phases are events.
        t = self.reference.knots
        self.knots = t if clock == "time" else jax.vmap(self.reference)(t)[0] @ self.phase_row()

    @property
    def biped(self):
        return self.gait.problem.biped

    def _split(self, y):
        j = y.shape[0] // 2
        return y[:j], y[j:]

    def phase_row(self) -> Float[Array, " j"]:
        """``c`` with the phase $s = c^T \\theta$: the stance link's absolute angle, signed to increase along the
        optimum."""
        tree = self.biped.model.tree()
        body = tree.point_body[tree.point_names.index(self.biped.stance_foot)]
        c = jnp.asarray(tree._angle_rows()[body, 2:], self.gait.theta.dtype)
        return c * jnp.sign(self.gait.theta[-1] @ c - self.gait.theta[0] @ c)

    def desired(self, t, theta, theta_dot) -> tuple[Float[Array, " j"], Float[Array, " j"], Float[Array, " k"]]:
        """The reference $(\\theta_d, \\dot\\theta_d, u^*)$ at time ``t`` since heel strike, or at the phase of ``θ``: there
        $\\theta_d = \\theta^*(\\tau_s)$, $\\dot\\theta_d = \\dot\\theta^*(\\tau_s) \\dot s / \\dot s^*(\\tau_s)$ with $c^T \\theta^*(\\tau_s) = c^T \\theta$."""
        if self.clock == "time":
            return self.reference(t)
        c = self.phase_row()
        theta_ref, rate_ref, u_ref = self.reference(self.reference.time_of(c @ theta, c))
        speed = c @ rate_ref
        return theta_ref, rate_ref * (c @ theta_dot) / jnp.where(speed > 0, speed, 1.0), u_ref

    def control(self, t, theta, theta_dot) -> Float[Array, " k"]:
        """``u``: the optimum's torques plus PD on the actuators' joint angles and rates."""
        theta_ref, rate_ref, u_ref = self.desired(t, theta, theta_dot)
        B = jnp.asarray(self.biped.actuation()[2:], theta.dtype)
        return u_ref + self.kp * (B.T @ (theta_ref - theta)) + self.kd * (B.T @ (rate_ref - theta_dot))

    @full_precision
    def vector_field(self, t, y, mode):
        # A non-finite state (Newton far from a gait) gives a failed step, never an error inside the solve.
        theta, rate = self._split(jnp.where(jnp.isfinite(y), y, 0.0))
        acc, _ = self.biped.dynamics(theta, rate, self.control(t, theta, rate))
        return jnp.concatenate([rate, acc])

    def clock_value(self, t, theta) -> Scalar:
        """The clock's reading: the time since heel strike, or the phase $s = c^T \\theta$."""
        return t if self.clock == "time" else self.phase_row() @ theta

    def event_components(self, t, y, mode):
        theta, _ = self._split(y)
        foot = self.biped.swing_foot_position(theta)
        disarmed = jnp.maximum(_CLEARANCE - foot[1], 0.5 * self.gait.step_length - foot[0])
        knots = self.knots
        gap = knots[jnp.minimum(mode.knot, knots.shape[0] - 1)] - self.clock_value(t, theta)
        knot = _INACTIVE if self.clock == "time" else jnp.where(mode.knot < knots.shape[0], gap, _INACTIVE)
        # The engine arms every component at +_ARM: offset by it, the heel strike is found at zero height.
        return jnp.stack([jnp.where(mode.armed, foot[1], disarmed), jnp.broadcast_to(knot, foot[1].shape)]) - _ARM

    def transition(self, t, y, mode, event):
        strike = event == _STRIKE
        new = _Mode(armed=mode.armed | strike, knot=mode.knot + jnp.where(strike, 0, 1).astype(mode.knot.dtype))
        return y, new, mode.armed & strike

    def initial_mode(self, y) -> "_Mode":
        """Disarmed, the next knot the first ahead of the clock's start."""
        theta, _ = self._split(y)
        start = self.clock_value(jnp.zeros((), y.dtype), theta)
        knot = jnp.searchsorted(self.knots, start, side="right").astype(jnp.int32)
        return _Mode(armed=jnp.array(False), knot=knot)


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
                    throw: bool = False) -> tuple[Float[Array, " s"], TrackingStride]:
    r"""The closed-loop stride map $x^+ = P(x)$ of ``gait.problem.biped`` tracking the optimal `gait` by PD
    feedback: single support from the post-impact state ``x = (θ, θ̇)`` until heel strike, then the impact and
    the legs' relabelling.

    **The controller.** The torques are the optimum's plus PD feedback on the actuators' joint angles
    $\omega  = B_\theta^T \theta$ and rates (``B_θ`` the joint rows of :meth:`~difimpact.PoweredBiped.actuation`), against the
    optimum at a point ``τ`` of its step,

    $$u = u^*(τ) + K_p\,B_θ^T\big(θ_d - θ\big) + K_d\,B_θ^T\big(\dot θ_d - \dot θ\big),$$

    with diagonal gains ``K_p``, ``K_d`` and the reference $(\theta^*, \dot \theta^*, u^*)$ the collocation solution's
    own interpolation (:meth:`~difimpact.OptimalGait.state`: Hermite–Simpson's cubic states and quadratic
    torques per segment), held at its end value outside $[0, T^*]$. The `clock` says what ``τ`` is:

    - ``"time"``: the time since the last heel strike; $\theta_d = \theta^*(\tau)$, $\dot \theta_d = \dot \theta^*(\tau)$: PD on the
      optimal joint trajectory, a time-varying controller. Held after $T^*$, the reference is continuous, so
      the stride map stays continuously differentiable where the step time crosses $T^*$.
    - ``"phase"``: virtual constraints as in hybrid zero dynamics (Westervelt, Grizzle & Koditschek, *IEEE TAC*
      48, 2003), the optimum being the constraint: ``τ`` is where the optimum's phase $c^T \theta^*$ equals the
      walker's, $s = c^T \theta$, the stance link's absolute angle (the unactuated coordinate of the walkers here; it
      must be monotonic along the optimum); $\theta_d = \theta^*(\tau)$, $\dot \theta_d = \dot \theta^*(\tau)\,\dot s / \dot s^*(\tau)$.
      A time-invariant controller; PD on the outputs $B_\theta^T(\theta  - \theta_d(\theta))$, not the papers' feedback
      linearisation, so the outputs vanish only as the gains grow, and the gait tends to the hybrid zero
      dynamics' as they do.

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
    - `options`: :class:`TrackingOptions`; `throw`: raise on a failed step (else read the info's `result`).

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
        return _stride(system, x, options).x - x

    sol = optx.root_find(residual, _Newton(rtol, atol, linear_solver=SmallLU()), x0, args=system,
                         max_steps=max_steps, adjoint=optx.ImplicitAdjoint(linear_solver=_ImplicitLU()), throw=False)

    def step(x):
        info = _stride(system, x, options)
        return info.x, info

    jac, info = jax.jacfwd(step, has_aux=True)(sol.value)
    # ∂P/∂x is at most 10 × 10 for the walkers here: LAPACK's eigenvalues (the closed forms of
    # `~difimpact.eigenvalues` stop at 3 × 3).
    multipliers = jnp.linalg.eigvals(jac)
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
                     throw: bool = False) -> TrackingGait:
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
    - `options`: :class:`TrackingOptions` of each step; `throw`: raise on failure (else read `result`).

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
