"""Periodic gaits: fixed points of the stride map ``P`` (period 1) or of ``P∘P`` (period 2) by Newton's method."""

import functools
from typing import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import lineax as lx
import numpy as np
import optimistix as optx
from jaxtyping import PyTree

from .._check import program, result_check
from .._custom_types import Array, Float, Int, Scalar
from .._linalg import full_precision, SmallLU
from .._models.walker import AbstractWalker
from .._validation import count, flag, instance, tolerance
from .stride import GaitResults, StanceTolerances, Stride, stride


class PeriodicGait(eqx.Module):
    r"""A periodic gait: a fixed point $x* = P^p(x*)$ of the stride map and its ``p`` steps.

    - `x`: the section state just after heel strike (:attr:`AbstractWalker.section_names`).
    - `strides`: the ``p`` :class:`Stride` s from `x`, stacked on a leading axis of size `period`.
    - `result`: a :class:`GaitResults` item: ``successful``, ``no_fixed_point`` (Newton did not converge), or
      the failure of a step at Newton's last iterate (fell, no heel strike, trailing foot stays).
    - `num_steps`: Newton iterations.
    - `jacobian`: $\partial P^p/\partial x$ at `x`, the linearisation whose eigenvalues are the Floquet
      multipliers (:func:`~difimpact.floquet_multipliers`); `options`: the :class:`StanceTolerances` the gait was
      solved with.

    Per-gait quantities over the period: `step_time`, `step_length`, `energy_loss` (means per step), `speed`
    ``ΣL / ΣT`` and `loss_per_distance` ``ΣΔT / ΣL`` [J/m].
    """

    x: Float[Array, " k"]
    strides: Stride
    result: GaitResults
    num_steps: Int[Array, ""]
    jacobian: Float[Array, "k k"]
    options: StanceTolerances
    period: int = eqx.field(static=True)

    @property
    def step_time(self) -> Scalar:
        return jnp.mean(self.strides.step_time, axis=-1)

    @property
    def step_length(self) -> Scalar:
        return jnp.mean(self.strides.step_length, axis=-1)

    @property
    def energy_loss(self) -> Scalar:
        return jnp.mean(self.strides.energy_loss, axis=-1)

    @property
    def speed(self) -> Scalar:
        return jnp.sum(self.strides.step_length, axis=-1) / jnp.sum(self.strides.step_time, axis=-1)

    @property
    def loss_per_distance(self) -> Scalar:
        return jnp.sum(self.strides.energy_loss, axis=-1) / jnp.sum(self.strides.step_length, axis=-1)


class _ImplicitLU(lx.AbstractLinearSolver):
    """:class:`SmallLU` for the implicit-function derivative
    $(I - \\partial P^p/\\partial x)^{-1} \\partial P^p/\\partial p$, which optimistix solves with ``throw=True``: at a
    failed gait (a non-finite or singular system) it returns zeros instead of raising, so that one failed member does
    not stop a ``vmap``, ``sweep`` or optimiser run; the gait's `result` flags it, and its derivatives are meaningless,
    like its values."""

    lu: SmallLU = SmallLU()

    def init(self, operator, options):
        return self.lu.init(operator, options)

    def compute(self, state, vector, options):
        x, _, stats = self.lu.compute(state, vector, options)
        return jnp.where(jnp.isfinite(x), x, 0.0), lx.RESULTS.successful, stats

    def transpose(self, state, options):
        return self.lu.transpose(state, options)

    def conj(self, state, options):
        return self.lu.conj(state, options)

    def assume_full_rank(self):
        return True


def _steps(walker, x, period, options):
    """The ``period`` strides from ``x`` (Python loop: ``period`` is small and static), stacked, and the
    result of the first that failed."""
    out = []
    for _ in range(period):
        out.append(stride(walker, x, options=options, throw=False))
        x = out[-1].x
    result = GaitResults.successful
    for s in reversed(out):
        result = GaitResults.where(s.result != GaitResults.successful, s.result, result)
    return jax.tree.map(lambda *a: jnp.stack(a), *out), result


def _linearised_steps(walker, x, period, options):
    r""":func:`_steps` from `x` in one pass with their tangents (``jax.jacfwd``): the Jacobian
    $\partial P^p/\partial x$ at `x`, and the strides and result."""

    def last(z):
        strides, result = _steps(walker, z, period, options)
        return strides.x[-1], (strides, result)

    return jax.jacfwd(last, has_aux=True)(x)


class NewtonIterate(eqx.Module):
    """An iterate of :func:`newton`: the point `y`, the residual's Jacobian there, the residual's `data` and
    the `result` of its steps."""

    y: Array
    jacobian: Array
    data: PyTree
    result: GaitResults


