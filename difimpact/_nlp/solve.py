r"""``solve_nlp``: a nonlinear program solved by the interior-point method of :mod:`.interior_point`, with the
derivative of its solution by the implicit function theorem.

At a solution the primal-dual optimality conditions of the barrier problem hold,

$$F(y, λ; p) = \begin{bmatrix} ∇_y f(y; p) + ∇_y h(y; p)^T λ - z_L + z_U \\ h(y; p)\end{bmatrix} = 0,$$

and with the bound multipliers eliminated (``Σ``) their Jacobian is the Newton matrix ``K`` of the last
iteration without regularisation. The derivative of the solution with respect to the parameters ``p`` is
``∂(y, λ)/∂p = −K^{-1} ∂F/∂p``, so a reverse-mode pass solves one system ``K [v; w] = [\bar y; 0]`` and returns
``\bar p = −(∂F/∂p)^T [v; w]`` — never by differentiating the iterations (Fiacco, *Introduction to Sensitivity
and Stability Analysis in Nonlinear Programming*, 1983, Thm. 3.2.2; Amos & Kolter, *OptNet*, 2017, §3).
"""

from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Array, Float
from .._validation import as_float, flag, instance
from .dense import lu_factor, lu_solve
from .interior_point import optimality_error, Scaled, solve
from .solution import NLPOptions, NLPResults, NLPSolution


def _bounds(name, value, size, default, dtype):
    if value is None:
        return jnp.full((size,), default, dtype)
    value = jnp.broadcast_to(as_float(name, value, finite=False), (size,)).astype(dtype)
    return value


def _scales(fn, hn, y, max_gradient):
    """IPOPT's gradient-based scaling of the objective: scaled down so that its gradient at the start has
    max-norm at most `max_gradient` (never up); the constraints are not scaled."""
    g = jax.grad(fn)(y)
    sf = jnp.minimum(1.0, max_gradient / jnp.maximum(jnp.max(jnp.abs(g)), 1e-300))
    sc = jnp.ones(jax.eval_shape(hn, y).shape, y.dtype)
    return jax.lax.stop_gradient(sf), sc


class _Problem(eqx.Module):
    """The variables ``y = (x, s)``, ``h(y) = (c(x), d(x) − s)``, unscaled, as functions of ``p``."""

    objective: Callable = eqx.field(static=True)
    equality: Callable | None = eqx.field(static=True)
    inequality: Callable | None = eqx.field(static=True)
    n: int = eqx.field(static=True)

    def f(self, y, p):
        return self.objective(y[: self.n], p)

    def h(self, y, p):
        x, s = y[: self.n], y[self.n:]
        parts = [] if self.equality is None else [jnp.atleast_1d(self.equality(x, p))]
        if self.inequality is not None:
            parts.append(jnp.atleast_1d(self.inequality(x, p)) - s)
        return jnp.concatenate(parts) if parts else jnp.zeros((0,), y.dtype)

    def scaled(self, p, sf, sc, lower, upper) -> Scaled:
        return Scaled(lambda y: sf * self.f(y, p), lambda y: sc * self.h(y, p), lower, upper,
                      jnp.isfinite(lower), jnp.isfinite(upper))


def _kkt_solution(problem: _Problem, options: NLPOptions, p, y0, lower, upper):
    sf, sc = _scales(lambda y: problem.f(y, p), lambda y: problem.h(y, p), y0, options.max_gradient)
    sp = problem.scaled(p, sf, sc, lower, upper)
    m = sc.shape[0]
    s = solve(sp, y0, m, options)
    return s, sf, sc


