r"""A small optax driver for bound- and inequality-constrained minimisation.

Problem: minimise ``f(x)`` over a pytree ``x`` with ``lower ≤ x ≤ upper`` and ``g(x) ≤ 0`` (vector ``g``).

- **Bounds by projection** after every optimiser step (``optax.projections.projection_box``): a projected
  gradient method. Chosen over a sigmoid reparametrisation because the optima of impact problems often sit
  *on* a bound (seed 003: torso aligned with the stance leg, ``q5 = 0``), which projection reaches exactly in
  finitely many steps while a sigmoid reaches it only asymptotically, with a vanishing gradient.
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

The whole run is one ``lax.scan`` (rounds) of ``lax.scan`` (steps), so it compiles once, runs under
``jax.jit`` and ``jax.vmap`` (several starts at once) and records the history.
"""

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from ._custom_types import Array, Float, Scalar
from ._validation import as_float, check


class OptimiseResult(eqx.Module):
    """Output of :func:`minimise`.

    - `params`: the optimum (same pytree as the start).
    - `value`: ``f`` at the optimum; `constraints`: ``g`` there (``≤ 0`` when feasible), shape ``(m,)``.
    - `multipliers`: the final ``λ ≥ 0`` of each constraint.
    - `history_value`, `history_constraints`: ``f`` and ``g`` at every step, shapes ``(rounds · steps,)`` and
      ``(rounds · steps, m)`` (evaluated before each update).
    """

    params: Any
    value: Scalar
    constraints: Float[Array, " m"]
    multipliers: Float[Array, " m"]
    history_value: Float[Array, " k"]
    history_constraints: Float[Array, "k m"]


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
) -> OptimiseResult:
    """Minimise ``fn(params)`` with optax, subject to ``bounds`` (projection) and ``constraints(params) ≤ 0``
    (augmented Lagrangian); see the module docstring.

    **Arguments:**

    - `fn`: scalar objective of a pytree of float arrays; `params`: the start (projected onto the bounds).
    - `optimiser`: an ``optax.GradientTransformation``, re-initialised at every round (a decaying learning-rate
      schedule then anneals within each round).
    - `steps`: optimiser steps per round; `rounds`: multiplier updates (``1`` without constraints).
    - `bounds`: ``(lower, upper)``, pytrees like `params` (or scalars).
    - `constraints`: ``g(params)``, a 1-D array, feasible where ``≤ 0``.
    - `penalty`: ``ρ > 0``.

    **Returns:** an :class:`OptimiseResult`.
    """
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"`steps` must be a positive integer, got {steps!r}.")
    if not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"`rounds` must be a positive integer, got {rounds!r}.")
    rho = as_float("penalty", penalty, shape=())
    rho = check(rho, rho <= 0, "`penalty` must be positive.")
    if bounds is None:
        project = lambda p: p  # noqa: E731
    else:
        lower, upper = bounds
        bad = jax.tree.map(lambda lo, hi: jnp.any(jnp.asarray(lo) > jnp.asarray(hi)), lower, upper)
        lower = check(lower, jnp.any(jnp.stack(jax.tree.leaves(bad))), "`bounds`: lower exceeds upper.")
        project = lambda p: optax.projections.projection_box(p, lower, upper)  # noqa: E731
    g_fn = (lambda p: jnp.zeros((0,), jnp.result_type(float))) if constraints is None else constraints
    params = project(jax.tree.map(jnp.asarray, params))
    m = jnp.shape(g_fn(params))
    if len(m) != 1:
        raise ValueError(f"`constraints` must return a 1-D array, got shape {m}.")

    def lagrangian(p, lam):
        f, g = fn(p), g_fn(p)
        return f + jnp.sum(jnp.maximum(0.0, lam + rho * g) ** 2 - lam**2) / (2 * rho), (f, g)

    grad = jax.value_and_grad(lagrangian, has_aux=True)

    def step(carry, _):
        p, state, lam = carry
        (_, record), grads = grad(p, lam)
        updates, state = optimiser.update(grads, state, p)
        return (project(optax.apply_updates(p, updates)), state, lam), record

    def round_(carry, _):
        p, lam = carry
        (p, _, _), record = jax.lax.scan(step, (p, optimiser.init(p), lam), None, length=steps)
        return (p, jnp.maximum(0.0, lam + rho * g_fn(p))), record

    lam0 = jnp.zeros(m, jnp.result_type(float))
    (params, lam), (f_hist, g_hist) = jax.lax.scan(round_, (params, lam0), None, length=rounds)
    return OptimiseResult(
        params=params, value=fn(params), constraints=g_fn(params), multipliers=lam,
        history_value=f_hist.reshape(-1), history_constraints=g_hist.reshape(rounds * steps, -1),
    )
