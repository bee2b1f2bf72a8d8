r"""The hybrid-phase engine: integrate a vector field until the first of several events, apply a transition,
go on, for at most ``max_phases`` phases.

A phase integrates ``ẏ = f(t, y, m)`` in mode ``m`` with diffrax until the first event component
``g_e(t, y, m)`` reaches zero; the :meth:`~AbstractHybridSystem.transition` of that event gives the next
state, mode and whether the chain is finished. The phases are a ``lax.scan`` whose body is skipped
(``lax.cond``) once every member of a ``vmap`` batch has finished, so the chain works under ``jit``,
``vmap`` and reverse-mode ``grad``; a member that has finished while others go on re-solves a tiny
interval from its initial state (a solve from its end state, on an event, has no finite event-time
gradient) and keeps its result.

**The event.** The components are combined into one event function, their minimum, so that diffrax
root-finds the earliest crossing (separate events let the first in pytree order win when two trigger in
one step), and the active branch of the minimum gives the implicit-function gradient of the event time,

$$
\frac{dt^*}{d\theta} = -\frac{\partial g_e / \partial\theta}{d g_e / dt}\Big|_{t^*}.
$$

Each phase shifts its components to start at ``EVENT_SHIFT = 10⁻⁹`` or more (a component at or below zero at
the start would hide every other event: the minimum would never change sign): the shift is
``max(−g_e(t₀), 0) + EVENT_SHIFT``, so a component that starts positive ends its phase at
``g_e = −EVENT_SHIFT``. A system whose event must fall at a component's zero returns the component less
``EVENT_SHIFT`` (the walkers' heel strikes do). The minimum decreases through its
root and the root find is a bisection told so (no sign detection, which fails under ``vmap`` for members
without an event), robust on the kinks of the minimum. It stops on the width of the bracket alone,
``512 ε`` in the time unit (:class:`BracketBisection`): the event function's own rounding may exceed any
tolerance on ``|g|``.
"""

import abc
from typing import Any

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import optimistix as optx

from .._custom_types import Array, Bool, Float, Int, Scalar
from .._results import RESULTS

_IDLE = 1e-9  # interval solved by a finished batch member under vmap, in the system's time unit
EVENT_SHIFT: float = 1e-9
"""The least shift of every event component at the start of a phase (module docstring): a component that starts
positive is found at ``−EVENT_SHIFT``; return it less ``EVENT_SHIFT`` for an event at its zero."""


class HybridResults(RESULTS):  # pyright: ignore
    """Outcomes of :func:`solve_hybrid`; a phase that hits `max_steps` gives the inherited
    ``max_steps_reached``."""

    no_end = "The chain did not reach its end event before `t_max`."
    max_phases_reached = "More phases (events) than `max_phases` before the end event."
    solver_failed = ("The ODE solver or the event root find failed before the end event (a non-finite "
                     "state, or an event function whose root could not be bracketed).")


class AbstractHybridSystem(eqx.Module):
    """A vector field with event components and a transition applied at each event.

    The mode is any PyTree of arrays (regimes, counters, event times to remember); the state ``y`` is what
    diffrax integrates.
    """

    @abc.abstractmethod
    def vector_field(self, t: Scalar, y: Any, mode: Any) -> Any:
        """``dy/dt`` in mode ``mode``, with the structure of ``y``."""

    @abc.abstractmethod
    def event_components(self, t: Scalar, y: Any, mode: Any) -> Float[Array, "..."]:
        """The event components, an array of any shape: each positive while the phase goes on; the phase
        ends at the first that reaches ``−EVENT_SHIFT`` (shifted as the module docstring says: subtract
        ``EVENT_SHIFT`` for an event at zero). Use a large positive value for an inactive component."""

    @abc.abstractmethod
    def transition(self, t: Scalar, y: Any, mode: Any, event: Int[Array, ""]) -> tuple[Any, Any, Bool[Array, ""]]:
        """State and mode after event ``event`` (a flat index into :meth:`event_components`) at time ``t``,
        and ``True`` when the chain is finished."""

    def record(self, t: Scalar, y: Any, mode: Any) -> Any:
        """Per-accepted-step records (a PyTree of arrays), saved when :func:`solve_hybrid` is asked to."""
        raise NotImplementedError(f"{type(self).__name__} defines no `record`.")


