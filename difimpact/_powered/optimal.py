"""``optimal_gait``: the optimal periodic step of a powered biped by direct collocation and the interior-point
method of :func:`~difimpact.solve_nlp`, differentiable in the model's and the problem's parameters."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._check import _is_concrete, checks_as_nan
from .._custom_types import Array, Float, Int, Scalar
from .._exported import PROGRAM_OPTIONS, stored
from .._nlp import NLPOptions, NLPResults, NLPSolution
from .._nlp.outcome import raise_if_failed as raise_if_failed
from .._nlp.solve import problem_bounds, solve_nlp_prechecked
from .._tree.topology import ancestry
from .._validation import as_float, flag, instance, ordered, positive
from .._collocation import methods as collocation, stance, stance_terms
from .biped import PoweredBiped
from .problem import COSTS, GaitProblem, NORMALISATIONS


class OptimalGait(eqx.Module):
    """An optimal periodic step (:func:`optimal_gait`).

    - `t` ``(G,)``, `theta` ``(G, j)``, `theta_dot` ``(G, j)``, `u` ``(G, k)``: the collocation solution, from
      just after one heel strike (``t = 0``) to just before the next (``t = T``).
    - `cost`: the objective's value; `step_time`, `step_length` [m], `speed` [m/s].
    - `impact_loss` [J], `xi` (loss / ``T⁻``), `xi_I` (``T_c⁻/T⁻``, Font & Kövecses 2008, eq. 23), `lift_off_speed`
      ($v_{Sn}^+$ [m/s], the trailing foot's normal velocity after heel strike, positive when it lifts off;
      Font & Kövecses 2008, eq. 4), `impulses` (the swing foot's ``(λ_n, λ_t)`` [N s]).
    - `theta_dot_plus`: post-impact joint rates after the relabelling (``= theta_dot[0]`` at a solution).
    - `ground_force` ``(G, 2)``: ``(F_t, F_n)`` on the stance foot [N].
    - `positive_work`, `net_work` [J]: ``∫ Σ max(0, u ω) dt`` and ``∫ Σ u ω dt`` by the method's quadrature.
    - `problem`: the :class:`GaitProblem` solved; `solution`: the :class:`~difimpact.NLPSolution`;
      `result`, `iterations`.
    """

    t: Float[Array, " G"]
    theta: Float[Array, "G j"]
    theta_dot: Float[Array, "G j"]
    u: Float[Array, "G k"]
    cost: Scalar
    step_time: Scalar
    step_length: Scalar
    speed: Scalar
    impact_loss: Scalar
    xi: Scalar
    xi_I: Scalar
    lift_off_speed: Scalar
    impulses: Float[Array, " 2"]
    theta_dot_plus: Float[Array, " j"]
    ground_force: Float[Array, "G 2"]
    positive_work: Scalar
    net_work: Scalar
    problem: GaitProblem
    solution: NLPSolution
    result: NLPResults
    iterations: Int[Array, ""]

    def state(self, t) -> tuple[Float[Array, " j"], Float[Array, " j"], Float[Array, " k"]]:
        """``(θ, θ̇, u)`` at time ``t`` by the method's interpolation (Kelly 2017, eqs. 3.8–3.9, 4.8, 4.10)."""
        p = self.problem
        x = jnp.concatenate([self.theta, self.theta_dot], axis=1)
        f, _ = p._field(x, self.u)
        x_t, u_t = collocation.interpolate(p.method, self.t, x, f, self.u, t)
        j = self.theta.shape[1]
        return x_t[:j], x_t[j:], u_t


def _pair(name, value, size, dtype):
    """A ``(lower, upper)`` pair of bounds (scalars or ``(size,)``; ``None``: unbounded) as two ``(size,)`` arrays,
    checked: no NaN, lower ≤ upper."""
    if value is None:
        return jnp.full(size, -jnp.inf, dtype), jnp.full(size, jnp.inf, dtype)
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"`{name}` must be a (lower, upper) pair, got {value!r}.")
    lo, hi = (as_float(f"{name}[{i}]", v, finite=False) for i, v in enumerate(value))
    for i, v in enumerate((lo, hi)):
        if v.shape not in ((), (size,)):
            raise ValueError(f"`{name}[{i}]` must be a scalar or shape ({size},), got {v.shape}.")
    lo, hi = (jnp.broadcast_to(v, (size,)).astype(dtype) for v in (lo, hi))
    return ordered(lo, hi, (f"{name}[0]", f"{name}[1]")), hi


