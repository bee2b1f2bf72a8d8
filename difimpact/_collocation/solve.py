r"""Solving a multi-phase gait (:class:`~.contact.ContactGait` on a :class:`~.mesh.Mesh`): the problem built and
checked in Python, one compiled program for the solve, its failure raised after it."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._check import checks_as_nan
from .._custom_types import Array, Float, Int, Scalar
from .._exported import OPTIMISED_PROGRAM_OPTIONS, stored
from .._impact.kkt import ImpactSolution
from .._nlp import NLPOptions, NLPResults, NLPSolution
from .._nlp.outcome import raise_if_failed
from .._nlp.solve import solve_nlp_prechecked
from .._validation import as_float, flag, positive
from .contact import ContactGait
from .mesh import Mesh
from .multiphase import MultiPhaseProblem, sparsity

# IPOPT's bound relaxation (Wächter & Biegler 2006, §3.5): the first point's time and effort are fixed by
# equalities and bounded by 0 (no strict interior without it).
OPTIONS = NLPOptions(max_steps=500, bound_relax_factor=1e-8)


class PhasedGait(eqx.Module):
    """One optimal step of :func:`multiphase_gait`.

    - `t` ``(G,)`` [s], `q`, `qdot` ``(G, n)``, `u` ``(G, k)`` [N m] at the collocation points of all phases in
      order (a phase's last point and the next one's first are the same instant); `phase` ``(G,)`` its index.
    - `forces` ``(G, 2 P)`` [N]: the ground's forces on the gait's contact rows (normal, tangential per point).
    - `durations` ``(phases,)`` [s]; `step_time` [s], `step_length` [m], `speed` [m/s]; `cost` (the objective,
      torques in N m); `impact`: the step's :class:`~difimpact.ImpactSolution`.
    - `problem`, `solution`, `result`, `iterations`.
    """

    t: Float[Array, " G"]
    q: Float[Array, "G n"]
    qdot: Float[Array, "G n"]
    u: Float[Array, "G k"]
    phase: Int[Array, " G"]
    forces: Float[Array, "G r"]
    durations: Float[Array, " P"]
    step_time: Scalar
    step_length: Scalar
    speed: Scalar
    cost: Scalar
    impact: ImpactSolution
    problem: MultiPhaseProblem
    solution: NLPSolution
    result: NLPResults
    iterations: Int[Array, ""]


def _gait(problem: MultiPhaseProblem, sol: NLPSolution) -> PhasedGait:
    L, n = problem.layout, problem.layout.n
    Z = sol.x.reshape(-1, L.block)
    _, lam, _ = problem.field(sol.x)
    q_end, qd_end = problem.end(sol.x)
    length = problem.step_length(sol.x)
    return PhasedGait(
        t=Z[:, L.t], q=Z[:, :n], qdot=Z[:, n:2 * n], u=problem.torque_unit * Z[:, L.states:],
        phase=jnp.asarray(problem.mesh.phase_of_points()), forces=lam,
        durations=Z[np.array(problem.offsets[:-1]), L.tau], step_time=Z[-1, L.t], step_length=length,
        speed=length / Z[-1, L.t], cost=problem.torque_unit**2 * sol.value,
        impact=problem.gait.impact(problem.model, q_end, qd_end), problem=problem, solution=sol,
        result=sol.result, iterations=sol.iterations)


def _objective(z, p):
    return p.objective(z)


def _constraints(z, p):
    return p.constraints(z)


def _joint(z, p):
    return p.objective_and_constraints(z)


@stored("multiphase_gait", OPTIMISED_PROGRAM_OPTIONS)
@eqx.filter_jit
def solve_problem(problem: MultiPhaseProblem, z0, options: NLPOptions, finish=None):
    """The transcribed problem solved from `z0` (checked before the program), `finish(problem, solution)` its
    result (default a :class:`PhasedGait`): one program. Its bounds hold by construction (from the checked
    `duration_bounds` and `torque_max`; every inequality ``≥ 0``): the program checks neither, nor the result
    (:func:`~difimpact._nlp.outcome.raise_if_failed` does, after it). The model's own checks (a singular mass
    matrix, an overflow) make the values they guard NaN (:func:`~difimpact._check.checks_as_nan`), which the
    solve rejects as a trial point or reports as ``NLPResults.nonfinite``: no host callback, so JAX's persistent
    cache keeps the program."""
    dtype = z0.dtype
    lower, upper = problem.variable_bounds(dtype)
    d_lo, d_hi = problem.inequality_bounds(dtype)
    with checks_as_nan():
        sol = solve_nlp_prechecked(_objective, z0, problem, equality=None, inequality=None,
                                   constraints=_constraints, lower=lower, upper=upper, inequality_lower=d_lo,
                                   inequality_upper=d_hi, sparsity=sparsity(problem), options=options, throw=False,
                                   checked=True, joint=_joint if problem.terms else None)
        return (_gait if finish is None else finish)(problem, sol)


def _per_phase(name: str, value, phases: int, kind):
    values = (value,) * phases if isinstance(value, kind) else tuple(value)
    if len(values) != phases:
        raise ValueError(f"`{name}`: one for all phases or one per phase ({phases}), got {value!r}.")
    return values


def make_problem(model, gait: ContactGait, speed, *, segments, method, grading, friction, torque_max,
                 duration_bounds, terms=()) -> MultiPhaseProblem:
    """The :class:`~.multiphase.MultiPhaseProblem`, its arguments checked (as :func:`multiphase_gait`)."""
    if not isinstance(gait, ContactGait):
        raise TypeError(f"`gait` must be a ContactGait, got {type(gait).__name__}.")
    P = len(gait.phases)
    segments = _per_phase("segments", segments, P, int)
    if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 for s in segments):
        raise ValueError(f"`segments` must be positive integers, got {segments!r}.")
    grading = _per_phase("grading", grading, P, (int, float))
    if any(not isinstance(r, (int, float)) or not r > 0 for r in grading):
        raise ValueError(f"`grading` must be positive numbers, got {grading!r}.")
    bounds = np.broadcast_to(np.asarray(duration_bounds, float), (P, 2)) if np.ndim(duration_bounds) in (1, 2) \
        else None
    if bounds is None or not np.all(np.isfinite(bounds) & (bounds > 0)) or np.any(bounds[:, 0] > bounds[:, 1]):
        raise ValueError(f"`duration_bounds` must be finite positive (lower, upper) pairs [s], one for all phases "
                         f"or one per phase ({P}), lower ≤ upper; got {duration_bounds!r}.")
    bounds = positive("duration_bounds", bounds)
    f = lambda name, v: positive(name, v, shape=())
    return MultiPhaseProblem(model, f("speed", speed), f("friction", friction), f("torque_max", torque_max),
                             (bounds[:, 0], bounds[:, 1]), tuple(terms), gait,
                             Mesh(method, tuple(int(s) for s in segments), tuple(float(r) for r in grading)))


def multiphase_gait(model, gait: ContactGait, speed, guess, *, segments=3, method: str = "hermite-simpson",
                    grading=1.0, friction=0.8, torque_max=300.0, duration_bounds=(0.01, 0.5), terms=(),
                    options: NLPOptions | None = None, throw: bool = True) -> PhasedGait:
    r"""The symmetric step of `model` through the phases of `gait` at `speed` [m/s] minimising the effort per
    distance ``(1/L)∫Σu² dt`` plus `terms` (:mod:`.multiphase`), free step length and phase durations.

    **Arguments:**

    - `model`: an :class:`~difimpact.AbstractPlanarModel` with a floating base (its parameters are what
      gradients reach); `gait`: a :class:`~difimpact.ContactGait` naming its points, phases and impact.
    - `guess`: a flat start vector of the problem's size, or a :class:`PhasedGait` (or human gait) to start from:
      of the same layout on another mesh (resampled in phase time), or of another layout (:func:`retime`).
    - `segments`, `grading`: per phase (or one for all); `method`: ``"hermite-simpson"`` or ``"trapezoid"``;
      `friction` ``μ``; `torque_max` [N m]; `duration_bounds` [s]: ``(lower, upper)`` per phase or one pair.
    - `options`: as in :func:`~difimpact.solve_nlp` (default up to 500 iterations with IPOPT's bound relaxation
      ``10⁻⁸``); `throw`: as there.

    **Returns:** a :class:`PhasedGait`.
    """
    from .guess import start  # the guesses build on the problem

    options = OPTIONS if options is None else options
    throw = flag("throw", throw)
    problem = make_problem(model, gait, speed, segments=segments, method=method, grading=grading,
                           friction=friction, torque_max=torque_max, duration_bounds=duration_bounds, terms=terms)
    z0 = jnp.asarray(start(problem, guess), jnp.result_type(float))
    if z0.shape != (problem.size,):
        raise ValueError(f"`guess`: expected {problem.size} variables for this mesh, got shape {z0.shape}.")
    return raise_if_failed(solve_problem(problem, as_float("guess", z0), options), throw)
