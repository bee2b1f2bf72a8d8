r"""``solve_nlp``: a nonlinear program solved by the interior-point method of :mod:`.interior_point`, with the
derivative of its solution by the implicit function theorem.

At a solution the primal-dual optimality conditions of the barrier problem hold,

$$F(y, λ; p) = \begin{bmatrix} ∇_y f(y; p) + ∇_y h(y; p)^T λ - z_L + z_U \\ h(y; p)\end{bmatrix} = 0,$$

and with the bound multipliers eliminated (``Σ``) their Jacobian is the Newton matrix ``K`` of the last
iteration without regularisation. The derivative of the solution with respect to the parameters ``p`` is
$\partial (y, \lambda)/\partial p = -K^{-1} \partial F/\partial p$, so a reverse-mode pass solves one system
``K [v; w] = [\bar y; 0]`` and returns $\bar p = -(\partial F/\partial p)^T [v; w]$ — never by differentiating the
iterations (Fiacco, *Introduction to Sensitivity and Stability Analysis in Nonlinear Programming*, 1983, Thm. 3.2.2;
Amos & Kolter, *OptNet*, 2017, §3).
"""

import dataclasses
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Float, Scalar
from .._validation import as_float, check, flag, ordered
from . import newton
from .arguments import checked_x0, sizes, Separate
from .batching import member_by_member
from .interior_point import initial_point, linearise, newton_solve, Scaled, solve
from .sparsity import hessian, Sparsity, values_and_jacobians
from .solution import NLPOptions, NLPResults, NLPSolution


def _bounds(name, value, size, default, dtype):
    """`value` (``None``: `default`; a scalar or ``(size,)``) as a ``(size,)`` array (its values are checked by
    :func:`~difimpact._validation.ordered`)."""
    if value is None:
        return jnp.full((size,), default, dtype)
    value = as_float(name, value, finite=False)
    if value.shape not in ((), (size,)):
        raise ValueError(f"`{name}` must be a scalar or shape ({size},), got {value.shape}.")
    return jnp.broadcast_to(value, (size,)).astype(dtype)


def _relaxed(lower, upper, factor):
    r"""The bounds relaxed outward, $l \leftarrow l - ε \max(1, |l|)$ and $u \leftarrow u + ε \max(1, |u|)$ with
    ``ε`` = `factor` (Wächter & Biegler 2006, §3.5): a bound that an equality also imposes (a variable fixed at its
    bound) would leave the barrier problem no strict interior, and its slack, cut by the fraction-to-the-boundary
    rule at every iteration, would make the Newton matrix singular."""
    move = lambda b: factor * jnp.maximum(1.0, jnp.abs(jnp.where(jnp.isfinite(b), b, 0.0)))  # noqa: E731
    return lower - move(lower), upper + move(upper)


class _Scaling(eqx.Module):
    """Constant factors of the objective (`f`) and of each equality (`c`) and inequality (`d`) row."""

    f: Scalar
    c: Float[Array, " mc"]
    d: Float[Array, " md"]

    def rows(self):
        return jnp.concatenate([self.c, self.d])


def _scaling(jacobians, options: NLPOptions) -> _Scaling:
    r"""IPOPT's gradient-based scaling (``nlp_scaling_method = gradient-based``; Wächter & Biegler 2006, §3.8)
    from the `jacobians` ``(∇f, J_c, J_d)`` at the start:
    the objective and each constraint row scaled by $\max(10^{-8}, \min(1, g_{max} / \|∇(\cdot)(x_0)\|_∞))$,
    ``g_max`` = `max_gradient`: scaled down where their gradient at the start is steep, never up; the constraints
    only with `scale_constraints`."""
    g, Jc, Jd = jacobians

    def factor(steepest):
        return jnp.clip(options.max_gradient / jnp.maximum(steepest, 1e-300), 1e-8, 1.0)

    rows = (lambda J: factor(J.row_abs_max())) if options.scale_constraints else (
        lambda J: jnp.ones(J.shape[0], g.dtype))
    return jax.lax.stop_gradient(_Scaling(factor(jnp.max(jnp.abs(g), initial=0.0)), rows(Jc), rows(Jd)))