def _make_core(problem: _Problem, options: NLPOptions):
    @jax.custom_vjp
    def core(p, y0, lower, upper):
        s, sf, sc = _kkt_solution(problem, options, p, y0, lower, upper)
        return s, sf, sc

    def fwd(p, y0, lower, upper):
        out = core(p, y0, lower, upper)
        return out, (p, out, lower, upper)

    def bwd(res, cot):
        p, (s, sf, sc), lower, upper = res
        y_bar = s.y if cot[0].y is None else cot[0].y
        sp = problem.scaled(p, sf, sc, lower, upper)
        lagrangian_gradient = lambda y, q: jax.grad(  # noqa: E731
            lambda z: sf * problem.f(z, q) + s.lam @ (sc * problem.h(z, q)))(y)
        W = jax.jacfwd(lambda y: lagrangian_gradient(y, p))(s.y)
        J = jax.jacfwd(sp.h)(s.y)
        sl, su = sp.slacks(s.y)
        sigma = jnp.where(sp.has_lower, s.zl / sl, 0.0) + jnp.where(sp.has_upper, s.zu / su, 0.0)
        n, m = W.shape[0], J.shape[0]
        K = jnp.block([[W + jnp.diag(sigma), J.T], [J, jnp.zeros((m, m), W.dtype)]])
        vw = lu_solve(lu_factor(K), jnp.concatenate([y_bar, jnp.zeros(m, W.dtype)]))
        v, w = vw[:n], vw[n:]
        _, vjp = jax.vjp(lambda q: (lagrangian_gradient(s.y, q), sc * problem.h(s.y, q)), p)
        (p_bar,) = vjp((-v, -w))
        zero = lambda x: jnp.zeros_like(x)  # noqa: E731
        return p_bar, zero(s.y), zero(lower), zero(upper)

    core.defvjp(fwd, bwd)
    return core


def solve_nlp(
    objective: Callable,
    x0: Float[Array, " n"],
    params=None,
    *,
    equality: Callable | None = None,
    inequality: Callable | None = None,
    lower=None,
    upper=None,
    inequality_lower=0.0,
    inequality_upper=None,
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
    - `lower`, `upper`: bounds on ``x``, scalars or ``(n,)`` arrays, ``±inf`` (or ``None``) for none. They are not
      differentiated.
    - `options`: :class:`NLPOptions`.
    - `throw`: raise on a failed solve with the reason (else return it in ``result``; under ``vmap`` the
      members' results say which failed).

    **Returns:** an :class:`NLPSolution`.
    """
    instance("options", options, NLPOptions)
    if not callable(objective):
        raise TypeError(f"`objective` must be callable f(x, params), got {objective!r}.")
    for name, fn in (("equality", equality), ("inequality", inequality)):
        if fn is not None and not callable(fn):
            raise TypeError(f"`{name}` must be callable or None, got {fn!r}.")
    x0 = as_float("x0", x0)
    if x0.ndim != 1:
        raise ValueError(f"`x0` must be a vector (n,), got shape {x0.shape}.")
    n, dtype = x0.shape[0], x0.dtype
    k = 0 if inequality is None else jax.eval_shape(lambda: jnp.atleast_1d(inequality(x0, params))).shape[0]
    xl, xu = _bounds("lower", lower, n, -jnp.inf, dtype), _bounds("upper", upper, n, jnp.inf, dtype)
    dl = _bounds("inequality_lower", inequality_lower, k, -jnp.inf, dtype)
    du = _bounds("inequality_upper", inequality_upper, k, jnp.inf, dtype)
    problem = _Problem(objective, equality, inequality, n)
    if k:
        d0 = jnp.clip(jnp.atleast_1d(inequality(x0, params)), dl, du)
        y0 = jnp.concatenate([x0, d0])
    else:
        y0 = x0
    lower_y, upper_y = jnp.concatenate([xl, dl]), jnp.concatenate([xu, du])
    s, sf, sc = _make_core(problem, options)(params, y0, lower_y, upper_y)
    x = s.y[:n]
    violation = s.violation
    sol = NLPSolution(x=x, value=objective(x, params), multipliers=s.lam * sc / sf,
                      bound_multipliers=(s.zl - s.zu)[:n] / sf, constraint_violation=violation,
                      optimality_error=s.error, iterations=jax.lax.stop_gradient(s.step),
                      result=jax.lax.stop_gradient(s.result))
    if flag("throw", throw):
        sol = sol.result.error_if(sol, sol.result != NLPResults.successful)
    return sol
