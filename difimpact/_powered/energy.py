r"""The energy balance of a powered gait on its exact periodic orbit (:func:`work_balance`): the actuators' work
over one step, integrated as a state of its own, against the kinetic energy lost at heel strike."""

import diffrax
import equinox as eqx
import jax.numpy as jnp
import optimistix as optx

from .._custom_types import Array, Float, Scalar
from .._gait.fixed_point import newton
from .._gait.stride import GaitResults
from .._linalg import full_precision
from .._validation import count, tolerance
from .optimal import OptimalGait
from .tracking import _checked, _stride, TrackingOptions
from .tracking_system import TrackingSystem

_STEPS = 1_000_000  # the quadrature's step limit (rtol = atol = 1e-12 over one step: a few thousand)


class WorkBalance(eqx.Module):
    """The energy balance of one step of a powered gait's exact periodic orbit (:func:`work_balance`).

    - `work` [J]: the actuators' work over the step, $W = \\int_0^{T} \\sum_i u_i \\omega_i \\,dt$.
    - `impact_loss` [J]: ``T⁻ − T⁺`` at the orbit's heel strike.
    - `energy_change` [J]: ``(T + V)`` at heel strike less ``(T + V)`` at the step's start, along the same
      integration (the work–energy theorem's other side: equals `work` to the integration's accuracy).
    - `relative_error`: $|W - (T^- - T^+)| / (T^- - T^+)$; `mesh_work` [J]: the collocation's own quadrature
      of ``W`` (``gait.net_work``), for comparison.
    - `x`: the orbit's post-impact state ``(θ, θ̇)``; `distance`: $\\max |x - x^*|$ from the collocated start
      $x^* = (\\theta^*(0), \\dot\\theta^*(0))$ (the collocation's discretisation error);
      `periodicity`: $\\max |P(x) - x|$ (Newton's residual).
    - `step_time` [s]: the orbit's step time.
    - `result`: a :class:`~difimpact.GaitResults` item (the fixed point's, or ``stance_failed`` where the
      quadrature failed).
    """

    work: Scalar
    impact_loss: Scalar
    energy_change: Scalar
    relative_error: Scalar
    mesh_work: Scalar
    x: Float[Array, " s"]
    distance: Scalar
    periodicity: Scalar
    step_time: Scalar
    result: GaitResults


def _energy(biped, theta, theta_dot) -> Scalar:
    """``T + V`` of the walker in single support (the stance foot at the origin)."""
    tree = biped.model.tree()
    q, qd = biped.configuration(theta), biped.configuration(theta_dot)
    return tree.kinetic_energy(q, qd) + tree.potential_energy(q)


@full_precision
def _field(t, y, system: TrackingSystem):
    """``(θ̇, θ̈, Σ u ω)``: single support under the controller, the actuators' power appended."""
    j = system.biped.joints
    theta, rate = y[:j], y[j:2 * j]
    u = system.control(t, theta, rate)
    acc, _ = system.biped.dynamics(theta, rate, u)
    return jnp.concatenate([rate, acc, (u @ system.biped.joint_rates(rate))[None]])


def _orbit(system: TrackingSystem, x0, options, tol, max_steps):
    """The closed loop's fixed point $x = P(x)$ by the gaits' Newton (as :func:`~difimpact.tracking_floquet`,
    without the multipliers), its step and result."""

    def residual(x, system):
        info = _stride(system, x, options)
        return info.x - x, None, info.result

    sol = newton(residual, x0, system, rtol=tol, atol=tol, max_steps=max_steps)
    info = _stride(system, sol.value, options)
    result = GaitResults.where(
        info.result != GaitResults.successful, info.result,
        GaitResults.where(sol.result == optx.RESULTS.successful, GaitResults.successful, GaitResults.no_fixed_point))
    return sol.value, info, result


@eqx.filter_jit
def _balance(gait, x0, kp, kd, clock, options, tol, max_steps, rtol, atol):
    system = TrackingSystem(gait, kp, kd, clock)
    biped, j = system.biped, gait.theta.shape[1]
    x, info, result = _orbit(system, x0, options, tol, max_steps)
    T = info.step_time
    # The reference's segment ends are kinks of the torques: the time clock steps onto them; with the phase clock
    # they are crossings of the stance angle, which the step-size control finds.
    controller = diffrax.PIDController(rtol=rtol, atol=atol)
    if clock == "time":
        controller = diffrax.ClipStepSizeController(controller, jump_ts=system.knots)
    sol = diffrax.diffeqsolve(diffrax.ODETerm(_field), diffrax.Dopri8(), 0.0, T, T / 64,
                              jnp.concatenate([x, jnp.zeros(1, x.dtype)]), args=system,
                              stepsize_controller=controller, max_steps=_STEPS, throw=False)
    end = sol.ys[-1]
    work = end[-1]
    change = _energy(biped, end[:j], end[j:2 * j]) - _energy(biped, x[:j], x[j:])
    loss = info.impact_loss
    start = jnp.concatenate([gait.theta[0], gait.theta_dot[0]])
    result = GaitResults.where((result == GaitResults.successful) & (sol.result != diffrax.RESULTS.successful),
                               GaitResults.stance_failed, result)
    return WorkBalance(work=work, impact_loss=loss, energy_change=change, relative_error=jnp.abs(work - loss) / loss,
                       mesh_work=gait.net_work, x=x, distance=jnp.max(jnp.abs(x - start)),
                       periodicity=jnp.max(jnp.abs(info.x - x)), step_time=T, result=result)


