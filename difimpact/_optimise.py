r"""A small optax driver for bound- and inequality-constrained minimisation.

Problem: minimise ``f(x)`` over a pytree ``x`` with ``lower ≤ x ≤ upper`` and ``g(x) ≤ 0`` (vector ``g``).

- **Bounds by projection** after every optimiser step (``optax.projections.projection_box``): a projected
  gradient method. Chosen over a sigmoid reparametrisation because the optima of impact problems often sit
  *on* a bound (Font & Kövecses 2008: torso aligned with the stance leg, ``q5 = 0``), which projection reaches exactly
  in finitely many steps while a sigmoid reaches it only asymptotically, with a vanishing gradient.
- **Inequalities by an augmented Lagrangian** (Powell–Hestenes–Rockafellar; Nocedal & Wright, *Numerical
  Optimization*, 2nd ed., 2006, eq. 17.65):

  $$\mathcal L_\rho(x, \lambda) = f(x) + \frac{1}{2\rho}\sum_i
    \left(\max(0, \lambda_i + \rho\, g_i(x))^2 - \lambda_i^2\right),\qquad
    \lambda_i \leftarrow \max(0, \lambda_i + \rho\, g_i(x))$$

  minimised by ``steps`` optimiser steps per round, the multipliers updated between ``rounds``. Chosen over
  a plain quadratic penalty, which leaves the optimum infeasible by ``O(λ/ρ)`` and needs ``ρ → ∞`` (an
  ill-conditioned objective) to satisfy an active constraint; the augmented Lagrangian satisfies it at a
  finite ``ρ`` and returns the multipliers ``λ`` (the sensitivity of the optimum to each constraint).
  Scale ``g`` to O(1) (divide by a typical magnitude) so that one ``ρ`` suits all constraints.

The whole run is one ``lax.scan`` over the ``rounds · steps`` steps and a last evaluation at the optimum; a
round starts where the step count is a multiple of ``steps`` (multipliers updated from ``g`` there, the
optimiser re-initialised). The objective and the constraints are each called at one place, inside the
reverse-mode derivative of the step, so a program that solves an impact inside them holds that solve once;
the run compiles once, runs under ``jax.jit`` and ``jax.vmap`` (several starts at once) and records the
history.

**Non-finite values.** The inputs are checked (finite start, bounds shaped like it, an optax optimiser, a scalar
objective and 1-D constraints). If the objective, the constraints, their gradient or an optimiser step becomes
NaN or infinite at some iterate, the run stops there: the parameters and multipliers stay at the last finite
iterate, and `result` says what went non-finite. With ``throw=True`` (the default) that raises; with
``throw=False`` it is returned, as for the impact maps.
"""

from collections.abc import Callable, Sequence
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from ._custom_types import Array, Float, Scalar
from ._results import RESULTS, error_if_failed
from ._validation import as_float, check, count, flag, positive, real


class OptimiseResults(RESULTS):  # pyright: ignore
    """Outcomes of :func:`minimise`; on a failure `params` and `multipliers` are the last finite iterate.
    ``nonfinite``: the objective, the constraints or their gradient is NaN or inf at an iterate."""

    diverged = ("The `optimiser` step gave NaN or inf parameters in `minimise` (learning rate too large?); "
                "`params` holds the last finite iterate.")


_NONFINITE = ("The objective `fn`, the `constraints` or their gradient returned NaN or inf at an iterate of "
              "`minimise` (`params` holds the last finite iterate): keep the parameters in the functions' "
              "domain (bounds, a projection) or rescale them.")


class OptimiseSolution(eqx.Module):
    """Output of :func:`minimise`.

    - `params`: the optimum (same pytree as the start).
    - `value`: ``f`` at the optimum; `constraints`: ``g`` there (``≤ 0`` when feasible), shape ``(m,)``.
    - `multipliers`: the final ``λ ≥ 0`` of each constraint.
    - `history_value`, `history_constraints`: ``f`` and ``g`` at every step, shapes ``(rounds · steps,)`` and
      ``(rounds · steps, m)`` (evaluated before each update; NaN where they were not finite).
    - `result`: an :class:`OptimiseResults` item.
    """

    params: Any
    value: Scalar
    constraints: Float[Array, " m"]
    multipliers: Float[Array, " m"]
    history_value: Float[Array, " k"]
    history_constraints: Float[Array, "k m"]
    result: OptimiseResults