def _limits(name, limits, bodies, dtype):
    """``(body_a, body_b | None, lower, upper)`` items, checked: the pairs and the bounds' arrays."""
    if not limits:
        return (), (jnp.zeros(0, dtype), jnp.zeros(0, dtype))
    pairs, lo, hi = [], [], []
    for item in limits:
        if not (isinstance(item, (tuple, list)) and len(item) == 4):
            raise TypeError(f"`{name}` items must be (body_a, body_b or None, lower, upper), got {item!r}.")
        for b in item[:2]:
            if not (b is None and b is item[1]) and b not in bodies:
                raise ValueError(f"`{name}`: unknown body {b!r}; the model has {list(bodies)}.")
        pairs.append((item[0], item[1]))
        lo.append(as_float(f"{name} lower", item[2], finite=False, shape=()))
        hi.append(as_float(f"{name} upper", item[3], finite=False, shape=()))
    lo, hi = jnp.stack(lo).astype(dtype), jnp.stack(hi).astype(dtype)
    return tuple(pairs), (ordered(lo, hi, (f"{name} lower", f"{name} upper")), hi)


def _reach(biped: PoweredBiped) -> float | None:
    """The largest distance from the stance foot to the swing foot over all postures: the lengths of the rigid
    segments on the tree's path between them, end to end (``None`` where the model's numbers are traced)."""
    tree = biped.model.tree()
    arrays = (tree.attach, tree.point_local, tree.point_radius)
    if not all(_is_concrete(a) for a in arrays):
        return None
    attach, local, radius = (np.asarray(a, float) for a in arrays)
    feet = [tree.point_index(p) for p in (biped.stance_foot, biped.swing_foot)]
    chains = [ancestry(tree.parent, tree.point_body[k]) for k in feet]
    top = next((b for b in chains[0] if b in chains[1]), -1)  # the nearest common body; -1: the base
    total, ends = 0.0, []
    for k, chain in zip(feet, chains):
        total += radius[k]
        end = local[k]
        for b in chain[:chain.index(top) if top >= 0 else len(chain)]:
            total += np.hypot(*end)
            end = attach[b] if tree.parent[b] >= 0 else np.zeros(2)  # a root's joint is the base
        ends.append(end)
    return float(total + np.hypot(*(ends[0] - ends[1])))


