r"""Single support until its event, with a forward derivative that does not differentiate the event search.

The stance phase ends at the first zero of an event component ``g``; its end ``(t^*, y(t^*))`` depends on the
initial state and the walker's parameters ``θ`` through the flow and through ``t^*``. By the implicit-function
theorem on ``g(t^*, y(t^*; θ); θ) = 0`` (the event time's derivative: Hiskens & Pai 2000, *Trajectory
sensitivity analysis of hybrid systems*, IEEE Trans. Circuits Syst. I 47(2))

$$\delta t^* = -\frac{\partial_y g\,\delta y|_{t^*} + \partial_θ g\,δθ}{\partial_t g + \partial_y g\, f(t^*, y^*)},
\qquad \delta y(t^*) = \delta y|_{t^*} + f(t^*, y^*)\,\delta t^*,$$

with ``δy|_{t^*}`` the flow's derivative at the fixed time ``t^*``: a forward-mode solve from ``0`` to ``t^*``
without events (the same solver and tolerances). diffrax differentiates its event search by optimistix's implicit
derivative, whose linear solve raises from a host callback (``lineax.linear_solve(throw=True)``); a program with a
host callback is kept neither by JAX's persistent compilation cache nor by ``jax.export``. Written here, the
derivative is a division: where the event's slope vanishes it is not finite (the caller's Newton then fails and
says so), never an error inside a ``vmap``. Cost: the fixed-time solve, one integration besides the event search's
primal one. The phase's vector field must be the same in all its modes and its transitions leave the state alone
(a walker's stance: arming the heel strike changes neither).
"""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Array, Bool, Float, Int, Scalar
from .._hybrid import AbstractHybridSystem, HybridResults, solve_hybrid


def controller(rtol, atol) -> diffrax.PIDController:
    """The stance's step control: PI (pcoeff 0.3, icoeff 0.4) keeps a stride's error below the continuation
    corrector's step tolerance (1e-11) at the default rtol 1e-10, which Newton on P² next to a period doubling
    needs."""
    return diffrax.PIDController(rtol=rtol, atol=atol, pcoeff=0.3, icoeff=0.4)


def _field(t, y, args):
    system, mode = args
    return system.vector_field(t, y, mode)


@eqx.filter_custom_jvp
def stance(system: AbstractHybridSystem, y0: Float[Array, " k"], rtol, atol, t_max, *, max_steps: int
           ) -> tuple[Scalar, Float[Array, " k"], Int[Array, ""], Int[Array, ""], Bool[Array, ""]]:
    """``(t*, y(t*), mode, event, failed)``: the phase from ``t = 0`` on the hybrid engine (at most two modes)
    until its event; `event` the component that ended it (−1 without one), `failed` the step limit or a solver
    failure. Differentiable in forward mode (the module's equation) in `system`'s and `y0`'s arrays."""
    sol = solve_hybrid(system, jnp.zeros((), y0.dtype), y0, system.initial_mode(y0), t_max=t_max,
                       solver=diffrax.Tsit5(), stepsize_controller=controller(rtol, atol), max_steps=max_steps,
                       max_phases=2, adjoint=diffrax.ForwardMode())
    return (sol.t, sol.y, jnp.asarray(sol.mode), *ended(sol))


def ended(sol) -> tuple[Int[Array, ""], Bool[Array, ""]]:
    """How a stance on the engine ended: the event component (−1 without one) and whether it failed (the step
    limit or a solver failure; no event before ``t_max`` is not a failure)."""
    event = jnp.where(sol.result == HybridResults.successful, sol.event, -1)
    return event, (sol.result != HybridResults.successful) & (sol.result != HybridResults.no_end)


def _filled(primal, tangent):
    """`tangent` with a zero wherever it is ``None`` and `primal` has an array (``None`` where `primal` has none)."""
    if tangent is None:
        return jax.tree.map(lambda p: None if p is None else jnp.zeros_like(p), primal, is_leaf=lambda x: x is None)
    return jax.tree.map(lambda p, t: None if p is None else (jnp.zeros_like(p) if t is None else t),
                        primal, tangent, is_leaf=lambda x: x is None)


@stance.def_jvp
def _stance_jvp(primals, tangents, *, max_steps):
    system, y0, rtol, atol, t_max = primals
    out = stance(system, y0, rtol, atol, t_max, max_steps=max_steps)
    t1, y1, mode, event, failed = out
    dynamic, static = eqx.partition((system, y0), eqx.is_inexact_array)
    t_dynamic = _filled(dynamic, (tangents[0], tangents[1]))

    def flow(d):  # the state at the fixed time t1
        s, z0 = eqx.combine(d, static)
        sol = diffrax.diffeqsolve(diffrax.ODETerm(_field), diffrax.Tsit5(), jnp.zeros_like(t1), t1, None, z0,
                                  args=(s, mode), saveat=diffrax.SaveAt(t1=True),
                                  stepsize_controller=controller(rtol, atol), max_steps=max_steps,
                                  adjoint=diffrax.ForwardMode(), throw=False)
        return sol.ys[-1], sol.result == diffrax.RESULTS.successful

    _, dy, ok = jax.jvp(flow, (dynamic,), (t_dynamic,), has_aux=True)

    def gap(d, t, y):
        return eqx.combine(d, static)[0].event_components(t, y, mode)[jnp.maximum(event, 0)]

    f1 = system.vector_field(t1, y1, mode)
    _, dg = jax.jvp(gap, (dynamic, t1, y1), (t_dynamic, jnp.zeros_like(t1), dy))
    _, slope = jax.jvp(lambda t, y: gap(dynamic, t, y), (t1, y1), (jnp.ones_like(t1), f1))
    dt = jnp.where(event >= 0, -dg / slope, 0.0)
    dy1 = jnp.where(ok, dy + f1 * dt, jnp.nan)
    return out, (dt, dy1, None, None, None)