def _finite(tree) -> jax.Array:
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(tree)]))


def _failure(f, g, grads=0.0, new_p=0.0) -> OptimiseResults:
    """``nonfinite`` where ``f``, ``g`` or the gradient at an iterate is not finite, else ``diverged`` where the
    next iterate is not."""
    evaluated = jnp.isfinite(f) & _finite(g) & _finite(grads)
    return OptimiseResults.where(~evaluated, OptimiseResults.nonfinite, OptimiseResults.where(
        ~_finite(new_p), OptimiseResults.diverged, OptimiseResults.successful))


def _keep_if(okay, old, new):
    """``new`` where ``okay``, else ``old``, leaf by leaf."""
    return jax.tree.map(lambda a, b: jnp.where(okay, b, a), old, new)


def _params(params):
    """The start: a pytree of finite float arrays."""
    leaves, treedef = jax.tree_util.tree_flatten_with_path(params)
    if not leaves:
        raise ValueError("`params` must be a pytree with at least one array leaf.")
    return jax.tree.unflatten(treedef, [as_float(f"params{jax.tree_util.keystr(k)}", x) for k, x in leaves])


def _bound(name: str, bound, params):
    """One side of the box, broadcast to every leaf of `params` (a scalar, or a pytree prefix of `params`)."""

    def leaf(b, x):
        b = real(name, b)
        if b.shape not in ((), x.shape):
            raise ValueError(f"`{name}` has a leaf of shape {b.shape} for a parameter of shape {x.shape}.")
        return jnp.broadcast_to(check(b, jnp.any(jnp.isnan(b)), f"`{name}` contains NaN."), x.shape).astype(x.dtype)

    try:
        return jax.tree.map(lambda b, sub: jax.tree.map(lambda x: leaf(b, x), sub), bound, params)
    except (TypeError, ValueError) as err:
        if str(err).startswith(f"`{name}`"):
            raise
        raise ValueError(f"`{name}` must be a scalar or a pytree like `params`: {err}") from None


def _projection(bounds, params):
    """Projection onto ``lower ≤ x ≤ upper`` (identity without bounds)."""
    if bounds is None:
        return lambda p: p
    if isinstance(bounds, str) or not isinstance(bounds, Sequence) or len(bounds) != 2:
        raise ValueError(f"`bounds` must be a pair (lower, upper), got {bounds!r}.")
    lower, upper = _bound("bounds[0]", bounds[0], params), _bound("bounds[1]", bounds[1], params)
    bad = jax.tree.map(lambda lo, hi: jnp.any(lo > hi), lower, upper)
    lower = check(lower, jnp.any(jnp.stack(jax.tree.leaves(bad))), "`bounds`: lower exceeds upper.")
    return lambda p: optax.projections.projection_box(p, lower, upper)


def _check_functions(fn, constraints, optimiser, params):
    """Checks the objective, the constraints and the optimiser; returns the constraint function (zero constraints
    when None) and the shapes of the objective and of the constraints at `params`."""
    for name, f in (("fn", fn), ("constraints", constraints)):
        if f is not None and not callable(f):
            raise TypeError(f"`{name}` must be a function of `params`, got {type(f).__name__}.")
    if not isinstance(optimiser, optax.GradientTransformation):
        hint = f": call it, e.g. `optax.{getattr(optimiser, '__name__', 'adam')}(1e-2)`" if callable(optimiser) else ""
        raise TypeError(f"`optimiser` must be an optax.GradientTransformation, got {optimiser!r}{hint}.")
    f = jax.eval_shape(fn, params)
    if not (hasattr(f, "shape") and f.shape == () and jnp.issubdtype(f.dtype, jnp.floating)):
        raise ValueError(f"`fn` must return a real scalar, got {f}.")
    g_fn = (lambda p: jnp.zeros((0,), f.dtype)) if constraints is None else constraints
    g = jax.eval_shape(g_fn, params)
    if not (hasattr(g, "shape") and len(g.shape) == 1 and jnp.issubdtype(g.dtype, jnp.floating)):
        raise ValueError(f"`constraints` must return a 1-D real array, got {g}.")
    return g_fn, f, g