class HybridSolution(eqx.Module):
    """Output of :func:`solve_hybrid`.

    - `t`, `y`, `mode`: time, state and mode after the last transition.
    - `event`: flat index of the last event into the event components (``-1`` if none).
    - `n_phases`: phases solved; `n_steps`: accepted steps, all phases.
    - `result`: a :class:`HybridResults` item.
    - `ts`, `records`: with ``record=True`` the time of each accepted step (``inf`` as padding) and the
      system's :meth:`~AbstractHybridSystem.record` there, shape ``(max_phases * max_steps, ...)``; else ``None``.
    """

    t: Scalar
    y: Any
    mode: Any
    event: Int[Array, ""]
    n_phases: Int[Array, ""]
    n_steps: Int[Array, ""]
    result: HybridResults
    ts: Float[Array, " s"] | None
    records: Any


class BracketBisection(optx.Bisection):
    """Bisection that stops when the bracket is narrower than ``atol + rtol |t|``. ``optx.Bisection`` also
    asks ``|g| < atol``, which an event function computed from larger quantities cannot always meet."""

    def terminate(self, fn, y, args, options, state, tags):
        return jnp.abs(state.lower - state.upper) < self.atol + self.rtol * jnp.abs(y), optx.RESULTS.successful


class _Carry(eqx.Module):
    t: Scalar
    y: Any
    mode: Any
    done: Bool[Array, ""]
    result: HybridResults
    event: Int[Array, ""]
    n_phases: Int[Array, ""]
    n_steps: Int[Array, ""]


def _vector_field(t, y, args):
    system, mode, _ = args
    return system.vector_field(t, y, mode)


def _event_function(t, y, args, **kwargs):
    system, mode, shift = args
    g = jnp.ravel(system.event_components(t, y, mode) + shift)
    # The minimum as the component argmin selects, whose derivative is that component's: `jnp.min`'s derivative
    # rule finds the minimum by equality with the operands, which XLA may round differently where it computes
    # them twice, leaving no match (an infinite derivative of the event time).
    return g[jnp.argmin(g)]


def _record(t, y, args):
    system, mode, _ = args
    return system.record(t, y, mode)


def _phase_result(result: diffrax.RESULTS) -> HybridResults:
    """A phase's outcome: ended by its event (successful), or why not."""
    return HybridResults.where(
        result == diffrax.RESULTS.event_occurred, HybridResults.successful,
        HybridResults.where(
            result == diffrax.RESULTS.max_steps_reached, HybridResults.max_steps_reached,
            HybridResults.where(result == diffrax.RESULTS.successful, HybridResults.no_end,
                                HybridResults.solver_failed)))


def _event(dtype) -> diffrax.Event:
    """The minimum of the components as one event, root-found by bisection to ``512 ε`` of the time."""
    eps = float(jnp.finfo(dtype).eps)
    return diffrax.Event(_event_function, BracketBisection(rtol=64 * eps, atol=512 * eps, flip=True),
                         direction=False)


def _blank_records(system, t0, y0, mode0, max_steps):
    """The records of a skipped phase: ``inf`` times and zero records."""
    shapes = jax.eval_shape(system.record, t0, y0, mode0)
    zeros = jax.tree.map(lambda s: jnp.zeros((max_steps,) + s.shape, s.dtype), shapes)
    return jnp.full((max_steps,), jnp.inf), zeros


def _select(done, old, new):
    return jax.tree.map(lambda a, b: jnp.where(done, a, b), old, new)


