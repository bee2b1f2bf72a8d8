"""The outcomes, options and solution of :func:`~difimpact.solve_nlp`."""

import equinox as eqx
import jax
import numpy as np

from .._custom_types import Array, Float, Int, Scalar
from .._results import RESULTS


class NLPResults(RESULTS):  # pyright: ignore
    """Outcomes of :func:`~difimpact.solve_nlp` (and of the optimal gaits built on it); ``nonfinite``: the
    objective, constraints or their derivatives became non-finite at an iterate (a state or parameter out of the
    model's range, e.g. a singular mass matrix)."""

    successful = ""
    iteration_limit = (
        "The interior-point method reached its iteration limit (`max_steps`) before the optimality conditions held "
        "to `tol`. If the iterates were still closing in, raise `max_steps` or start nearer a solution; if they "
        "stalled, the problem may be infeasible (see `constraint_violation`), unbounded below (variables growing "
        "without bound: add bounds, or lower `diverging_iterates_tol`) or badly scaled."
    )
    step_failure = (
        "The line search could not decrease the merit function along the Newton direction: the problem may be "
        "locally infeasible near this guess (constraints that cannot all hold), or badly scaled."
    )
    infeasible = (
        "The iterates converged to a point where the constraints do not hold and cannot be reduced further "
        "(local infeasibility): the constraints contradict each other near this guess (e.g. a step length, "
        "speed or bound that the model cannot meet)."
    )
    singular_newton = (
        "The Newton (KKT) matrix stayed singular after regularisation: the constraints are linearly dependent "
        "or the problem is degenerate at this point."
    )
    unbounded = (
        "The iterates diverged (a variable's magnitude passed `diverging_iterates_tol`, 1e20 by default): the "
        "problem is probably unbounded below, or a variable needs a bound."
    )


class NLPOptions(eqx.Module):
    """Options of the interior-point method (names and defaults after IPOPT's, Wächter & Biegler 2006).

    - `tol` ``> 0``: the scaled optimality error ``E_0`` at which the solve stops (IPOPT's ``tol``, eq. 5).
      ``None`` (the default): ``max(1e-9, 100 ε)`` of the starting point's dtype, ``1e-9`` in float64 and
      ``1.2e-5`` in float32. A `tol` below ``10 ε`` cannot be met in that dtype and is refused by
      :func:`~difimpact.solve_nlp` (``ValueError``).
    - `max_steps` ``≥ 1``: the iteration limit.
    - `mu_init` ``> 0``: the initial barrier parameter; `kappa_mu` in ``(0, 1)``, `theta_mu` in ``(1, 2)``: its
      superlinear decrease $\\mu  \\leftarrow  max(tol/10, min(\\kappa_\\mu  \\mu, \\mu^{\\theta_\\mu}))$ (eq. 7);
      `tau_min` in ``(0, 1)``: the fraction-to-the-boundary floor (eq. 8).
    - `bound_push` in ``(0, 0.5]``: how far inside its bounds a start is moved (IPOPT's ``bound_push`` and
      ``bound_frac``, the latter at most ``0.5``: the middle of the bounds).
    - `max_gradient` ``> 0``: the objective and each constraint row, where its gradient's max-norm at the start
      exceeds it, are scaled down to it (IPOPT's ``nlp_scaling_max_gradient`` of its gradient-based scaling,
      §3.8); `scale_constraints` ``False`` scales the objective alone. ``tol`` applies to the scaled problem; the
      solution's multipliers and violation are unscaled.
    - `max_backtracks` ``≥ 1``: halvings of the step in the line search.
    - `bound_relax_factor` ``≥ 0``: every finite bound of the variables and inequalities is relaxed by this factor
      times ``max(1, |bound|)`` before the solve, so that a problem without a strict interior (a bound that an
      equality also imposes, e.g. a time fixed at its lower bound 0) keeps one; the solution is then projected
      onto the original bounds (IPOPT's ``bound_relax_factor`` and ``honor_original_bounds``; Wächter & Biegler
      2006, §3.5). ``0`` (no relaxation: active bounds hold exactly) by default; IPOPT's default is ``1e-8``.
    - `diverging_iterates_tol` ``> 0``: the solve ends as ``unbounded`` once an iterate has
      $\\|x\\|_\\infty >$ `diverging_iterates_tol`, ``x`` the variables without the slacks (unscaled: the scaling
      acts on the functions, never on ``x``; IPOPT's ``diverging_iterates_tol``, default ``1e20``). Along a
      direction of zero curvature (``min −x``, ``x ≥ 0``; a linear program unbounded along a ray) the steps grow
      geometrically, as IPOPT's do, and pass ``1e20`` within a few dozen iterations. One case still grows
      linearly, by about ``‖∇f‖_∞ / 10⁻¹⁰`` an iteration: a direction of zero curvature in the null space of
      the equalities where the Hessian is not diagonal (the inertia test's rounding then keeps a regularisation
      of about ``10⁻¹⁰``); lower the tolerance to catch such a divergence within `max_steps`.

    Each option is checked where it is made (``ValueError``/``TypeError`` naming it) when it is a number; one
    that is traced (an option passed through ``jax.jit``) is used as it is.
    """

    tol: float | None = None
    max_steps: int = 300
    mu_init: float = 0.1
    kappa_mu: float = 0.2
    theta_mu: float = 1.5
    tau_min: float = 0.99
    bound_push: float = 1e-2
    max_gradient: float = 100.0
    scale_constraints: bool = True
    max_backtracks: int = 40
    bound_relax_factor: float = 0.0
    diverging_iterates_tol: float = 1e20

    def __check_init__(self):
        if self.tol is not None:
            _real("tol", self.tol, lambda v: v > 0, "positive")
        _integer("max_steps", self.max_steps)
        _real("mu_init", self.mu_init, lambda v: v > 0, "positive")
        _real("kappa_mu", self.kappa_mu, lambda v: (v > 0) & (v < 1), "in (0, 1)")
        _real("theta_mu", self.theta_mu, lambda v: (v > 1) & (v < 2), "in (1, 2)")
        _real("tau_min", self.tau_min, lambda v: (v > 0) & (v < 1), "in (0, 1)")
        _real("bound_push", self.bound_push, lambda v: (v > 0) & (v <= 0.5), "in (0, 0.5]")
        _real("max_gradient", self.max_gradient, lambda v: v > 0, "positive")
        _integer("max_backtracks", self.max_backtracks)
        _real("bound_relax_factor", self.bound_relax_factor, lambda v: v >= 0, "non-negative")
        _real("diverging_iterates_tol", self.diverging_iterates_tol, lambda v: v > 0, "positive")
        if not isinstance(self.scale_constraints, (bool, np.bool_)):
            raise TypeError(f"`scale_constraints` must be True or False, got {self.scale_constraints!r}.")