def _lagrangian(f, g, lam, rho):
    """``L_ρ(x, λ)`` of the module docstring from ``f(x)`` and ``g(x)``."""
    return f + jnp.sum(jnp.maximum(0.0, lam + rho * g) ** 2 - lam**2) / (2 * rho)


def _extra_args(optimiser, fn, g_fn, rho, lam, f, g, grads) -> dict:
    """What optax's line searches (``optax.lbfgs``, ``scale_by_zoom_linesearch``…) read in ``update``: the value
    ``L_ρ`` at the iterate, its gradient and ``L_ρ`` as a function, at the current multipliers; nothing for an
    optimiser without extra arguments."""
    if not isinstance(optimiser, optax.GradientTransformationExtraArgs):
        return {}
    return {"value": _lagrangian(f, g, lam, rho), "grad": grads,
            "value_fn": lambda x: _lagrangian(fn(x), g_fn(x), lam, rho)}


class _Iterate(eqx.Module):
    """The carry of :func:`minimise`'s scan: the iterate `params`, the optimiser's `state`, the `multipliers`
    ``λ``, the last iterate `good` whose values were finite with its `value` and `constraints`, and the
    `result` so far."""

    params: Any
    state: Any
    multipliers: Array
    good: Any
    value: Array
    constraints: Array
    result: OptimiseResults


def _iteration(fn, g_fn, optimiser, project, rho, steps: int, total: int) -> Callable:
    """The body of :func:`minimise`'s scan at step ``i``: evaluate ``f`` and ``g`` at the iterate, start a round
    where ``i`` is a positive multiple of `steps` (new multipliers, the optimiser restarted), take a projected
    optimiser step on ``L_ρ`` (none at ``i = total``: the optimum is evaluated, not updated), and stop at the
    first non-finite value."""
    ok = OptimiseResults.successful

    def iteration(c: _Iterate, i):
        # One call of `fn` and of the constraints in the whole program (each call site compiles apart).
        (f, g), pullback = jax.vjp(lambda x: (fn(x), g_fn(x)), c.params)
        start = (i % steps == 0) & (i > 0)
        lam = _keep_if(start & (c.result == ok) & _finite(g), c.multipliers, jnp.maximum(0.0, c.multipliers + rho * g))
        state = _keep_if(start, c.state, optimiser.init(c.params))
        (grads,) = pullback((jnp.ones_like(f), jnp.maximum(0.0, lam + rho * g)))  # ∇f + Σ max(0, λ + ρg) ∇g
        updates, new_state = optimiser.update(grads, state, c.params,
                                              **_extra_args(optimiser, fn, g_fn, rho, lam, f, g, grads))
        new_p = project(optax.apply_updates(c.params, updates))
        last = i == total
        result = OptimiseResults.where(c.result == ok, OptimiseResults.where(
            last, _failure(f, g), _failure(f, g, grads, new_p)), c.result)
        take = (result == ok) | (result == OptimiseResults.diverged) | (i == 0)
        good, f_good, g_good = _keep_if(take, (c.good, c.value, c.constraints), (c.params, f, g))
        moving = (result == ok) & ~last
        return _Iterate(_keep_if(moving, c.params, new_p), _keep_if(moving, state, new_state), lam, good, f_good,
                        g_good, result), (f, g)

    return iteration


