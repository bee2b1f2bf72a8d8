r"""One step of a walker in single support as a phase of the multi-phase transcription: the stance foot is the
base, pinned at the origin, and the coordinates are the joints' (:class:`~difimpact.PoweredBiped`).

Every collocation point holds ``(θ, \dot θ, τ, u)`` (:class:`StanceLayout`): the joint angles and rates, the
step's duration where it is free (a fixed one is a number of the problem) and the torques [N m]. In phase time
``s ∈ [0, 1]`` the states obey

$$\frac{d}{ds}(θ, \dot θ, τ) = τ\,(\dot θ, \ddot θ, 0),\qquad M_{θθ}\ddot θ = B_θ u - c_θ,\qquad t = τ s,$$

transcribed on the phase's :class:`~.mesh.Mesh` (Kelly 2017, §§3–4). The step is periodic through the heel
strike and the legs' relabelling, which moves the base to the new stance foot
(:meth:`~difimpact.PoweredBiped.heel_strike`): ``θ_0 = R θ_G``,
``\dot θ_0 = R \dot q^+_θ(θ_G, \dot θ_G)``; the swing foot ends on the ground at the step length ``L`` (or at
``v τ`` for a speed ``v``). The cost is the effort ``E = ∫_0^T g\,dt`` of the running cost
``g`` by the mesh's quadrature, ``Σ_i w_i τ_i g_i``, over the normalisation's divisor; the constraints are objects
(:mod:`.stance_terms`). With a free ``τ`` as a state every row meets one point or a segment's, so the Newton
matrix is a band closed into a ring by the periodicity (:mod:`.stages`). No column holds the time ``t``: with
neither curvature nor a bound it would meet only its own chain of defects, a zero pivot for the band's
elimination.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._check import checks_as_nan
from .._custom_types import Array, Float, Scalar
from .._exported import PROGRAM_OPTIONS, stored
from .._nlp import NLPOptions, NLPSolution
from .._nlp.outcome import raise_if_failed
from .._nlp.solve import problem_bounds, solve_nlp_prechecked
from .._nlp.sparsity import Sparsity
from .._validation import as_float, flag
from .mesh import Mesh
from .solve import PhasedGait
from .stages import StageRows, point_stages, stage_sparsity
from .stance_terms import (
    AbstractNormalisation,
    AbstractRunningCost,
    AngleLimits,
    Clearance,
    LiftOff,
    PerDistance,
    PerStep,
    PerTransport,
    PositiveWork,
    StanceFriction,
    StanceValues,
    SwingFootDescending,
    SwingFootRising,
    TorqueSquared,
)


class StanceLayout(eqx.Module):
    """The columns of a point's block: ``θ`` ``[0, n)``, ``\\dot θ`` ``[n, 2n)``, the step's duration ``τ`` where
    it is free, then the `controls`."""

    n: int = eqx.field(static=True)
    controls: int = eqx.field(static=True)
    free_duration: bool = eqx.field(static=True)

    @property
    def tau(self) -> int:
        if not self.free_duration:
            raise ValueError("this layout holds no duration: the step's is fixed.")
        return 2 * self.n

    @property
    def states(self) -> int:
        return 2 * self.n + int(self.free_duration)

    @property
    def block(self) -> int:
        return self.states + self.controls


class StanceProblem(eqx.Module):
    """A step in single support (module docstring).

    - `biped`: the :class:`~difimpact.PoweredBiped`; `mesh`: its one phase's :class:`~.mesh.Mesh`.
    - `cost`: an :class:`~.stance_terms.AbstractRunningCost`; `normalisation`: an
      :class:`~.stance_terms.AbstractNormalisation`; `inequalities`:
      :class:`~.stance_terms.AbstractStanceConstraint` objects, their rows in this order.
    - `step_length` [m] (``None``: free), `speed` [m/s] (``None``: none imposed), `duration` [s] (``None``: free
      within `duration_bounds`).
    - `angle_bounds`, `rate_bounds`, `torque_bounds`: ``(lower, upper)`` on ``θ``, ``\\dot θ``, ``u``.
    """

    biped: object
    mesh: Mesh
    cost: AbstractRunningCost
    normalisation: AbstractNormalisation
    inequalities: tuple
    step_length: Scalar | None
    speed: Scalar | None
    duration: Scalar | None
    duration_bounds: tuple[Scalar, Scalar]
    angle_bounds: tuple[Float[Array, " j"], Float[Array, " j"]]
    rate_bounds: tuple[Float[Array, " j"], Float[Array, " j"]]
    torque_bounds: tuple[Float[Array, " k"], Float[Array, " k"]]

    @property
    def layout(self) -> StanceLayout:
        return StanceLayout(self.biped.joints, self.biped.controls, self.duration is None)

    @property
    def points(self) -> int:
        return self.mesh.points[0]

    @property
    def offsets(self) -> tuple[int, ...]:
        return self.mesh.offsets

    @property
    def size(self) -> int:
        return self.points * self.layout.block

    def times(self) -> np.ndarray:
        return self.mesh.times()

    def unpack(self, z):
        """``(θ, θ̇, x, u)``: the angles and rates ``(G, j)``, all the states ``(G, S)`` and the torques."""
        L, j = self.layout, self.layout.n
        Z = z.reshape(-1, L.block)
        return Z[:, :j], Z[:, j:2 * j], Z[:, :L.states], Z[:, L.states:]

    def durations(self, x) -> Float[Array, "G 1"]:
        """``τ`` at every point, from the states `x` ``(G, S)``: its column, or the fixed duration."""
        if self.duration is None:
            return x[:, self.layout.tau:self.layout.tau + 1]
        return jnp.full((x.shape[0], 1), self.duration, x.dtype)

    def field(self, z):
        """``(f, F)``: the states' phase-time derivatives and the ground's force ``(F_t, F_n)`` on the stance
        foot [N], at every point."""
        theta, theta_dot, x, u = self.unpack(z)
        acc, force = jax.vmap(self.biped.dynamics)(theta, theta_dot, u)
        f = [theta_dot, acc] + ([jnp.zeros((x.shape[0], 1), x.dtype)] if self.duration is None else [])
        return self.durations(x) * jnp.concatenate(f, axis=1), force

    def objective(self, z):
        r"""The running cost's quadrature over the normalisation's divisor (of the fixed step length, or the swing
        foot's reach), ``Σ_i w_i τ_i g_i / D(L)``: the effort as a sum over the points rather than a state read at
        the end, so that the objective carries the running cost's curvature (an effort state's defects would carry
        it only through their multipliers)."""
        theta, theta_dot, x, u = self.unpack(z)
        w = jnp.asarray(self.mesh.weights(), z.dtype)
        effort = (w * self.durations(x)[:, 0]) @ self.cost.running(self.biped, theta_dot, u)
        length = (self.step_length if self.step_length is not None else
                  self.biped.swing_foot_position(theta[-1])[0])
        return effort / self.normalisation.divisor(self.biped, length)

    def constraints(self, z):
        """``(c, d)``: the equalities and the inequalities from one evaluation of the dynamics at every point and
        of the heel strike (what the solver differentiates)."""
        theta, theta_dot, x, _ = self.unpack(z)
        f, force = self.field(z)
        rates_plus, impact = self.biped.heel_strike(theta[-1], theta_dot[-1], diagnose=False)
        values = StanceValues(theta, theta_dot, force, impact)
        d = [c.values(self.biped, values) for c in self.inequalities]
        return self._equality(x, f, rates_plus), jnp.concatenate(d) if d else None

    def _equality(self, x, f, rates_plus):
        """The defects; the periodicity through heel strike and relabelling; the swing foot on the ground at the
        step's end, at the step length or the speed's."""
        j = self.layout.n
        rows = [self.mesh.defects(0, x, f).reshape(-1)]
        rows += [x[0, :j] - self.biped.relabel(x[-1, :j]), x[0, j:2 * j] - rates_plus]
        foot = self.biped.swing_foot_position(x[-1, :j])
        rows.append(foot[1:])
        if self.step_length is not None:
            rows.append(jnp.reshape(foot[0] - self.step_length, (1,)))
        if self.speed is not None:
            rows.append(jnp.reshape(foot[0] - self.speed * self.durations(x)[-1, 0], (1,)))
        return jnp.concatenate(rows)

    def inequality_bounds(self, dtype):
        bounds = [c.bounds(self.points, dtype) for c in self.inequalities]
        if not bounds:
            return None, None
        return tuple(jnp.concatenate(b).astype(dtype) for b in zip(*bounds))

    def variable_bounds(self, dtype):
        """``θ``, ``θ̇`` and ``u`` within their bounds at every point; the first point's duration within
        `duration_bounds` where it is free (the defects carry it to the others)."""
        G, L = self.points, self.layout
        inf = jnp.full(L.states - 2 * L.n, jnp.inf, dtype)
        lo = jnp.concatenate([self.angle_bounds[0], self.rate_bounds[0], -inf, self.torque_bounds[0]])
        hi = jnp.concatenate([self.angle_bounds[1], self.rate_bounds[1], inf, self.torque_bounds[1]])
        lo, hi = jnp.tile(lo.astype(dtype), (G, 1)), jnp.tile(hi.astype(dtype), (G, 1))
        if L.free_duration:
            lo, hi = lo.at[0, L.tau].set(self.duration_bounds[0]), hi.at[0, L.tau].set(self.duration_bounds[1])
        return lo.reshape(-1), hi.reshape(-1)


def sparsity(problem: StanceProblem) -> Sparsity:
    """The derivatives' sparsity, in the row order of the equalities then the inequalities: a defect meets its
    segment's points, the periodicity the first and last, the rest one point each; the Hessian of the Lagrangian
    is block diagonal per point but for the last point's angles where the cost is divided by a free step length.
    From the layout (:mod:`.stages`), ``O(nnz)``."""
    L, G = problem.layout, problem.points
    rows = StageRows(np.arange(G * L.block).reshape(G, L.block), G * L.block)
    hs = problem.mesh.method == "hermite-simpson"
    n = problem.mesh.segments[0]
    segments = [(2 * i, 2 * i + 1, 2 * i + 2) if hs else (i, i + 1) for i in range(n)]
    for _ in range(2 if hs else 1):
        for seg in segments:
            rows.add(seg, count=L.states)
    periodicity = len(rows) + np.arange(2 * L.n)  # the ring's border (:mod:`difimpact._nlp.bordered`)
    rows.add((0, G - 1), count=2 * L.n)
    rows.add((G - 1,), count=1 + int(problem.step_length is not None) + int(problem.speed is not None))
    for c in problem.inequalities:
        for points, count in c.footprint(G):
            rows.add(points, count=count)
    # the last point's angles meet every point in a cost divided by a free step length
    dense = rows.columns[G - 1, :L.n] if problem.step_length is None and not isinstance(
        problem.normalisation, PerStep) else ()
    # points three apart share no row (a segment's rows meet three consecutive points of the Hermite–Simpson
    # mesh, two of the trapezoidal one)
    return stage_sparsity(rows, groups=3, dense=dense, border_equalities=periodicity,
                          point_stages=point_stages([G], hs))


def from_gait_problem(problem) -> StanceProblem:
    """The :class:`StanceProblem` of a :class:`~difimpact._powered.problem.GaitProblem` (what
    :func:`~difimpact.optimal_gait` builds from its arguments, checked): the same discrete problem, its cost
    and constraints as objects."""
    cost = TorqueSquared() if problem.cost == "torque-squared" else PositiveWork(problem.smoothing)
    normalisation = {"none": PerStep(), "distance": PerDistance(), "transport": PerTransport()}[problem.normalise]
    rows = []
    if problem.limit_pairs:
        rows.append(AngleLimits(problem.limit_rows(problem.limit_pairs), *problem.limits))
    if problem.rate_pairs:
        rows.append(AngleLimits(problem.limit_rows(problem.rate_pairs), *problem.rate_limits, rates=True))
    if problem.friction is not None:
        rows.append(StanceFriction(problem.friction))
    if problem.clearance is not None:
        rows.append(Clearance(problem.clearance))
    if problem.foot_velocity == "both":
        rows.append(SwingFootRising())
    if problem.foot_velocity != "none":
        rows.append(SwingFootDescending())
    if problem.lift_off == "impose":
        rows.append(LiftOff())
    rows += list(problem.constraints)
    return StanceProblem(problem.biped, Mesh(problem.method, (problem.segments,), (1.0,)), cost, normalisation,
                         tuple(rows), problem.step_length, problem.speed, problem.step_time, problem.time_bounds,
                         problem.angle_bounds, problem.rate_bounds, problem.torque_bounds)


def initial_guess(problem: StanceProblem, theta0, T) -> Float[Array, " N"]:
    """Kelly's guess (OptimTraj ``MAIN.m``): the joint angles linear in time from ``θ_0`` to the posture whose
    relabelling is ``θ_0``, constant rates, zero torques, the step lasting `T` [s]."""
    G, k, dtype = problem.points, problem.layout.controls, theta0.dtype
    # R is the model's, concrete: inverted on the host (no LAPACK in a program a caller may vmap)
    theta_end = jnp.asarray(np.linalg.inv(problem.biped.relabelling()), dtype) @ theta0
    s = jnp.asarray(problem.times(), dtype)[:, None]
    theta = theta0[None, :] + s * (theta_end - theta0)[None, :]
    rates = jnp.broadcast_to(((theta_end - theta0) / T)[None, :], theta.shape)
    return pack(problem, jnp.concatenate([theta, rates], axis=1), jnp.zeros((G, k), dtype), T)


def pack(problem: StanceProblem, x, u, T) -> Float[Array, " N"]:
    """The variables of `problem` from the joint states ``x = (θ, θ̇)`` ``(G, 2j)`` and the torques `u` ``(G, k)``
    at its points, the step lasting `T` [s] (held where the duration is free)."""
    G, dtype = problem.points, x.dtype
    tau = [jnp.broadcast_to(jnp.asarray(T, dtype), (G, 1))] if problem.layout.free_duration else []
    return jnp.concatenate([x] + tau + [u.astype(dtype)], axis=1).reshape(-1)


def resample(problem: StanceProblem, old: StanceProblem, x_old) -> np.ndarray:
    """A start vector for `problem` from the optimum `x_old` of `old` (another mesh of the same step; a warm
    start): every column interpolated linearly in phase time. ``O(G)``."""
    return problem.mesh.resample(np.asarray(x_old).reshape(-1, problem.layout.block), old.mesh).reshape(-1)


def start(problem: StanceProblem, guess) -> Float[Array, " N"]:
    """The start vector: a solved step of this layout (its optimum; from another mesh resampled in phase time,
    :func:`resample`), or Kelly's guess from the joint angles ``θ_0`` after heel strike."""
    if isinstance(getattr(guess, "problem", None), StanceProblem):
        old, x = guess.problem, guess.solution.x
        if old.layout != problem.layout:
            raise ValueError("`guess`: a step of another walker (other joints or actuators), or with the duration "
                             "fixed in one and free in the other.")
        return x if old.mesh == problem.mesh else jnp.asarray(resample(problem, old, x), x.dtype)
    theta0 = as_float("guess", guess, shape=(problem.biped.joints,))
    T0 = problem.duration if problem.duration is not None else problem.step_length / problem.speed
    return initial_guess(problem, theta0, T0)


