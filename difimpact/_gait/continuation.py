"""Pseudo-arclength continuation of periodic gaits in one parameter: folds, period doublings and the loss of
the trailing foot's lift-off, located on the branch; switching to the period-2 branch at a period doubling."""

import dataclasses
from typing import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from .._check import program
from .._linalg import full_precision
from .._validation import count, flag, instance, tolerance
from .._models.walker import AbstractWalker
from .branch import BranchPoint, first_failure, GaitBranch
from .detect import _TESTS, _lift_off_test, _locate
from .fixed_point import checked_guess, newton
from .stability import multipliers
from .stride import GaitResults, StanceTolerances, stride


class _Steps(eqx.Module):
    """The `period` steps from a section state: the state `x` after them, each step's start `states` and
    `step_times` (``slots`` rows, the first `period` filled), the summed `step_length` and `energy_loss`, the
    smallest `trailing_velocity` and the `result` of the first step that failed."""

    x: jax.Array
    states: jax.Array
    step_times: jax.Array
    step_length: jax.Array
    energy_loss: jax.Array
    trailing_velocity: jax.Array
    result: GaitResults


class _Problem(eqx.Module):
    """The corrector's arguments: the walker family, the prediction `y_pred`, the `normal` of the hyperplane
    ``normalᵀ (y − y_pred) = 0`` and the `period` (traced)."""

    make_walker: Callable
    y_pred: jax.Array
    normal: jax.Array
    period: jax.Array


class _Correction(eqx.Module):
    """A corrected point ``y = (x, p)``: the Jacobian $[\\partial P^k/\\partial x - I, \\partial P^k/\\partial p]$
    of $F(y) = P^k(x; p) - x$ (Newton's last, forward mode through the steps), the `multipliers`, the steps'
    data and the outcome."""

    y: jax.Array
    jacobian: jax.Array
    multipliers: jax.Array
    steps: _Steps
    result: GaitResults
    num_steps: jax.Array


def _period(walker, x, period, slots, options) -> _Steps:
    """The `period` steps from `x` in a loop with a traced trip count, so that every period up to `slots`
    shares one compilation (one stride in the graph)."""

    def step(i, s: _Steps) -> _Steps:
        out = stride(walker, s.x, options=options, throw=False)
        return _Steps(out.x, s.states.at[i].set(s.x), s.step_times.at[i].set(out.step_time),
                      s.step_length + out.step_length, s.energy_loss + out.energy_loss,
                      jnp.minimum(s.trailing_velocity, out.trailing_velocity),
                      GaitResults.where(s.result == GaitResults.successful, out.result, s.result))

    zero = jnp.zeros((), x.dtype)
    start = _Steps(x, jnp.zeros((slots,) + x.shape, x.dtype), jnp.zeros(slots, x.dtype), zero, zero, zero + jnp.inf,
                   GaitResults.successful)
    return jax.lax.fori_loop(0, period, step, start)


@program
@full_precision
def _correct(make_walker, y_pred, normal, period, slots, options, tol, max_steps) -> _Correction:
    r"""Newton's method of :func:`~difimpact.periodic_gait` (:func:`~difimpact._gait.fixed_point.newton`) on the
    augmented system ``F(y) = 0``, ``normalᵀ (y − y_pred) = 0`` from ``y_pred``, stopping at the first failed
    step. The point returned is Newton's last iterate, so the Jacobian and the data belong to it. An entry point's
    program (:func:`difimpact._check.program`): no host callback, so JAX's persistent cache keeps it; a check that
    fails inside Newton's loop (a walker of the family out of its range at some ``p``) makes that iterate NaN, and the
    corrector fails there, ending the branch with its result."""

    def residual(y, problem: _Problem):
        x = y[:-1]
        steps = _period(problem.make_walker(y[-1]), x, problem.period, slots, options)
        return jnp.append(steps.x - x, problem.normal @ (y - problem.y_pred)), steps, steps.result

    sol = newton(residual, y_pred, _Problem(make_walker, y_pred, normal, period), rtol=tol, atol=tol,
                 max_steps=max_steps, stop_on_failure=True)
    last, k = sol.aux, y_pred.shape[0] - 1
    failed = GaitResults.where(last.result == GaitResults.successful, GaitResults.no_fixed_point, last.result)
    result = GaitResults.where(sol.result == optx.RESULTS.successful, GaitResults.successful, failed)
    jacobian = last.jacobian[:k]
    return _Correction(last.y, jacobian, multipliers(jacobian[:, :k] + jnp.eye(k, dtype=jacobian.dtype)), last.data,
                       result, sol.stats["num_steps"])