def make_problem(biped, *, step_length, step_time, speed, method, segments, cost, normalise, angle_bounds,
                 rate_bounds, torque_bounds, time_bounds, joint_limits, rate_limits, friction, clearance,
                 foot_velocity, lift_off, smoothing, dtype, constraints=()) -> GaitProblem:
    """The :class:`GaitProblem` of :func:`optimal_gait`'s arguments, checked."""
    instance("biped", biped, PoweredBiped)
    collocation.check_method(method, segments)
    foot_velocity = {True: "both", False: "none"}.get(foot_velocity, foot_velocity) if isinstance(
        foot_velocity, bool) else foot_velocity
    for name, value, allowed in (("cost", cost, COSTS), ("normalise", normalise, NORMALISATIONS),
                                 ("lift_off", lift_off, ("report", "impose")),
                                 ("foot_velocity", foot_velocity, ("both", "strike", "none"))):
        if not isinstance(value, str) or value not in allowed:
            raise ValueError(f"`{name}` must be one of {allowed}, got {value!r}.")
    if (step_time is None) == (speed is None):
        raise ValueError("give exactly one of `step_time` (fixed) and `speed` (the step time is then free).")
    if speed is not None and step_length is None:
        raise ValueError("`speed` needs `step_length` (the speed is the step length over the free step time).")
    j, k = biped.joints, biped.controls
    bodies = biped.model.tree().body_names
    opt = lambda name, v: None if v is None else positive(name, v, shape=()).astype(dtype)  # noqa: E731
    step_length = opt("step_length", step_length)
    reach = None if step_length is None or not _is_concrete(step_length) else _reach(biped)
    if reach is not None and float(step_length) > reach:
        raise ValueError(f"`step_length` = {float(step_length):g} m is longer than the walker can span: its feet "
                         f"are at most {reach:.4g} m apart (every segment between them straight).")
    if not isinstance(constraints, (tuple, list)) or not all(
            isinstance(c, stance_terms.AbstractStanceConstraint) for c in constraints):
        raise TypeError("`constraints` must be a tuple of constraint objects (e.g. `PointwiseConstraint`), got "
                        f"{constraints!r}.")
    pairs, limits = _limits("joint_limits", joint_limits, bodies, dtype)
    rate_pairs, rate_limits = _limits("rate_limits", rate_limits, bodies, dtype)
    return GaitProblem(
        biped=biped, step_length=step_length, step_time=opt("step_time", step_time),
        speed=opt("speed", speed), angle_bounds=_pair("angle_bounds", angle_bounds, j, dtype),
        rate_bounds=_pair("rate_bounds", rate_bounds, j, dtype),
        torque_bounds=_pair("torque_bounds", torque_bounds, k, dtype),
        time_bounds=tuple(x[0] for x in _pair("time_bounds", time_bounds, 1, dtype)), limits=limits,
        rate_limits=rate_limits,
        friction=opt("friction", friction), clearance=None if clearance is None else as_float(
            "clearance", clearance, shape=()).astype(dtype),
        smoothing=positive("smoothing", smoothing, shape=()).astype(dtype), constraints=tuple(constraints),
        limit_pairs=pairs, rate_pairs=rate_pairs,
        method=method,
        segments=int(segments), cost=cost, normalise=normalise, foot_velocity=foot_velocity,
        lift_off=lift_off)


def initial_guess(problem: GaitProblem, theta0, T) -> Float[Array, " N"]:
    """Kelly's guess (OptimTraj ``MAIN.m``) in the variables of `problem`'s transcription
    (:func:`~difimpact._collocation.stance.initial_guess`)."""
    return stance.initial_guess(stance.from_gait_problem(problem), theta0, T)


def resample(gait: OptimalGait, problem: GaitProblem) -> Float[Array, " N"]:
    """The variables of `problem` from `gait`'s solution on another mesh or method: states and torques by the
    solution's interpolation (:meth:`OptimalGait.state`) at the new points, the same step time."""
    if (gait.theta.shape[1], gait.u.shape[1]) != (problem.biped.joints, problem.biped.controls):
        raise ValueError("`guess`: an OptimalGait of another walker (other joints or actuators).")
    T = gait.step_time if problem.step_time is None else problem.step_time
    t = collocation.times(problem.method, problem.segments, T) * (gait.step_time / T)
    theta, theta_dot, u = jax.vmap(gait.state)(t)
    return stance.pack(stance.from_gait_problem(problem), jnp.concatenate([theta, theta_dot], axis=1), u, T)