def step_gait(problem: StanceProblem, sol: NLPSolution) -> PhasedGait:
    """The :class:`~.solve.PhasedGait` of the solution `sol` of `problem`."""
    theta, theta_dot, x, u = problem.unpack(sol.x)
    _, force = problem.field(sol.x)
    _, impact = problem.biped.heel_strike(theta[-1], theta_dot[-1])
    length = problem.biped.swing_foot_position(theta[-1])[0]
    tau = problem.durations(x)
    T = tau[-1, 0]
    return PhasedGait(
        t=T * jnp.asarray(problem.times(), x.dtype), q=theta, qdot=theta_dot, u=u,
        phase=jnp.zeros(problem.points, int), forces=force[:, ::-1], durations=tau[:1, 0], step_time=T,
        step_length=length, speed=length / T, cost=sol.value, impact=impact, problem=problem, solution=sol,
        result=sol.result, iterations=sol.iterations)


def step_objective(z, p: StanceProblem):
    """`p`'s objective at `z` (the solver's ``f(z, args)``)."""
    return p.objective(z)


def step_constraints(z, p: StanceProblem):
    """`p`'s ``(c, d)`` at `z` (the solver's ``constraints(z, args)``)."""
    return p.constraints(z)


def bounds(problem: StanceProblem, z0):
    """The variables' and the inequalities' bounds, checked before the program
    (:func:`~difimpact._nlp.solve.all_bounds`)."""
    return problem_bounds(problem, z0)