def minimise(
    fn: Callable[[Any], Scalar],
    params: Any,
    *,
    optimiser: optax.GradientTransformation,
    steps: int,
    bounds: tuple[Any, Any] | None = None,
    constraints: Callable[[Any], Float[Array, " m"]] | None = None,
    penalty: float = 10.0,
    rounds: int = 1,
    throw: bool = True,
) -> OptimiseSolution:
    """Minimise ``fn(params)`` with optax, subject to ``bounds`` (projection) and ``constraints(params) ≤ 0``
    (augmented Lagrangian); see the module docstring.

    **Arguments:**

    - `fn`: real scalar objective of a pytree of float arrays; `params`: the start, finite (projected onto the
      bounds).
    - `optimiser`: an ``optax.GradientTransformation`` (e.g. ``optax.adam(1e-2)``), re-initialised at every round
      (a decaying learning-rate schedule then anneals within each round). Line-search methods such as
      ``optax.lbfgs()`` get the augmented Lagrangian's value, gradient and function (``value``, ``grad``,
      ``value_fn`` of ``update``); their line search calls `fn` and `constraints` again, at points it does not
      project, and the projection of its step breaks its curvature pairs: use them without `bounds`.
    - `steps`: optimiser steps per round; `rounds`: multiplier updates (``1`` without constraints); both ``≥ 1``.
    - `bounds`: ``(lower, upper)``, each a scalar or a pytree like `params` whose leaves are scalars or shaped
      like the parameter (``±inf`` for no bound, never NaN), ``lower ≤ upper``.
    - `constraints`: ``g(params)``, a 1-D array, feasible where ``≤ 0``.
    - `penalty`: ``ρ > 0``.
    - `throw`: raise when something became NaN or inf (see the module docstring); otherwise report it in
      `result`.

    **Returns:** an :class:`OptimiseSolution`.

    **Example:**

    ```python
    import math, optax, jax.numpy as jnp
    import difimpact as di
    walker, coulomb = di.CrutchWalker(), di.Coulomb(0.75)
    hit = lambda q3: di.frictional_impact(walker, *walker.pre_impact_state(q3), "Q", friction=coulomb)  # q3: leg angle
    slips = lambda q3: jnp.atleast_1d(hit(q3).mu_c - 0.6)      # ≤ 0: the tip sticks with μ = 0.6
    res = di.minimise(lambda q3: -hit(q3).energy_change, math.radians(12), optimiser=optax.adam(1e-2),
                      steps=200, rounds=5, penalty=1e3, bounds=(0.05, 0.5), constraints=slips)
    print(math.degrees(res.params), res.value)   # 7.25° 9.87 J: the least energy lost without slipping
    ```
    """
    steps, rounds = count("steps", steps), count("rounds", rounds)
    rho = positive("penalty", penalty, shape=())
    params = _params(params)
    project = _projection(bounds, params)
    g_fn, f0, g0 = _check_functions(fn, constraints, optimiser, params)
    params = project(params)

    total = rounds * steps  # optimiser steps; one more evaluation gives the value at the optimum
    nan = jnp.full((), jnp.nan, f0.dtype)
    start = _Iterate(params, optimiser.init(params), jnp.zeros(g0.shape, g0.dtype), params, nan,
                     jnp.full(g0.shape, jnp.nan, g0.dtype), OptimiseResults.successful)
    iteration = _iteration(fn, g_fn, optimiser, project, rho, steps, total)
    end, (f_hist, g_hist) = jax.lax.scan(iteration, start, jnp.arange(total + 1))
    # On a failure the last finite iterate and its values; at the optimum those of the last evaluation.
    result = end.result
    params, value, g_end = _keep_if(result != OptimiseResults.successful, (end.params, f_hist[-1], g_hist[-1]),
                                    (end.good, end.value, end.constraints))
    out = OptimiseSolution(
        params=params, value=value, constraints=g_end, multipliers=end.multipliers, history_value=f_hist[:-1],
        history_constraints=g_hist[:-1], result=result,
    )
    return error_if_failed(out, result, OptimiseResults, _NONFINITE) if flag("throw", throw) else out