_TOL, _NEWTON_STEPS = 1e-11, 12  # the corrector's tolerances (rtol = atol) and iteration limit
_COLLAPSE = 1e-7  # a period-k gait whose states repeat within this (relative) has a shorter period


@dataclasses.dataclass
class _Node:
    """A point on the arc: `y = (x, p)`, `DF`, the unit `tangent` and the :class:`BranchPoint`."""

    y: np.ndarray
    jacobian: np.ndarray
    tangent: np.ndarray
    point: BranchPoint


@dataclasses.dataclass(frozen=True)
class _Branch:
    """The fixed problem of one branch: walker family, period and solver settings."""

    make_walker: Callable
    period: int
    options: StanceTolerances

    def correct(self, y_pred, normal, orient):
        """The corrected point nearest `y_pred` on ``normalᵀ (y − y_pred) = 0`` with its tangent oriented by
        `orient`, or ``(None, result)``."""
        slots = 1 << max(1, (self.period - 1).bit_length())  # periods 1 and 2 share one compilation
        c = _correct(self.make_walker, jnp.asarray(y_pred, float), jnp.asarray(normal, float),
                     jnp.asarray(self.period), slots, self.options, _TOL, _NEWTON_STEPS)
        if c.result != GaitResults.successful:
            return None, c.result
        states = np.asarray(c.steps.states)[: self.period]
        if self.period > 1 and any(np.max(np.abs(states[d] - states[0])) <= _COLLAPSE * (1 + np.max(np.abs(states)))
                                   for d in range(1, self.period) if self.period % d == 0):
            return None, GaitResults.no_fixed_point  # a gait of a shorter period: not on this branch
        y, jacobian = np.asarray(c.y), np.asarray(c.jacobian)
        k = y.shape[0] - 1
        # Allgower & Georg (1990), §2.1: the tangent solves [DF; orientᵀ] t = e_{k+1}, so orientᵀ t > 0.
        t = np.linalg.solve(np.vstack([jacobian, orient]), np.eye(k + 1)[-1])
        times = np.asarray(c.steps.step_times)[: self.period]
        length = float(c.steps.step_length)
        point = BranchPoint(float(y[-1]), y[:-1], np.asarray(c.multipliers), float(np.mean(times)),
                            length / self.period, length / float(np.sum(times)),
                            float(c.steps.energy_loss) / self.period, float(c.steps.trailing_velocity), self.period,
                            times, "orbit", states)
        return _Node(y, jacobian, t / np.linalg.norm(t), point), c.result

    def along(self, a: _Node, s):
        """The corrected point at arclength `s` from `a` along its tangent (Keller's pseudo-arclength condition
        ``t_aᵀ (y − y_a) = s``)."""
        return self.correct(a.y + s * a.tangent, a.tangent, a.tangent)[0]

    def at_parameter(self, a: _Node, b: _Node, p):
        """The corrected point at parameter `p` between `a` and `b` (natural-parameter corrector), or ``None``, and
        the result."""
        w = (p - a.y[-1]) / (b.y[-1] - a.y[-1])
        y_pred = (1 - w) * a.y + w * b.y
        y_pred[-1] = p  # exactly: the corrector keeps the parameter of its prediction
        normal = np.eye(a.y.shape[0])[-1]
        return self.correct(y_pred, normal, a.tangent)