def work_balance(gait: OptimalGait, *, kp=0.0, kd=0.0, clock: str = "time", x0=None, rtol: float = 1e-12,
                 atol: float = 1e-12, newton_tol: float = 1e-10, max_steps: int = 40,
                 options: TrackingOptions = TrackingOptions(rtol=1e-12, atol=1e-12),
                 throw: bool = True) -> WorkBalance:
    r"""The energy balance of a powered gait on level ground, on its exact periodic orbit: the actuators' work
    over one step against the kinetic energy lost at heel strike,

    $$W = \int_0^{T} \sum_i u_i\,\omega_i\,dt \;=\; T^- - T^+,$$

    $\omega = B_\theta^T \dot\theta$ the actuated joints' rates (:meth:`~difimpact.PoweredBiped.joint_rates`), ``u`` the
    torques applied. Over one step the work–energy theorem gives $W = (T^- + V^-) - (T_0 + V_0)$; on a periodic orbit
    the next step starts where this one's heel strike leaves it, $T_0 = T^+$, and on level ground the relabelled posture
    has the same height, $V_0 = V^-$; so ``W = T⁻ − T⁺``: every joule the actuators put in is lost at heel strike (Kuo
    2002; Ros et al. 2015, eq. 23 for the loss).

    The collocated optimum satisfies this only up to its discretisation error (its Simpson quadrature
    ``gait.net_work``; its start is periodic only to that error). The hybrid ODE under the optimum's
    interpolated torques (zero gains: open loop, time clock) or under the tracking controller
    (:func:`~difimpact.tracking_stride`) has an exact periodic orbit next to it, found by
    :func:`~difimpact.tracking_floquet`'s Newton on the stride map (its steps at `options`' tolerances). From
    that orbit's start, ``W`` is integrated as a further state of single support (Dopri8, `rtol`, `atol`, the
    time clock's knots stepped onto) up to the orbit's heel strike, and compared with the loss of
    :meth:`~difimpact.PoweredBiped.heel_strike` there; the change of ``T + V`` along the same integration is
    a cross-check.

    **Arguments:**

    - `gait`: an :class:`~difimpact.OptimalGait` on level ground.
    - `kp`, `kd`, `clock`: the controller of :func:`~difimpact.tracking_stride` (default: the optimum's
      torques open loop).
    - `x0`: Newton's first guess (``None``: the collocated start).
    - `rtol`, `atol`: the work quadrature's tolerances; `newton_tol`: Newton's (relative and absolute);
      `max_steps`: its iteration limit; `options`: :class:`~difimpact.TrackingOptions` of Newton's steps.
    - `throw`: raise where no periodic orbit was found or a step failed (else read `result`).

    Open loop, Newton needs an optimum close to an orbit: the replayed torques' stride map is unstable (its
    multipliers reach ~10² on Kelly's biped, whose stance ankle is unactuated), and on a coarse mesh its
    discretisation error throws Newton off (``no_fixed_point``); the tracking controller's orbit (e.g.
    ``clock="phase"``, high gains) balances all the same. A swing foot that only grazes the ground at the
    optimum's end has no heel strike in the hybrid model, and no orbit.

    **Returns:** a :class:`WorkBalance`.

    **Example:**

    ```python
    import math, jax.numpy as jnp
    import difimpact as di
    a = math.asin(0.25 / 0.8)
    gait = di.optimal_gait(di.biped_torso_walker(), jnp.array([-a, -2 * a, -a]), step_length=0.5, step_time=0.5,
                           segments=4)
    b = di.work_balance(gait, kp=1000.0, kd=30.0, clock="phase")  # 4 segments: open loop, Newton finds no orbit
    print(b.work, b.impact_loss, b.relative_error)  # 14.699 J, 14.699 J, 2e-12 (Simpson's rule: 14.633 J)
    ```
    """
    x0, kp, kd = _checked(gait, x0, kp, kd, clock, options)
    if x0 is None:
        x0 = jnp.concatenate([gait.theta[0], gait.theta_dot[0]])
    rtol, atol = tolerance("rtol", rtol, below=1.0), tolerance("atol", atol)
    tol = tolerance("newton_tol", newton_tol, below=1.0)
    out = _balance(gait, x0, kp, kd, clock, options, tol, count("max_steps", max_steps), rtol, atol)
    if throw:
        out = out.result.error_if(out, out.result != GaitResults.successful)
    return out
