r"""The hybrid system of single support under a tracking controller: a :class:`~difimpact.PoweredBiped`
driven by the optimum's torques plus PD on its interpolated joint trajectory (:func:`~difimpact.tracking_stride`)."""

import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Array, Bool, Float, Int, Scalar
from .._hybrid import EVENT_SHIFT, AbstractHybridSystem
from .._linalg import full_precision
from .._collocation import methods as collocation
from .optimal import OptimalGait

_CLEARANCE = 1e-6  # height [m] above the ground that arms the heel strike
_STRIKE = 0  # the event components: the heel strike, the next knot of the reference
_INACTIVE = 1e3  # a knot component once every knot is behind


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
        """``τ`` where the reference's phase $c^T \\theta^*(\\tau)$ (increasing) is ``s``: the inverse of the
        collocation points' piecewise-linear phase, then three Newton steps on the interpolated one; clipped to
        $[0, T^*]$."""
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
        """The reference $(\\theta_d, \\dot\\theta_d, u^*)$ at time ``t`` since heel strike, or at the phase of ``θ``:
        there $\\theta_d = \\theta^*(\\tau_s)$, $\\dot\\theta_d = \\dot\\theta^*(\\tau_s) \\dot s / \\dot s^*(\\tau_s)$
        with $c^T \\theta^*(\\tau_s) = c^T \\theta$."""
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
        # The engine shifts every component by EVENT_SHIFT at least: less it, the heel strike is found at zero height.
        return (jnp.stack([jnp.where(mode.armed, foot[1], disarmed), jnp.broadcast_to(knot, foot[1].shape)])
                - EVENT_SHIFT)

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