class _Newton(optx.Newton):
    """Newton's method with the Jacobian of the residual from ``jax.jacfwd``: one pass through each step's
    integration carrying the state and its ``k`` tangents. ``optx.Newton`` takes it from ``jax.linearize``,
    which integrates each step twice, the state alone for the residual and then the state with its tangents for
    the linear map (a while loop keeps no intermediates to linearise about). Here the step is
    ``optx.Newton``'s on the residual's affine model at ``y``, which has the same value and Jacobian; the
    iterate's :class:`NewtonIterate` carries that Jacobian out as the solve's ``aux``. With `stop_on_failure`
    the iteration ends at the first iterate whose steps failed or whose residual is not finite."""

    stop_on_failure: bool = eqx.field(static=True, default=False)

    @full_precision
    def step(self, fn, y, args, options, state, tags):
        def residual(z):
            out = fn(z, args)  # (value, NewtonIterate)
            return out[0], out

        jac, (fx, it) = jax.jacfwd(residual, has_aux=True)(y)
        it = NewtonIterate(y, jac, it.data, it.result)
        new_y, state, it = super().step(lambda z, _: (fx + jac @ (z - y), it), y, args, options, state, tags)
        if self.stop_on_failure:
            failed = (it.result != GaitResults.successful) | ~jnp.all(jnp.isfinite(fx))
            state = eqx.tree_at(lambda s: s.result, state,
                                optx.RESULTS.where(failed, optx.RESULTS.nonlinear_divergence, state.result))
        return new_y, state, it


def newton(residual: Callable, y0: Array, args: PyTree, *, rtol: float, atol: float, max_steps: int,
           stop_on_failure: bool = False) -> optx.Solution:
    """The Newton solver of the gaits (:func:`periodic_gait` and :func:`~difimpact.continue_gait`): a root of
    ``residual(y, args) -> (F(y), data, result)`` from `y0` by optimistix with the unrolled LU, derivatives by
    the implicit-function theorem. The solution's ``aux`` is the :class:`NewtonIterate` of the last step taken
    (its ``y`` is one Newton step, below the tolerances, from the returned ``value``): its Jacobian and data."""

    def fn(y, args):
        f, data, result = residual(y, args)
        return f, NewtonIterate(y, jnp.zeros(f.shape + y.shape, f.dtype), data, result)

    solver = _Newton(rtol, atol, linear_solver=SmallLU(), stop_on_failure=stop_on_failure)
    return optx.root_find(fn, solver, y0, args=args, has_aux=True, max_steps=max_steps,
                          adjoint=optx.ImplicitAdjoint(linear_solver=_ImplicitLU()), throw=False)


def stride_power(walker: AbstractWalker, x: Float[Array, " k"], period: int = 1, *,
                 options: StanceTolerances = StanceTolerances()) -> Float[Array, " k"]:
    """$P^p(x)$: the section state after `period` steps (failed steps give a finite, meaningless state)."""
    return _steps(walker, x, period, options)[0].x[-1]


def checked_guess(walker: AbstractWalker, x0: Float[Array, " k"]) -> Float[Array, " k"]:
    """`x0`, a gait search's guess, after checking it where it is concrete (outside ``jit``/``vmap``): finite, and
    with its stance leg above the ground, ``|θ0| < π/2`` (:meth:`AbstractWalker.from_section`). A first step from
    a guess outside that range falls at once, and no gait is near it."""
    if isinstance(x0, jax.core.Tracer):
        return x0
    values, names = np.asarray(x0), ", ".join(walker.section_names)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"`x0` = {values} ({names}) must be finite: it is the guess of a gait's section state.")
    stance = walker.from_section(x0)[0][0]
    if not isinstance(stance, jax.core.Tracer) and not abs(float(stance)) < 0.5 * np.pi:
        angle = walker.coordinate_names[2] if len(walker.coordinate_names) > 2 else "θ0"
        raise ValueError(
            f"`x0` = {values} ({names}) is outside the walker's range: its stance-leg angle {angle} = "
            f"{float(stance):.6g} rad is not within (-π/2, π/2) (the leg would lie on or under the ground), so no "
            "gait is near it; start from a posture with the stance leg above the ground, near a known gait.")
    return x0


def _checked_arguments(walker, x0, period, rtol, atol, max_steps, options, throw):
    """`periodic_gait`'s arguments checked (in Python where they are concrete: ``ValueError``/``TypeError``), and
    ``(x0, rtol, atol, max_steps)`` as it uses them."""
    if not isinstance(walker, AbstractWalker):
        raise TypeError(f"`walker` must be an AbstractWalker, got {type(walker).__name__}.")
    if isinstance(period, bool) or not isinstance(period, int) or period < 1:
        raise ValueError(f"`period` must be a positive integer, got {period!r}.")
    x0 = jnp.asarray(x0, dtype=jnp.result_type(float))
    if x0.shape != (walker.section_size,):
        raise ValueError(f"`x0` must have shape ({walker.section_size},) = {walker.section_names}, got {x0.shape}.")
    x0 = checked_guess(walker, x0)
    default = max(1e-11, 100 * float(jnp.finfo(x0.dtype).eps))
    rtol = default if rtol is None else tolerance("rtol", rtol, below=1.0)
    atol = default if atol is None else tolerance("atol", atol)
    max_steps = count("max_steps", max_steps)
    flag("throw", throw)
    instance("options", options, StanceTolerances, "di.StanceTolerances()")
    return x0, rtol, atol, max_steps


