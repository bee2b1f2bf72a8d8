"""The outcomes, options and solution of :func:`~difimpact.solve_nlp`."""

import equinox as eqx
import numpy as np

from .._custom_types import Array, Float, Int, Scalar
from .._results import RESULTS, deprecated_items


class NLPResults(RESULTS):  # pyright: ignore
    """Outcomes of :func:`~difimpact.solve_nlp` (and of the optimal gaits built on it); ``nonfinite``: the
    objective, constraints or their derivatives became non-finite at an iterate (a state or parameter out of the
    model's range, e.g. a singular mass matrix)."""

    successful = ""
    iteration_limit = (
        "The interior-point method reached its iteration limit (`max_steps`) before the optimality conditions held "
        "to `tol`: raise `max_steps`, start nearer a solution, or loosen `tol`."
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


deprecated_items(NLPResults, nonfinite_values="nonfinite")


class NLPOptions(eqx.Module):
    """Options of the interior-point method (names and defaults after IPOPT's, Wächter & Biegler 2006).

    - `tol`: the scaled optimality error ``E_0`` at which the solve stops (IPOPT's ``tol``, eq. 5).
    - `max_steps`: the iteration limit.
    - `mu_init`: the initial barrier parameter; `kappa_mu`, `theta_mu`: its superlinear decrease
      $\\mu  \\leftarrow  max(tol/10, min(\\kappa_\\mu  \\mu, \\mu^{\\theta_\\mu}))$ (eq. 7); `tau_min`: the fraction-to-the-boundary floor (eq. 8).
    - `bound_push`: how far inside its bounds a start is moved (IPOPT's ``bound_push``/``bound_frac``).
    - `max_gradient`: the objective and each constraint row, where its gradient's max-norm at the start exceeds
      it, are scaled down to it (IPOPT's ``nlp_scaling_max_gradient`` of its gradient-based scaling, §3.8);
      `scale_constraints` ``False`` scales the objective alone. ``tol`` applies to the scaled problem; the
      solution's multipliers and violation are unscaled.
    - `max_backtracks`: halvings of the step in the line search.
    - `bound_relax_factor`: every finite bound of the variables and inequalities is relaxed by this factor times
      ``max(1, |bound|)`` before the solve, so that a problem without a strict interior (a bound that an equality
      also imposes, e.g. a time fixed at its lower bound 0) keeps one; the solution is then projected onto the
      original bounds (IPOPT's ``bound_relax_factor`` and ``honor_original_bounds``; Wächter & Biegler 2006,
      §3.5). ``0`` (no relaxation: active bounds hold exactly) by default; IPOPT's default is ``1e-8``.
    """

    tol: float = 1e-9
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


def failures(result: NLPResults) -> list[tuple[int, str]]:
    """The failed members of a batch of results (``NLPSolution.result`` or ``OptimalGait.result`` of a
    ``vmap``), as ``(index in the flattened batch, reason)``; empty when every member succeeded. Outside
    ``jit``."""
    values = np.asarray(result._value).reshape(-1)
    messages = NLPResults._index_to_message
    return [(int(i), messages[int(v)]) for i, v in enumerate(values) if messages[int(v)]]