def _evaluations(problem: "_Problem", p, x0, x_start, options: NLPOptions):
    """The scaling (:func:`_scaling`) from the derivatives at `x0`, ``d(x0)``, and the scaled problem's values
    and derivatives at `x_start` (the first iterate's, for :func:`.interior_point.linearise`): the functions and
    their derivatives traced once, a ``scan`` over the two points (the first unscaled: factors of one)."""
    dtype = x0.dtype
    one = _Scaling(jnp.ones((), dtype), jnp.ones(problem.m[0], dtype), jnp.ones(problem.m[1], dtype))

    def body(sc, point):
        i, x = point
        sp = problem.scaled(p, sc, x, x)
        value, jac = values_and_jacobians(sp.f, sp.cd, x, problem.sparsity)
        return jax.tree.map(lambda a, b: jnp.where(i == 0, a, b), _scaling(jac, options), sc), (value, jac)

    sc, (value, jac) = jax.lax.scan(body, one, (jnp.arange(2), jnp.stack([x0, x_start])))
    return jax.lax.stop_gradient(sc), value[2][0], jax.tree.map(lambda a: a[1], (value, jac))


class _Problem(eqx.Module):
    """The user's functions of ``(x, p)``: the objective and `constraints`, ``(c, d)`` from one evaluation;
    :meth:`cd` always returns two vectors (empty where there are none)."""

    objective: Callable = eqx.field(static=True)
    constraints: Callable = eqx.field(static=True)
    sparsity: Sparsity | None = eqx.field(static=True)
    n: int = eqx.field(static=True)
    m: tuple[int, int] = eqx.field(static=True)  # the numbers of equalities and of inequalities

    joint: Callable | None = eqx.field(static=True, default=None)  # ``(x, p) -> (f, (c, d))``, or None

    def cd(self, x, p):
        return _vectors(x, self.constraints(x, p))

    def scaled(self, p, sc: _Scaling, lower, upper) -> Scaled:
        """The problem the iterations solve: `lower` and `upper` (over ``y = (x, s)``) already scaled."""

        def cd(x):
            c, d = self.cd(x, p)
            return sc.c * c, sc.d * d

        def joint(x):
            f, (c, d) = self.joint(x, p)
            c, d = _vectors(x, (c, d))
            return sc.f * f, (sc.c * c, sc.d * d)

        return Scaled(lambda x: sc.f * self.objective(x, p), cd, self.n, self.sparsity, lower, upper,
                      jnp.isfinite(lower), jnp.isfinite(upper), None if self.joint is None else joint)


def _vectors(x, cd):
    return tuple(jnp.zeros((0,), x.dtype) if v is None else jnp.atleast_1d(v) for v in cd)


def _run(problem: _Problem, options: NLPOptions, p, x0, d_bounds, lower, upper):
    """The solve from `x0` (the slacks from ``d(x0)`` within `d_bounds`) within `lower`, `upper` (unscaled; the
    slacks are those of the scaled rows)."""
    x_start = initial_point(lower[: problem.n], upper[: problem.n], x0, options)
    sc, d0, evaluated = _evaluations(problem, p, x0, x_start, options)
    y0 = jnp.concatenate([x0, jnp.clip(d0, *d_bounds)])
    y_scale = jnp.concatenate([jnp.ones(problem.n, y0.dtype), sc.d])
    sp = problem.scaled(p, sc, lower * y_scale, upper * y_scale)
    m = jax.eval_shape(sp.h, y0).shape[0]
    s = solve(sp, y0 * y_scale, m, options, evaluated)
    return s, sc, jnp.max(jnp.abs(s.h / sc.rows()), initial=0.0)  # the violation, unscaled


def _make_core(problem: _Problem, options: NLPOptions):
    dynamic, static = eqx.partition(options, eqx.is_array)
    # under vmap on a CPU each member iterates to its own convergence (:mod:`.batching`)
    run = member_by_member(lambda o, *args: _run(problem, eqx.combine(o, static), *args))

    @jax.custom_vjp
    def core(p, x0, d_bounds, lower, upper):
        return run(dynamic, p, x0, d_bounds, lower, upper)

    def fwd(p, x0, d_bounds, lower, upper):
        out = core(p, x0, d_bounds, lower, upper)
        return out, (p, out, (x0, d_bounds, lower, upper))

    def bwd(res, cot):
        p, (s, sc, _), (x0, d_bounds, lower, upper) = res
        y_bar = cot[0].y
        n = problem.n
        y_scale = jnp.concatenate([jnp.ones(n, y_bar.dtype), sc.d])
        sp = problem.scaled(p, sc, lower * y_scale, upper * y_scale)
        lin = linearise(sp, s.y)
        mc = lin.Jc.shape[0]
        W = hessian(sp.f, sp.cd, s.y[:n], s.lam[:mc], s.lam[mc:], problem.sparsity, sp.joint)
        sigma = sp.sigma(s.y, s.zl, s.zu)
        R = newton.factor(W, lin.Jc, lin.Jd, sigma[:n], sigma[n:], 0.0, 0.0, newton.structure(problem.sparsity, mc))
        v, w = newton_solve(R, sp, lin, jnp.concatenate([y_bar, jnp.zeros_like(s.lam)]))

        def residual(q):
            sq = problem.scaled(q, sc, lower * y_scale, upper * y_scale)
            lagrangian = lambda x: sq.f(x) + jnp.concatenate(sq.cd(x)) @ s.lam  # noqa: E731
            gradient = jax.grad(lagrangian)(s.y[:n])
            return gradient, sq.h(s.y)

        _, vjp = jax.vjp(residual, p)
        (p_bar,) = vjp((-v[:n], -w))
        return (p_bar,) + jax.tree.map(jnp.zeros_like, (x0, d_bounds, lower, upper))

    core.defvjp(fwd, bwd)
    return core