def _switch(branch, pd: _Node, lo, hi, step, min_step, max_step, max_points, bisections):
    """The period-2 branch born at the period doubling `pd`: Newton on ``P²(x) = x`` on the hyperplane
    ``vᵀ (x − x_pd) = ε`` (``v`` the eigenvector of the multiplier −1: the period-2 cycle born in a flip
    bifurcation grows along ``v``, Kuznetsov 2004, *Elements of Applied Bifurcation Theory*, §4.4), then
    continued away from `pd`. The cycle's two states lie on either side of ``x_pd``, so ``ε`` is tried with both
    signs: ``v``'s own sign is the eigensolver's choice, which rounding can flip, and Newton may fail from one
    side (the walker falls, or no convergence)."""
    k = pd.y.shape[0] - 1
    lam, vecs = np.linalg.eig(pd.jacobian[:, :k] + np.eye(k))
    v = np.append(np.real(vecs[:, np.argmin(np.abs(lam + 1))]), 0.0)
    v /= np.linalg.norm(v)
    double, result = dataclasses.replace(branch, period=2 * branch.period), GaitResults.no_fixed_point
    for eps in (1e-2, -1e-2, 3e-3, -3e-3, 3e-2, -3e-2):
        start, result = double.correct(pd.y + eps * v, v, np.sign(eps) * v)  # tangent away from x_pd
        if start is not None:  # first steps of the size of ε: the new branch's states still lie close together
            return _trace(double, start, min(abs(eps), step), lo, hi, min_step, max_step, max_points, bisections,
                          False)
    return GaitBranch([], result)


def _trace(branch, a, h, lo, hi, min_step, max_step, max_points, bisections, switch) -> GaitBranch:
    """Pseudo-arclength continuation from node `a` along its tangent while ``lo ≤ p ≤ hi``, with the first
    failure met (a corrector that fails at `min_step`, a period-2 cycle not found or its branch failing)."""
    points, doubled, failures = [a.point], [], []
    while len(points) < max_points:
        b, result = branch.correct(a.y + h * a.tangent, a.tangent, a.tangent)
        if b is not None and a.tangent @ b.tangent < 0.95 and h / 2 >= min_step:
            b = None  # the tangent turned by more than 18°: the step is too long to follow the branch
        if b is None:
            if result == GaitResults.trailing_foot_stays:
                end = _locate(branch, a, h, _lift_off_test(a), None, _lift_off_test, bisections)
                points.append(dataclasses.replace((end or a).point, kind="lift-off"))
                break
            if h / 2 < min_step:
                failures.append(result)
                break
            h /= 2
            continue
        outside = not lo <= b.y[-1] <= hi
        if outside:
            b, result = branch.at_parameter(a, b, hi if b.y[-1] > hi else lo)
            if b is None:
                failures.append(result)
                break
        s_b = a.tangent @ (b.y - a.y)
        for kind, test in _TESTS.items():
            f_a, f_b = test(a), test(b)
            if np.sign(f_a) != np.sign(f_b):
                hit = _locate(branch, a, s_b, f_a, f_b, test, bisections)
                if hit is not None:
                    points.append(dataclasses.replace(hit.point, kind=kind))
                    if kind == "period-doubling" and switch:
                        more = _switch(branch, hit, lo, hi, h, min_step, max_step, max_points, bisections)
                        doubled, failures = doubled + more, failures + [more.result]
        points.append(b.point)
        if outside:
            break
        a, h = b, min(1.5 * h, max_step)
    return GaitBranch(points + doubled, first_failure(*failures))


def _arc_steps(p0, p1, step, min_step, max_step) -> tuple[float, float, float]:
    """The first, least and largest arclength steps (by default ``|p1 − p0| / 20``, 1/256 and 4 times it), after
    checking them and the range ``p0 … p1``."""
    if not np.isfinite(p0) or not np.isfinite(p1) or p0 == p1:
        raise ValueError(f"`p0` and `p1` must be finite and different, got {p0!r} and {p1!r}.")
    step = abs(p1 - p0) / 20 if step is None else tolerance("step", abs(float(step)))
    min_step = step / 256 if min_step is None else tolerance("min_step", min_step)
    max_step = 4 * step if max_step is None else tolerance("max_step", max_step)
    if not min_step <= step <= max_step:
        raise ValueError(f"need `min_step` ≤ |`step`| ≤ `max_step`, got {min_step!r}, {step!r}, {max_step!r}.")
    return step, min_step, max_step