def solve_hybrid(
    system: AbstractHybridSystem,
    t0: Scalar,
    y0: Any,
    mode0: Any,
    *,
    t_max: Scalar,
    solver: diffrax.AbstractSolver,
    stepsize_controller: diffrax.AbstractStepSizeController,
    max_steps: int,
    max_phases: int,
    adjoint: diffrax.AbstractAdjoint = diffrax.RecursiveCheckpointAdjoint(),
    record: bool = False,
) -> HybridSolution:
    """Integrate ``system`` from ``(t0, y0)`` in mode ``mode0`` through at most ``max_phases`` phases,
    each ended by the first event component reaching zero and followed by the system's transition, until a
    transition says the chain is finished (see the module docstring). Call it inside ``jit``.

    **Arguments:**

    - `system`: an :class:`AbstractHybridSystem`.
    - `t0`, `y0`, `mode0`: initial time, state and mode.
    - `t_max`: the chain must finish before this time (else ``HybridResults.no_end``).
    - `solver`, `stepsize_controller`, `adjoint`: as for ``diffrax.diffeqsolve``; the adjoint differentiates
      through the scan, the ``cond`` and the event root find.
    - `max_steps`: accepted and rejected steps per phase. `max_phases`: phases; each costs reverse-mode
      memory and time whether used or not.
    - `record`: save :meth:`~AbstractHybridSystem.record` at every accepted step.

    **Returns:** a :class:`HybridSolution`; failures are in its ``result``, never raised.
    """
    event = _event(jnp.result_type(*jax.tree.leaves(y0)))
    subs = [diffrax.SubSaveAt(t1=True)] + ([diffrax.SubSaveAt(steps=True, fn=_record)] if record else [])
    saveat = diffrax.SaveAt(subs=subs)
    term = diffrax.ODETerm(_vector_field)
    blank = _blank_records(system, t0, y0, mode0, max_steps) if record else None

    def skip(carry):
        return carry, blank

    def run(carry):
        # A finished member (under vmap) re-solves a tiny interval from the initial state; its carry is kept.
        t = jnp.where(carry.done, t0, carry.t)
        y = _select(carry.done, y0, carry.y)
        mode = _select(carry.done, mode0, carry.mode)
        shift = jax.lax.stop_gradient(jnp.maximum(-system.event_components(t, y, mode), 0.0) + EVENT_SHIFT)
        sol = diffrax.diffeqsolve(
            term, solver, t, jnp.where(carry.done, t0 + _IDLE, t_max), None, y, args=(system, mode, shift),
            saveat=saveat, stepsize_controller=stepsize_controller, event=event, max_steps=max_steps,
            adjoint=adjoint, throw=False,
        )
        t1, y1 = sol.ts[0][-1], jax.tree.map(lambda x: x[-1], sol.ys[0])
        index = jnp.argmin(system.event_components(t1, y1, mode) + shift)
        y1, mode1, finished = system.transition(t1, y1, mode, index)
        result = _phase_result(sol.result)
        new = _Carry(t1, y1, mode1, finished | (result != HybridResults.successful), result, index,
                     carry.n_phases + 1, carry.n_steps + sol.stats["num_accepted_steps"])
        records = (sol.ts[1], sol.ys[1]) if record else None
        return _select(carry.done, skip(carry), (new, records))

    def phase(carry, _):
        # A real branch (not a select) once every batch member has finished.
        return jax.lax.cond(eqxi.unvmap_all(carry.done), skip, run, carry)

    zero = jnp.array(0)
    carry0 = _Carry(jnp.asarray(t0), y0, mode0, jnp.array(False), HybridResults.successful, jnp.array(-1),
                    zero, zero)
    carry, saved = jax.lax.scan(phase, carry0, None, length=max_phases)
    result = HybridResults.where(carry.done | (carry.result != HybridResults.successful), carry.result,
                                 HybridResults.max_phases_reached)
    ts, records = None, None
    if record:
        ts, records = jax.tree.map(lambda r: r.reshape((max_phases * max_steps,) + r.shape[2:]), saved)
    return HybridSolution(t=carry.t, y=carry.y, mode=carry.mode, event=carry.event, n_phases=carry.n_phases,
                          n_steps=carry.n_steps, result=result, ts=ts, records=records)
