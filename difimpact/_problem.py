r"""A small optimisation problem, :class:`Problem`: objective, inequality constraints ``g(x) ≤ 0`` and bounds over a
small vector ``x``; :meth:`Problem.solve` runs :func:`~difimpact.minimise` on it and :meth:`Problem.grid_search`
checks the optimum against a brute-force grid over the same bounds. The papers' worked problems build one each
(``difimpact.papers.*.optimisation``: :func:`~difimpact.crutch_peak_force` …).
"""

from collections.abc import Callable
from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from ._custom_types import Array, Float, Scalar
from ._optimise import OptimiseSolution, minimise
from ._validation import as_float, count, positive


class GridSearch(NamedTuple):
    """A problem evaluated on a grid over its bounds: `axes` (one 1-D array per variable), the objective
    `values`, the `constraints` (grid shape × number of constraints; ``None`` without constraints) and the
    `feasible` mask (all constraints ``≤ 0``), and the best feasible grid point `best` with its value
    `best_value` (``inf`` when no point is feasible)."""

    axes: list[np.ndarray]
    values: np.ndarray
    constraints: np.ndarray | None
    feasible: np.ndarray
    best: np.ndarray
    best_value: float


class Problem(eqx.Module):
    """``min objective(x)`` subject to ``constraints(x) ≤ 0`` and ``lower ≤ x ≤ upper``; `names` label the
    entries of ``x`` (radians, metres or ratios as named).

    `objective` and `constraints` are callables; a pytree callable such as ``jax.tree_util.Partial`` keeps its
    array arguments as leaves of the problem, so that problems differing only in them (:func:`biped_torso` at
    two lift-off margins) share one compiled program when the problem is an argument of the compiled function,
    as in :meth:`solve_from` and :meth:`grid_search`."""

    objective: Callable[[Float[Array, " d"]], Scalar]
    constraints: Callable[[Float[Array, " d"]], Float[Array, " m"]] | None
    lower: Float[Array, " d"]
    upper: Float[Array, " d"]
    names: tuple[str, ...] = eqx.field(static=True)

    def solve(self, start, *, learning_rate: float = 0.02, steps: int = 300, rounds: int = 4,
              penalty: float = 100.0) -> OptimiseSolution:
        """:func:`~difimpact.minimise` from `start` with Adam, the learning rate decaying tenfold per
        round, projection on the bounds and the augmented Lagrangian for the constraints."""
        start = as_float("start", start, shape=self.lower.shape)
        schedule = optax.exponential_decay(positive("learning_rate", learning_rate, shape=()), count("steps", steps),
                                           0.1)
        return minimise(self.objective, start, optimiser=optax.adam(schedule), steps=steps,
                        rounds=rounds if self.constraints is not None else 1, bounds=(self.lower, self.upper),
                        constraints=self.constraints, penalty=penalty)

    def solve_from(self, starts, **options) -> OptimiseSolution:
        """:meth:`solve` from each row of `starts` ``(k, d)`` under ``vmap``, the results stacked; `options` as
        for :meth:`solve`. One compiled program serves problems that differ only in their array leaves."""
        starts = as_float("starts", starts)
        if starts.ndim != 2 or starts.shape[1:] != self.lower.shape:
            raise ValueError(f"`starts` must have shape (k, {self.lower.shape[0]}), got {starts.shape}.")
        return _solve_from(self, starts, **options)

    def grid_search(self, num: int, *, batched: bool = True) -> GridSearch:
        """Brute force over ``num`` points per variable between the bounds: the objective and the constraints at
        every grid point, as a check of :meth:`solve` (its optimum lies within one grid spacing of `best`, and
        no feasible grid point is better). `batched`: one ``jit(vmap)`` over the grid; otherwise one jitted
        function called point by point (for objectives such as a compliant solve that batch poorly)."""
        axes = [np.linspace(lo, hi, num) for lo, hi in zip(np.asarray(self.lower), np.asarray(self.upper))]
        points = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, len(axes))

        def evaluate(fn):
            if batched:
                return np.asarray(_on_grid(fn, jnp.asarray(points)))
            return np.stack([np.asarray(_at(fn, jnp.asarray(p))) for p in points])

        values = evaluate(self.objective)
        g = None if self.constraints is None else evaluate(self.constraints)
        feasible = np.ones(len(points), bool) if g is None else np.all(g <= 0, axis=1)
        masked = np.where(feasible, values, np.inf)
        shape = tuple(len(a) for a in axes)
        return GridSearch(axes, values.reshape(shape), None if g is None else g.reshape(shape + g.shape[1:]),
                          feasible.reshape(shape), points[np.argmin(masked)], float(np.min(masked)))


@eqx.filter_jit
def _solve_from(problem, starts, **options):
    return jax.vmap(lambda start: problem.solve(start, **options))(starts)


@eqx.filter_jit
def _on_grid(fn, points):
    return jax.vmap(fn)(points)


@eqx.filter_jit
def _at(fn, point):
    return fn(point)