def _arguments(walker, x0, *, period: int = 1, rtol=None, atol=None, max_steps: int = 40,
               options: StanceTolerances = StanceTolerances(), throw: bool = True) -> tuple[tuple, dict]:
    """The Python edge of :func:`periodic_gait`: its arguments checked before its program, `x0` as an array."""
    x0 = _checked_arguments(walker, x0, period, rtol, atol, max_steps, options, throw)[0]
    return (walker, x0), dict(period=period, rtol=rtol, atol=atol, max_steps=max_steps, options=options, throw=throw)


@functools.partial(program, normalise=_arguments)
def periodic_gait(walker: AbstractWalker, x0: Float[Array, " k"], *, period: int = 1, rtol: float | None = None,
                  atol: float | None = None, max_steps: int = 40, options: StanceTolerances = StanceTolerances(),
                  throw: bool = True) -> PeriodicGait:
    r"""Find a periodic gait of `walker`: a root of $P^p(x) - x$ by Newton's method (optimistix), from `x0`.

    The Jacobian of $P^p$ comes from forward-mode differentiation through the steps (events included); the
    linear solves are unrolled (no LAPACK under ``vmap``). Derivatives of ``x*`` with respect to the walker's
    parameters follow from the implicit-function theorem (``optx.ImplicitAdjoint``):
    $dx*/dp = (I - \partial P^p/\partial x)^{-1} \partial P^p/\partial p$, never from the unrolled iterations.

    The gait carries $\partial P^p/\partial x$ at the returned ``x*`` (its `jacobian`, whose eigenvalues
    :func:`~difimpact.floquet_multipliers` takes). Newton's last Jacobian is at the iterate before ``x*``, one
    step below the tolerances away, and the implicit adjoint gives it no derivative with respect to the
    parameters; so the final pass through the steps at ``x*``, which gives the gait's strides, carries their
    tangents (``jax.jacfwd``), in the same program: the Jacobian at ``x*``, differentiable like ``x*``.

    **Arguments:**

    - `walker`: an :class:`~difimpact.AbstractWalker`; `x0`: the initial guess ``(k,)``, finite and with the
      stance leg above the ground, ``|θ0| < π/2`` (checked where `x0` is concrete: ``ValueError``).
    - `period`: 1 (a fixed point of ``P``) or more (of $P^p$: period doubling).
    - `rtol`, `atol`: Newton's tolerances on ``x`` (default ``max(10⁻¹¹, 100 ε)`` of `x0`'s dtype: ``10⁻¹¹`` in
      float64, ``1.2·10⁻⁵`` in float32, where a stride is no more accurate); `max_steps`: its iteration limit.
    - `options`: :class:`StanceTolerances` of each step.
    - `throw`: raise on failure; with ``throw=False`` read `result` instead (a batch is then never stopped by
      one member).

    **Returns:** a :class:`PeriodicGait`. Under ``jit``, ``vmap`` and ``jax.jacfwd``; ``jax.grad`` with
    ``options.adjoint = diffrax.DirectAdjoint()``. A failed gait (see `result`) has finite, meaningless values
    and meaningless derivatives; with ``throw=False`` it raises under ``jax.jacfwd`` no more than without.

    **Example:**

    ```python
    import jax.numpy as jnp
    import difimpact as di

    walker = di.SimplestWalker(0.009)                            # Garcia et al. 1998: slope 0.009 rad, g = l = 1
    gait = di.periodic_gait(walker, jnp.array([-0.2, 0.2, 0.016]))
    print(gait.result == di.GaitResults.successful, gait.x)      # True [-0.20031 0.19983 0.01582]: the long gait
    print(abs(di.floquet_multipliers(gait)))                     # [0. 0.589 0.589]: inside the unit circle, stable
    ```
    """
    x0, rtol, atol, max_steps = _checked_arguments(walker, x0, period, rtol, atol, max_steps, options, throw)

    def residual(x, w):
        strides, result = _steps(w, x, period, options)
        return strides.x[-1] - x, None, result

    sol = newton(residual, x0, walker, rtol=rtol, atol=atol, max_steps=max_steps)
    jacobian, (strides, step_result) = _linearised_steps(walker, sol.value, period, options)
    # A failed step is reported first: Newton may "converge" onto the meaningless state of a fall.
    result = GaitResults.where(
        step_result != GaitResults.successful, step_result,
        GaitResults.where(sol.result == optx.RESULTS.successful, GaitResults.successful, GaitResults.no_fixed_point))
    out = PeriodicGait(x=sol.value, strides=strides, result=result, num_steps=sol.stats["num_steps"],
                       jacobian=jacobian, options=options, period=period)
    return result_check(out, result, result != GaitResults.successful) if throw else out