class NLPSolution(eqx.Module):
    """Result of :func:`~difimpact.solve_nlp`.

    - `x`: the solution (the problem's variables, without the slacks of the inequalities).
    - `value`: the objective ``f(x)`` (unscaled).
    - `multipliers`: ``λ`` of the equality constraints, then of the inequality constraints (the Lagrangian
      ``f + λᵀ h``, ``h = (c(x), d(x) − s)``, unscaled).
    - `bound_multipliers`: ``z_L − z_U`` of the variables' bounds (unscaled).
    - `constraint_violation`: ``max |c(x)|`` and the inequalities' violation of their bounds.
    - `iterations`, `result` (:class:`NLPResults`), `optimality_error` (IPOPT's scaled ``E_0``).
    """

    x: Float[Array, " n"]
    value: Scalar
    multipliers: Float[Array, " m"]
    bound_multipliers: Float[Array, " n"]
    constraint_violation: Scalar
    optimality_error: Scalar
    iterations: Int[Array, ""]
    result: NLPResults


def _concrete(name: str, value, kind: str):
    """`value` as a NumPy array of `kind` (``"f"`` real, ``"i"`` integer), or ``None`` where it is traced."""
    if isinstance(value, jax.core.Tracer):
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, (int, float, np.number, np.ndarray, jax.Array)):
        raise TypeError(f"`{name}` must be a number, got {value!r} ({type(value).__name__}).")
    arr = np.asarray(value)
    allowed = "iu" if kind == "i" else "iuf"
    if arr.dtype == bool or arr.dtype.kind not in allowed:
        raise TypeError(f"`{name}` must be {'an integer' if kind == 'i' else 'a real number'}, got {value!r}.")
    return arr


def _real(name: str, value, good, word: str):
    """A real option, finite and `good` (every member of a batch of options); traced: not checked."""
    arr = _concrete(name, value, "f")
    if arr is not None and not np.all(np.isfinite(arr) & good(arr)):
        raise ValueError(f"`{name}` must be finite and {word}, got {value!r}.")


def _integer(name: str, value):
    """An integer option ``≥ 1`` (a count); traced: not checked."""
    arr = _concrete(name, value, "i")
    if arr is not None and not np.all(arr >= 1):
        raise ValueError(f"`{name}` must be at least 1, got {value!r}.")


def failures(result: NLPResults) -> list[tuple[int, str]]:
    """The failed members of a batch of results (``NLPSolution.result`` or ``OptimalGait.result`` of a
    ``vmap``), as ``(index in the flattened batch, reason)``; empty when every member succeeded. Outside
    ``jit``."""
    values = np.asarray(result._value).reshape(-1)
    messages = NLPResults._index_to_message
    return [(int(i), messages[int(v)]) for i, v in enumerate(values) if messages[int(v)]]
