r"""``human_gait``: the optimal (predictive, or tracking with :mod:`.tracking`) symmetric step of the seven-link
human by multi-phase direct collocation (:mod:`.problem`) and :func:`~difimpact.solve_nlp`."""

import importlib.resources

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._collocation import methods as collocation
from .._collocation import multiphase
from .._collocation.mesh import Mesh
from .._collocation.solve import solve_problem
from .._custom_types import Array, Float, Int, Scalar
from .._impact.kkt import ImpactSolution
from .._models.seven_link_human import SevenLinkHuman
from .._nlp import NLPOptions, NLPResults, NLPSolution
from .._powered.optimal import raise_if_failed
from .._validation import as_float, flag, instance, positive
from . import phases as ph
from .phases import PHASES, N
from .problem import IE, IT, ITAU, B, HumanGaitProblem, S, U

# Guessed shares of the step (heel strike to heel strike) of the phases double, heel, flat, toe.
SHARES = (0.2, 0.05, 0.4, 0.35)
# Bounds of the phases' durations [s]: double support and the rockers of normal gait at 1–1.6 m/s are within them.
DURATIONS = ((0.03, 0.25), (0.01, 0.15), (0.05, 0.45), (0.05, 0.35))
# The solver's options for this transcription: IPOPT's bound relaxation (Wächter & Biegler 2006, §3.5), since the
# first point's time and effort are fixed by equalities and bounded by 0 (no strict interior without it).
OPTIONS = NLPOptions(max_steps=500, bound_relax_factor=1e-8)


class HumanGait(eqx.Module):
    """One optimal step of :func:`human_gait`, from just after the right heel strikes to just before the left one.

    - `t` ``(G,)`` [s], `q`, `qdot` ``(G, 9)``, `u` ``(G, 6)`` [N m] at the collocation points of all phases in
      order (a phase's last point and the next one's first are the same instant); `phase` ``(G,)`` its index in
      :data:`~difimpact._human_gait.phases.PHASES`.
    - `grf` ``(G, 2, 2)``: the ground's force on the right and the left foot, ``(F_x, F_y)`` [N].
    - `durations` ``(4,)`` [s]; `step_time` [s], `step_length` [m] (heel to heel), `speed` [m/s].
    - `cost`: ``(1/L)∫Σu² dt`` [N² m s] (plus the tracking terms of a tracked gait: `effort` is this part alone).
    - `positive_work`, `net_work` [J]: ``∫Σ max(0, u θ̇) dt`` and ``∫ Σ u θ̇ dt``;
      `cost_of_transport`: `positive_work` / (m L) [J/(kg m)].
    - `impact`: the heel strike's :class:`~difimpact.ImpactSolution` (``impulses`` CAL_L ``(n, t)``, MH_R ``(n, t)``).
    - `problem`, `solution`, `result`, `iterations`.
    """

    t: Float[Array, " G"]
    q: Float[Array, "G 9"]
    qdot: Float[Array, "G 9"]
    u: Float[Array, "G 6"]
    phase: Int[Array, " G"]
    grf: Float[Array, "G 2 2"]
    durations: Float[Array, " 4"]
    step_time: Scalar
    step_length: Scalar
    speed: Scalar
    cost: Scalar
    effort: Scalar
    positive_work: Scalar
    net_work: Scalar
    cost_of_transport: Scalar
    impact: ImpactSolution
    problem: HumanGaitProblem
    solution: NLPSolution
    result: NLPResults
    iterations: Int[Array, ""]


def _gait(problem: HumanGaitProblem, sol: NLPSolution) -> HumanGait:
    Z = sol.x.reshape(-1, B)
    x, u = Z[:, :S], U * Z[:, S:]
    _, lam, _ = problem.field(sol.x)
    feet = lam.reshape(-1, 2, 2, 2).sum(axis=2)  # (G, foot, (n, t))
    power = u * x[:, N + 3:2 * N]
    w = jnp.asarray(problem.weights(), x.dtype) * x[:, ITAU]
    q_end, qd_end = problem.end(sol.x)
    length = problem.step_length(sol.x)
    pos = w @ jnp.maximum(power, 0.0).sum(1)
    mass = jnp.sum(problem.model.tree().mass)
    o = problem.offsets
    return HumanGait(
        t=x[:, IT], q=x[:, :N], qdot=x[:, N:2 * N], u=u, grf=feet[:, :, ::-1],
        phase=jnp.asarray(np.repeat(np.arange(len(PHASES)), problem.points)),
        durations=x[np.array(o[:-1]), ITAU], step_time=x[-1, IT], step_length=length, speed=length / x[-1, IT],
        cost=U**2 * sol.value, effort=U**2 * x[-1, IE] / length, positive_work=pos, net_work=w @ power.sum(1),
        cost_of_transport=pos / (mass * length), impact=ph.heel_strike(problem.model, q_end, qd_end),
        problem=problem, solution=sol, result=sol.result, iterations=sol.iterations)