def _gait(problem: GaitProblem, step: stance.StanceProblem, sol: NLPSolution) -> OptimalGait:
    """The gait of the solution `sol` of `step`, `problem`'s transcription (:func:`~.stance.step_gait`)."""
    g = stance.step_gait(step, sol)
    T, u, imp = g.step_time, g.u, g.impact
    w = jnp.asarray(collocation.weights(problem.method, problem.segments), sol.x.dtype)
    power = u * jax.vmap(problem.biped.joint_rates)(g.qdot)
    return OptimalGait(
        t=collocation.times(problem.method, problem.segments, T), theta=g.q, theta_dot=g.qdot, u=u,
        cost=g.cost, step_time=T, step_length=g.step_length, speed=g.speed,
        impact_loss=imp.loss, xi=imp.xi, xi_I=imp.xi_I, lift_off_speed=problem.biped.lift_off_speed(imp),
        impulses=imp.impulses, theta_dot_plus=problem.biped.relabelled_rates(imp), ground_force=g.forces[:, ::-1],
        positive_work=T * (w @ jnp.sum(jnp.maximum(power, 0.0), axis=1)), net_work=T * (w @ jnp.sum(power, axis=1)),
        problem=problem, solution=sol, result=sol.result, iterations=sol.iterations)


def optimal_gait(
    biped: PoweredBiped,
    guess,
    *,
    step_length=None,
    step_time=None,
    speed=None,
    method: str = "hermite-simpson",
    segments: int = 10,
    cost: str = "torque-squared",
    normalise: str = "none",
    angle_bounds=None,
    rate_bounds=None,
    torque_bounds=None,
    time_bounds=(0.05, 5.0),
    joint_limits=(),
    rate_limits=(),
    friction=None,
    clearance=None,
    foot_velocity: bool | str = False,
    lift_off: str = "report",
    smoothing=1e-3,
    constraints=(),
    options: NLPOptions = NLPOptions(),
    throw: bool = True,
) -> OptimalGait:
    r"""The optimal periodic step of `biped` on level ground by direct collocation (a phase in single support,
    :mod:`difimpact._collocation.stance`) and the interior-point method of :func:`~difimpact.solve_nlp`, under
    ``jit`` and ``vmap``. Derivatives of what is computed from the result (cost, speed, impact loss, ``ξ`` …) with
    respect to the model's and the problem's numbers are exact at the optimum (the implicit function theorem).

    **Arguments:**

    - `biped`: a :class:`~difimpact.PoweredBiped`.
    - `guess`: the joint angles ``θ_0`` just after heel strike ``(j,)`` — the start is Kelly's guess from it
      (linear to the posture whose relabelling is ``θ_0``, zero torques) — or an :class:`OptimalGait` (a warm
      start; from another mesh or method its solution is interpolated onto this one).
    - `step_length` [m]: where the swing foot strikes (``None``: free), at most the walker's reach (the segments
      between its feet end to end).
    - `step_time` [s] (fixed), or `speed` [m/s] (the step time is then free, within `time_bounds`).
    - `method`: ``"hermite-simpson"`` (separated form) or ``"trapezoid"``; `segments`: the mesh.
    - `cost`: ``"torque-squared"`` (``∫Σu² dt``) or ``"positive-work"`` (``∫Σ max(0, uω) dt``, smoothed by
      `smoothing` [W]); `normalise`: ``"none"``, ``"distance"`` (÷ step length) or ``"transport"`` (÷ m g L).
    - `angle_bounds`, `rate_bounds`: ``(lower, upper)`` on ``θ`` and ``θ̇`` (scalars or ``(j,)``);
      `torque_bounds` on ``u`` (scalars or ``(k,)``); ``None``: unbounded.
    - `joint_limits`: ``(body_a, body_b, lower, upper)`` on the angle ``θ_a − θ_b`` (less its constant offset)
      at every point (e.g. knees that do not hyperextend); ``body_b = None`` bounds ``θ_a``, the absolute angle.
      `rate_limits`: the same on the rates ``θ̇_a − θ̇_b``.
    - `friction`: ``μ``: the stance foot's ``F_n ≥ 0`` and ``|F_t| ≤ μ F_n`` at every point (``None``: not imposed);
      `clearance` [m]: the swing foot's least height at the interior points (``None``: may scuff).
    - `foot_velocity`: ``True`` (or ``"both"``): the swing foot rises at the start and descends at the end
      (Kelly's ``cst_footVel``); ``"strike"``: it descends at the end (a heel strike, not a foot coming up
      through the ground); ``False``: neither.
    - `lift_off`: ``"report"`` the trailing foot's post-impact normal velocity, or ``"impose"`` it ``≥ 0``.
    - `constraints`: further path constraints as objects, e.g. :class:`~difimpact.PointwiseConstraint`.
    - `options`: :class:`~difimpact.NLPOptions`; `throw`: raise on a failed solve (else see ``result``).

    **Returns:** an :class:`OptimalGait`.

    **Example:**

    ```python
    import math, jax.numpy as jnp
    import difimpact as di
    a = math.asin(0.25 / 0.8)                       # legs of 0.8 m, a step of 0.5 m: the stance leg's angle
    walker = di.biped_torso_walker()                # BipedWithTorso with hip and torso motors
    gait = di.optimal_gait(walker, jnp.array([-a, -2 * a, -a]), step_length=0.5, step_time=0.5, segments=4)
    print(gait.cost, gait.speed, gait.impact_loss)  # 138.3 N² m² s, 1.0 m/s, 14.87 J at heel strike
    ```
    """
    problem = make_problem(
        biped, step_length=step_length, step_time=step_time, speed=speed, method=method, segments=segments,
        cost=cost, normalise=normalise, angle_bounds=angle_bounds, rate_bounds=rate_bounds,
        torque_bounds=torque_bounds, time_bounds=time_bounds, joint_limits=joint_limits, rate_limits=rate_limits,
        friction=friction, clearance=clearance, foot_velocity=foot_velocity, lift_off=lift_off,
        smoothing=smoothing, dtype=jnp.result_type(float), constraints=constraints)
    throw = flag("throw", throw)
    z0 = as_float("guess", _start(problem, guess))
    return raise_if_failed(_solve(problem, z0, _bounds(problem, z0), options), throw)