def solve_nlp(
    objective: Callable,
    x0: Float[Array, " n"],
    params=None,
    *,
    equality: Callable | None = None,
    inequality: Callable | None = None,
    constraints: Callable | None = None,
    lower=None,
    upper=None,
    inequality_lower=0.0,
    inequality_upper=None,
    sparsity: Sparsity | None = None,
    options: NLPOptions = NLPOptions(),
    throw: bool = True,
) -> NLPSolution:
    r"""Solve ``min f(x; p)`` subject to ``c(x; p) = 0``, ``d_l ≤ d(x; p) ≤ d_u`` and ``x_l ≤ x ≤ x_u`` by a
    primal-dual interior-point method (after IPOPT; :mod:`difimpact._nlp.interior_point`) that runs under
    ``jit`` and ``vmap``, with exact Hessians of the Lagrangian by automatic differentiation.

    ``jax.grad`` of anything computed from the solution ``x`` with respect to `params` is exact at the solution:
    the implicit function theorem on the optimality conditions (one linear solve), not differentiation through
    the iterations. The multipliers are returned but not differentiated.

    **Arguments:**

    - `objective`: ``f(x, params) -> scalar``.
    - `x0`: the starting point ``(n,)``; moved inside its bounds if needed.
    - `params`: any pytree of arrays the functions read (what gradients are taken with respect to).
    - `equality`: ``c(x, params) -> (m,)``, or ``None``.
    - `inequality`: ``d(x, params) -> (k,)``, or ``None``; with `inequality_lower` (default 0) and
      `inequality_upper` (default none), scalars or ``(k,)`` arrays, ``±inf`` for no bound.
    - `constraints`: ``(x, params) -> (c, d)`` (either ``None``), instead of `equality` and `inequality`: both
      kinds from one evaluation, so that the work they share (a model's dynamics at every collocation point) is
      traced, compiled and run once, not once per kind and again in each derivative.
    - `lower`, `upper`: bounds on ``x``, scalars or ``(n,)`` arrays, ``±inf`` (or ``None``) for none. They are not
      differentiated.
    - `sparsity`: the derivatives' sparsity (:class:`~difimpact._nlp.sparsity.Sparsity`) or ``None`` (dense
      derivatives by automatic differentiation).
    - `options`: :class:`NLPOptions`.
    - `throw`: raise on a failed solve with the reason (else return it in ``result``; under ``vmap`` the
      members' results say which failed).

    **Returns:** an :class:`NLPSolution`.

    **Example:**

    ```python
    import jax, jax.numpy as jnp
    import difimpact as di

    f = lambda x, p: (x[0] - p) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2     # Rosenbrock's valley, lowest at (p, p²)
    solve = lambda p: di.solve_nlp(f, jnp.zeros(2), p, inequality=lambda x, p: 1.5 - x @ x)   # inside x·x ≤ 1.5
    sol = solve(1.0)
    print(sol.x, sol.value)                         # [0.9072 0.8228] 0.00862: on the circle x·x = 1.5
    print(jax.grad(lambda p: solve(p).value)(1.0))  # 0.1855 = 2 (p − x₀): the implicit function theorem
    ```
    """
    return solve_nlp_prechecked(objective, x0, params, equality=equality, inequality=inequality,
                                constraints=constraints, lower=lower, upper=upper, inequality_lower=inequality_lower,
                                inequality_upper=inequality_upper, sparsity=sparsity, options=options, throw=throw,
                                checked=False)