@stored("stance_gait", PROGRAM_OPTIONS)
@eqx.filter_jit
def solve_stance(problem: StanceProblem, z0, bounds, options: NLPOptions) -> PhasedGait:
    """The transcribed step solved from `z0` within `bounds` (:func:`bounds`), both checked before it: one
    program per problem structure. The model's own checks make the values they guard NaN
    (:func:`~difimpact._check.checks_as_nan`), which the solve rejects as a trial point or reports as
    ``NLPResults.nonfinite``."""
    lower, upper, d_lo, d_hi = bounds
    with checks_as_nan():
        sol = solve_nlp_prechecked(step_objective, z0, problem, equality=None, inequality=None,
                                   constraints=step_constraints, lower=lower, upper=upper, inequality_lower=d_lo,
                                   inequality_upper=d_hi, sparsity=sparsity(problem), options=options, throw=False,
                                   checked=True)
        return step_gait(problem, sol)


def stance_gait(problem: StanceProblem, guess, *, options: NLPOptions | None = None,
                throw: bool = True) -> PhasedGait:
    """The optimal step of `problem` from `guess` (:func:`start`): a :class:`~.solve.PhasedGait` whose ``q`` and
    ``qdot`` are the joint angles and rates, ``forces`` the stance foot's ``(F_n, F_t)`` and ``impact`` the heel
    strike's; `options`, `throw` as in :func:`~difimpact.solve_nlp`."""
    throw = flag("throw", throw)
    options = NLPOptions() if options is None else options
    z0 = as_float("guess", start(problem, guess))
    return raise_if_failed(solve_stance(problem, z0, bounds(problem, z0), options), throw)