def _start(problem: GaitProblem, guess) -> Float[Array, " N"]:
    """The starting point: a warm start from an :class:`OptimalGait`, or Kelly's guess from joint angles."""
    if isinstance(guess, OptimalGait):
        old, new = (stance.from_gait_problem(p) for p in (guess.problem, problem))
        same = old.layout == new.layout and old.mesh == new.mesh
        return guess.solution.x if same else resample(guess, problem)
    theta0 = as_float("guess", guess, shape=(problem.biped.joints,))
    T0 = problem.step_time if problem.step_time is not None else problem.step_length / problem.speed
    return initial_guess(problem, theta0, T0)


def _bounds(problem: GaitProblem, z0):
    """The bounds of the variables and of the inequalities, ``(lower, upper, inequality_lower, inequality_upper)``,
    checked before the program (:func:`~difimpact._nlp.solve.all_bounds`): in Python where they are concrete,
    by ``equinox.error_if`` in the caller's program where they are traced."""
    return problem_bounds(stance.from_gait_problem(problem), z0)


@stored("optimal_gait", PROGRAM_OPTIONS)
@eqx.filter_jit
def _solve(problem: GaitProblem, z0, bounds, options: NLPOptions) -> OptimalGait:
    """The problem transcribed as a step in single support (:mod:`difimpact._collocation.stance`) and solved (one
    compiled program per problem structure, reused by later calls), from `z0` within `bounds` (:func:`_bounds`),
    both checked before it: no run-time check in the program. The model's own checks (a singular mass matrix, an
    overflow) make the values they guard NaN (:func:`checks_as_nan`), which the solve rejects as a trial point or
    reports as ``NLPResults.nonfinite``."""
    lower, upper, d_lo, d_hi = bounds
    step = stance.from_gait_problem(problem)
    with checks_as_nan():
        sol = solve_nlp_prechecked(stance.step_objective, z0, step, equality=None, inequality=None,
                                   constraints=stance.step_constraints, lower=lower, upper=upper,
                                   inequality_lower=d_lo, inequality_upper=d_hi, sparsity=stance.sparsity(step),
                                   options=options, throw=False, checked=True)
        return _gait(problem, step, sol)