def measured_cycle() -> dict[str, np.ndarray]:
    """The treadmill trial's cycle shipped in ``difimpact/data/gait`` (columns by name; angles in degrees)."""
    path = importlib.resources.files("difimpact") / "data" / "gait" / "cycle_treadmill_gait10dof18musc_subject01.csv"
    with path.open() as fh:
        lines = [ln for ln in fh.read().splitlines() if not ln.startswith("#")]
    names = lines[0].split(",")
    data = np.array([[float(v) for v in ln.split(",")] for ln in lines[1:]])
    return {n: data[:, i] for i, n in enumerate(names)}


def measured_angles(pct) -> np.ndarray:
    """``(len(pct), 6)`` joint angles of the right leg at `pct` % of the cycle and of the left at `pct` + 50 (a
    symmetric gait), in the model's clockwise coordinates [rad], the thigh measured from the vertical."""
    c = measured_cycle()
    per = lambda name, s: np.interp(np.mod(s, 100.0), c["pct_cycle"], c[name], period=100.0)

    def leg(s, side):
        hip = -(per("pelvis_tilt", s) + per(f"hip_flex_{side}", s))
        return np.stack([hip, per(f"knee_flex_{side}", s), -per(f"ankle_dorsi_{side}", s)], axis=-1)

    return np.radians(np.concatenate([leg(pct, "r"), leg(np.asarray(pct) + 50.0, "r")], axis=-1))


@jax.jit
def _positions(human, q):
    tree = human.tree()
    return jnp.stack([tree.point_position(q, p) for p in ("CAL_R", "MH_R")])


def initial_guess(problem: HumanGaitProblem, step_length: float = 0.7) -> np.ndarray:
    """The measured cycle's joint angles (:func:`measured_angles`) over the first half cycle, split among the
    phases by :data:`SHARES`, the torso upright, the stance foot's held point placed on the ground; rates by
    finite differences over the step, zero torques, the step time ``step_length / speed``."""
    T = step_length / float(problem.speed)
    G = problem.offsets[-1]
    s = problem.times()
    p = np.repeat(np.arange(len(PHASES)), problem.points)
    start = np.concatenate([[0.0], np.cumsum(SHARES)])[p]
    theta = measured_angles(50.0 * (start + np.asarray(SHARES)[p] * s))
    theta = np.clip(theta, np.array([-1, 0.02, -0.55] * 2), np.array([0.65, 1.35, 0.55] * 2))
    q = np.concatenate([np.zeros((G, 3)), theta], axis=1)
    feet = np.asarray(jax.vmap(_positions, in_axes=(None, 0))(problem.model, jnp.asarray(q)))  # (G, 2, 2)
    toe = p == len(PHASES) - 1
    flat_end = problem.offsets[-2] - 1
    anchor = np.where(toe[:, None], [feet[flat_end, 1, 0] - feet[flat_end, 0, 0], 0.0], 0.0)
    q[:, :2] = anchor - np.where(toe[:, None], feet[:, 1], feet[:, 0])
    t = T * (start + np.asarray(SHARES)[p] * s)
    # rates by differences over the whole step (a phase's last point and the next one's first are one instant),
    # so that they are continuous across the phases
    tu, inverse = np.unique(t, return_inverse=True)
    qu = np.stack([q[inverse == i].mean(axis=0) for i in range(tu.size)])
    qd = np.gradient(qu, tu, axis=0)[inverse]
    tau = T * np.asarray(SHARES)[p]
    return np.concatenate([q, qd, t[:, None], np.zeros((G, 1)), tau[:, None], np.zeros((G, B - S))],
                          axis=1).reshape(-1)


def resample(gait: HumanGait, problem: HumanGaitProblem) -> np.ndarray:
    """A start vector for `problem` from `gait`'s optimum on another mesh (a warm start;
    :func:`~difimpact._collocation.multiphase.resample`)."""
    return multiphase.resample(problem, gait.problem, gait.solution.x)


def _durations(value) -> Float[Array, "4 2"]:
    """`duration_bounds` [s]: one ``(lower, upper)`` pair for every phase or one per phase, as ``(phases, 2)``,
    checked: positive, finite, lower ≤ upper."""
    names = [p.name for p in PHASES]
    try:
        arr = np.asarray(value, float) if not isinstance(value, (str, bytes)) else None
    except (TypeError, ValueError):
        arr = None
    if arr is None:
        raise TypeError(f"`duration_bounds` must be (lower, upper) pairs of numbers [s], got {value!r}.")
    if arr.shape not in ((2,), (len(PHASES), 2)):
        raise ValueError(f"`duration_bounds` must be one (lower, upper) pair or {len(PHASES)} of them (phases "
                         f"{names}), got shape {arr.shape}.")
    if not np.all(np.isfinite(arr) & (arr > 0)):
        raise ValueError(f"`duration_bounds` must be finite and positive [s], got {value!r}.")
    arr = np.broadcast_to(arr, (len(PHASES), 2))
    bad = np.flatnonzero(arr[:, 0] > arr[:, 1])
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"`duration_bounds` of phase {i} ({names[i]!r}): lower {arr[i, 0]:g} s exceeds upper "
                         f"{arr[i, 1]:g} s.")
    return positive("duration_bounds", arr)