def solve_nlp_prechecked(objective, x0, params, *, equality, inequality, constraints, lower, upper,
                         inequality_lower, inequality_upper, sparsity, options, throw,
                         checked: bool, joint: Callable | None = None) -> NLPSolution:
    """:func:`solve_nlp`. With `checked`, the values of `x0` and of the bounds were checked by the caller before
    its program (:func:`all_bounds` at its Python edge): the program holds no run-time check of them, which would
    be a host callback (and JAX's persistent compilation cache stores no program with one). `joint`, where given,
    is ``(x, params) -> (f, (c, d))``: `objective` and `constraints` from one evaluation, which the Hessian of the
    Lagrangian differentiates (the work the two share, e.g. a cost of the forces the dynamics give, then
    differentiated once)."""
    x0 = checked_x0(objective, x0, equality, inequality, constraints, sparsity, options, finite=not checked)
    n, dtype = x0.shape[0], x0.dtype
    options = _tolerance(options, dtype)
    constraints = Separate(equality, inequality) if constraints is None else constraints
    problem = _Problem(objective, constraints, sparsity, n, sizes(objective, constraints, x0, params), joint)
    xl, xu, dl, du = all_bounds(lower, upper, inequality_lower, inequality_upper, n, problem.m[1], dtype,
                                 check_values=not checked)
    lower_y, upper_y = _relaxed(jnp.concatenate([xl, dl]), jnp.concatenate([xu, du]), options.bound_relax_factor)
    s, sc, violation = _make_core(problem, options)(params, x0, (dl, du), lower_y, upper_y)
    x = s.y[:n] + jax.lax.stop_gradient(jnp.clip(s.y[:n], xl, xu) - s.y[:n])  # the original bounds honoured
    sol = NLPSolution(x=x, value=objective(x, params), multipliers=s.lam * sc.rows() / sc.f,
                      bound_multipliers=(s.zl - s.zu)[:n] / sc.f, constraint_violation=jax.lax.stop_gradient(violation),
                      optimality_error=s.error, iterations=jax.lax.stop_gradient(s.step),
                      result=jax.lax.stop_gradient(s.result))
    if flag("throw", throw):
        sol = sol.result.error_if(sol, sol.result != NLPResults.successful)
    return sol


def all_bounds(lower, upper, inequality_lower, inequality_upper, n: int, k: int, dtype, *,
                check_values: bool = True):
    """The variables' and the inequalities' bounds as vectors, checked: their shapes and, with `check_values`,
    their values (order, a finite bound for every inequality; in Python where they are concrete, else at run
    time)."""
    xl, xu = _bounds("lower", lower, n, -jnp.inf, dtype), _bounds("upper", upper, n, jnp.inf, dtype)
    xl = ordered(xl, xu, ("lower", "upper")) if check_values else xl
    dl = _bounds("inequality_lower", inequality_lower, k, -jnp.inf, dtype)
    du = _bounds("inequality_upper", inequality_upper, k, jnp.inf, dtype)
    if check_values:
        dl = ordered(dl, du, ("inequality_lower", "inequality_upper"))
        dl = check(dl, ~(jnp.isfinite(dl) | jnp.isfinite(du)), "every inequality needs a finite bound: "
                   "`inequality_lower` or `inequality_upper`.")
    return xl, xu, dl, du


def _tolerance(options: NLPOptions, dtype) -> NLPOptions:
    """`options` with `tol` for `dtype`: ``None`` becomes ``max(1e-9, 100 ε)``; a number below ``10 ε``, which
    the iterations cannot reach in that precision (they would run to `max_steps`), is refused."""
    eps = float(jnp.finfo(dtype).eps)
    if options.tol is None:
        return dataclasses.replace(options, tol=max(1e-9, 100 * eps))
    if isinstance(options.tol, jax.core.Tracer):
        return options
    tol = np.asarray(options.tol)
    if np.any(tol < 10 * eps):
        raise ValueError(f"`options.tol` = {tol.min():g} is below what {jnp.dtype(dtype).name} resolves "
                         f"(10 ε = {10 * eps:.1e}): the optimality error cannot get there. Use "
                         f"`tol` ≥ {100 * eps:.1e} (or `tol=None`, the default, which picks it), or float64.")
    return options



def problem_bounds(problem, z0):
    """`all_bounds` of a transcribed problem with ``variable_bounds(dtype)`` and ``inequality_bounds(dtype)``
    (the latter ``(None, None)`` without inequalities), at the start `z0`."""
    lower, upper = problem.variable_bounds(z0.dtype)
    d_lo, d_hi = problem.inequality_bounds(z0.dtype)
    k = 0 if d_lo is None else d_lo.shape[0]
    return all_bounds(lower, upper, 0.0 if d_lo is None else d_lo, d_hi, z0.shape[0], k, z0.dtype)