def _check(make_walker, x0, p, options, period):
    """`x0` as a float vector, after checking `options`, `period` and that ``make_walker(p)`` is a walker whose
    section it fits."""
    if isinstance(period, bool) or not isinstance(period, int) or period < 1:
        raise ValueError(f"`period` must be a positive integer, got {period!r}.")
    instance("options", options, StanceTolerances, "di.StanceTolerances()")
    walker = make_walker(p) if callable(make_walker) else None
    if not isinstance(walker, AbstractWalker):
        raise TypeError(f"`make_walker` must map a parameter to an AbstractWalker, got {make_walker!r}.")
    x0 = np.asarray(x0, dtype=float)
    if x0.shape != (walker.section_size,):
        raise ValueError(f"`x0` must have shape ({walker.section_size},) = {walker.section_names}, got {x0.shape}.")
    return checked_guess(walker, x0)


def continue_gait(make_walker: Callable[[jax.Array], AbstractWalker], x0, p0: float, p1: float, *,
                  period: int = 1, step: float | None = None, min_step: float | None = None,
                  max_step: float | None = None, max_points: int = 200, bisections: int = 20, switch: bool = True,
                  options: StanceTolerances = StanceTolerances(), throw: bool = True) -> GaitBranch:
    r"""Follow the periodic gait of ``make_walker(p)`` from ``p0`` (Newton from `x0`) toward ``p1``, by
    pseudo-arclength continuation of the curve $F(x, p) = P^k(x; p) - x = 0$ in ``y = (x, p)``.

    **Predictor**: a step ``h`` along the unit tangent ``t``, the null vector of
    $DF = [\partial P^k/\partial x - I, \partial P^k/\partial p]$ oriented by the previous tangent
    (``[DF; t_prevᵀ] t = e_{k+1}``, so ``t_prevᵀ t > 0``). **Corrector**: Newton's method on ``F(y) = 0``,
    ``tᵀ (y − y_prev) = h`` (Keller's pseudo-arclength condition), with ``DF`` by forward-mode differentiation through
    the steps and the unrolled LU solve, jitted once for all points (and shared by periods 1 and 2) (Keller 1977;
    Allgower & Georg 1990, *Numerical Continuation Methods*, ch. 2; Seydel 2010, *Practical Bifurcation and Stability
    Analysis*). Unlike continuation in ``p`` itself this passes turning points. **Step control**: ``h`` halves when the
    corrector fails or the tangent turns by more than 18° (down to `min_step`) and grows by 1.5 after a success (up to
    `max_step`).

    **Test functions** between consecutive points, each zero located on the arc by the Illinois regula falsi in
    the arclength from the earlier point (at most `bisections` corrections) and inserted as a point of that
    `kind` (Kuznetsov 2004, *Elements of Applied Bifurcation Theory*, §10.2):

    - ``"fold"``: the tangent's ``p`` component changes sign — a multiplier crosses +1
      ($det(I - \partial P^k/\partial x)$ changes sign with it); the continuation goes on along the other branch;
    - ``"period-doubling"``: $det(\partial P^k/\partial x + I)$ changes sign — a real multiplier crosses −1. With
      `switch`, the period-``2k`` branch born there is found by Newton on $P^{2k}(x) = x$ at ``x + ε v`` (``v`` the
      eigenvector of −1) and continued away from it (no further switching);
    - ``"lift-off"``: the trailing foot's post-impact normal velocity reaches zero. Beyond it the step ends in
      double support (:attr:`GaitResults.trailing_foot_stays`), so the boundary is found by bisection between
      the last gait and the failed corrector, and the branch ends there.

    The branch also ends where it leaves ``[min(p0, p1), max(p0, p1)]`` (the last point lies exactly on the
    bound, by a corrector in ``p``) or after `max_points` points. A computation that fails is reported, not
    raised, with ``throw=False``: no gait at `p0` (an empty branch), a corrector that fails at `min_step` (the
    branch ends there), no period-2 cycle found at a period doubling; the branch's `result` is the first such
    failure (a :class:`GaitResults` item: ``no_fixed_point``, ``fell_backward``, …).
    Eigenvalues and tangents use NumPy outside any ``vmap``.

    **Arguments:**

    - `make_walker`: ``p ↦`` an :class:`~difimpact.AbstractWalker`; a function (held static by the jit) or a
      pytree such as ``jax.tree_util.Partial`` whose array leaves are traced, so that families differing only in
      those arrays share one compilation.
    - `x0`: guess of the fixed point at `p0` (finite, the stance leg above the ground: ``|θ0| < π/2``); `p0`,
      `p1`: start and end of the parameter range.
    - `period`: ``k``, the number of steps of the gait.
    - `step`: first arclength step ``‖Δ(x, p)‖`` (default ``|p1 − p0| / 20``; its sign is ignored); `min_step`
      (default ``|step| / 256``), `max_step` (default ``4 |step|``).
    - `max_points`: points per branch; `bisections`: corrections per located point.
    - `switch`: follow the period-2 branch at each period doubling.
    - `options`: :class:`StanceTolerances` of the steps.
    - `throw`: raise ``EquinoxRuntimeError`` on a failure, with its `result`'s message; with ``throw=False``
      read the branch's `result` instead.

    **Returns:** a :class:`GaitBranch`: the branch points in arclength order (a list), located points
    included; each period-2 branch follows the whole period-1 branch, its points with ``period = 2k``; and
    its `result`. Inputs that are not valid raise ``ValueError`` or ``TypeError`` whatever `throw`.

    **Example:**

    ```python
    import jax.numpy as jnp
    import difimpact as di

    x0 = jnp.array([-0.2, 0.2, 0.016])                           # near the simplest walker's long gait at 0.009 rad
    branch = di.continue_gait(di.SimplestWalker, x0, 0.009, 0.012, step=0.001)   # in the slope, 0.009 → 0.012 rad
    print([(round(float(b.p), 4), round(float(b.speed), 4)) for b in branch[::3]])
    # [(0.009, 0.1025), (0.0095, 0.1042), (0.0107, 0.1082), (0.012, 0.112)]: faster down steeper slopes
    ```
    """
    step, min_step, max_step = _arc_steps(p0, p1, step, min_step, max_step)
    x0 = _check(make_walker, x0, p0, options, period)
    max_points, bisections = count("max_points", max_points, minimum=2), count("bisections", bisections)
    branch, throw = _Branch(make_walker, period, options), flag("throw", throw)
    e_p = np.eye(x0.shape[0] + 1)[-1]
    start, result = branch.correct(np.append(x0, p0), e_p, np.sign(p1 - p0) * e_p)
    out = GaitBranch([], result) if start is None else _trace(
        branch, start, step, min(p0, p1), max(p0, p1), min_step, max_step, max_points, bisections, switch)
    if throw:
        out.result.error_if(jnp.zeros(()), out.result != GaitResults.successful)
    return out


def branch_point(make_walker: Callable[[jax.Array], AbstractWalker], x0, p: float, *, period: int = 1,
                 options: StanceTolerances = StanceTolerances()) -> tuple[BranchPoint | None, GaitResults]:
    """The periodic gait of ``make_walker(p)`` from the guess `x0`, with its multipliers: the corrector of
    :func:`continue_gait` at fixed ``p`` (it shares that compilation). Returns ``(point, result)``; `point`
    is `None` when no gait is found, and `result` (a :class:`GaitResults` item) says why."""
    x0 = _check(make_walker, x0, p, options, period)
    branch = _Branch(make_walker, period, options)
    e_p = np.eye(x0.shape[0] + 1)[-1]
    node, result = branch.correct(np.append(x0, p), e_p, e_p)
    return (None if node is None else node.point), result