def make_problem(human, speed, *, segments, method, friction, torque_max, duration_bounds, tracking=None,
                 grading=1.0):
    instance("human", human, SevenLinkHuman)
    if method not in collocation.METHODS:
        raise ValueError(f"`method` must be one of {collocation.METHODS}, got {method!r}.")
    segments = (segments,) * len(PHASES) if isinstance(segments, int) else tuple(segments)
    if len(segments) != len(PHASES) or any(not isinstance(n, int) or n < 1 for n in segments):
        raise ValueError(f"`segments` must be a positive int or {len(PHASES)} of them, got {segments!r}.")
    grading = (grading,) * len(PHASES) if isinstance(grading, (int, float)) else tuple(grading)
    if len(grading) != len(PHASES) or any(not isinstance(r, (int, float)) or not r > 0 for r in grading):
        raise ValueError(f"`grading` must be a positive number or {len(PHASES)} of them, got {grading!r}.")
    f = lambda name, v: positive(name, v, shape=())
    bounds = _durations(duration_bounds)
    return HumanGaitProblem(human, f("speed", speed), f("friction", friction), f("torque_max", torque_max),
                            (bounds[:, 0], bounds[:, 1]), () if tracking is None else (tracking,), ph.STEP,
                            Mesh(method, segments, tuple(float(r) for r in grading)), U)


def human_gait(human: SevenLinkHuman, speed, *, guess=None, segments=(3, 2, 4, 3), method="hermite-simpson",
               grading=1.0, friction=0.8, torque_max=300.0, duration_bounds=DURATIONS, tracking=None,
               options: NLPOptions | None = None, throw: bool = True) -> HumanGait:
    r"""The symmetric step of `human` at `speed` [m/s] that minimises ``(1/L)∫Σu² dt`` (free step length and phase
    durations), or, with `tracking` (:func:`~difimpact._human_gait.tracking.tracking_target`), that plus the
    tracking terms; no residual forces anywhere. Phases, constraints and transcription: :mod:`.phases`,
    :mod:`.problem`.

    **Arguments:**

    - `human`: a :class:`~difimpact.SevenLinkHuman` (its parameters are what gradients reach).
    - `speed` [m/s]; `guess`: ``None`` (:func:`initial_guess`), a flat start vector, or a :class:`HumanGait` of
      the same mesh (a warm start).
    - `segments`: per phase (or one for all); `method`: ``"hermite-simpson"`` or ``"trapezoid"``; `grading`: per
      phase (or one for all) the ratio $r$ of consecutive segments' widths, $h_j \propto r^j$ ($r > 1$: finer
      towards the phase's start; :func:`~difimpact._human_gait.problem.widths`).
    - `friction`: ``μ`` of the friction cone; `torque_max` [N m]: ``|u| ≤`` it; `duration_bounds` [s]:
      ``(lower, upper)`` per phase, or one pair for all.
    - `options`: as in :func:`~difimpact.solve_nlp`; default up to 500 iterations with IPOPT's bound relaxation
      ``10⁻⁸`` (the first point's time and effort are fixed by equalities and bounded by 0: no strict interior
      without it). `throw`: as in :func:`~difimpact.solve_nlp`.

    **Returns:** a :class:`HumanGait`.

    **Example:**

    ```python
    import difimpact as di

    gait = di.human_gait(di.SevenLinkHuman(), 1.3)   # m/s; minutes of compiling and solving on a CPU
    print(gait.result == di.NLPResults.successful)     # True
    print(round(float(gait.cost), 2))                  # 1759.04 N² m s (IPOPT on the same problem: 1759.04)
    ```
    """
    options = OPTIONS if options is None else options
    problem = make_problem(human, speed, segments=segments, method=method, friction=friction,
                           torque_max=torque_max, duration_bounds=duration_bounds, tracking=tracking, grading=grading)
    if isinstance(guess, HumanGait):
        z0 = guess.solution.x
    else:
        z0 = initial_guess(problem) if guess is None else guess
    throw = flag("throw", throw)
    z0 = jnp.asarray(z0, jnp.result_type(float))
    if z0.shape != (problem.size,):
        raise ValueError(f"`guess`: expected {problem.size} variables for this mesh, got shape {z0.shape}.")
    return raise_if_failed(_solve(problem, as_float("guess", z0), options), throw)


def _solve(problem: HumanGaitProblem, z0, options: NLPOptions) -> HumanGait:
    """The transcribed problem solved from `z0` (checked before the program) by the multi-phase layer's one
    program (:func:`~difimpact._collocation.solve.solve_problem`), its result a :class:`HumanGait`."""
    return solve_problem(problem, z0, options, _gait)
