r"""Worked optimisation problems: each builds a :class:`Problem` — objective, inequality
constraints ``g(x) ≤ 0`` and bounds over a small vector ``x`` — from the models and the objectives, and
:meth:`Problem.solve` runs :func:`~difimpact.minimise` on it. Tests and notebooks check the optima against a
brute-force grid over the same bounds.
"""

import math
from collections.abc import Callable
from typing import NamedTuple

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.tree_util import Partial

from ._autodiff import forward_mode_gradient
from ._custom_types import Array, Float, Scalar
from ._impact.ground import impact
from ._models import BipedWithTorso, CompassGait, CrutchWalker, SevenLinkHuman
from ._objectives import (
    constrained_energy_index,
    energy_index,
    energy_loss,
    peak_contact_force,
    post_impact_velocity,
    sliding_margin,
)
from ._optimise import OptimiseResult, minimise
from ._validation import as_float, count, instance, positive, tolerance

_BIPED_CONTACT = dict(stick=("P_L",), massless="keep")  # seed 003 §4.2: swing foot sticks, stance foot released
_ANKLE_CONTACT = dict(stick=("CAL_R",), unilateral=("MH_L",))  # seed 002 eqs. 6–9


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
              penalty: float = 100.0) -> OptimiseResult:
        """:func:`~difimpact.minimise` from `start` with Adam, the learning rate decaying tenfold per
        round, projection on the bounds and the augmented Lagrangian for the constraints."""
        start = as_float("start", start, shape=self.lower.shape)
        schedule = optax.exponential_decay(positive("learning_rate", learning_rate, shape=()), count("steps", steps),
                                           0.1)
        return minimise(self.objective, start, optimiser=optax.adam(schedule), steps=steps,
                        rounds=rounds if self.constraints is not None else 1, bounds=(self.lower, self.upper),
                        constraints=self.constraints, penalty=penalty)

    def solve_from(self, starts, **options) -> OptimiseResult:
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


def _bounds(*pairs):
    return jnp.array([p[0] for p in pairs], float), jnp.array([p[1] for p in pairs], float)


def compass_foot_radius(foot_length: float = 0.25, progression: float = 0.5) -> Problem:
    r"""Compass walker (Font-Llagunes et al. 2010): foot radius ``R`` and half inter-leg angle ``q3`` minimising the energy lost
    per distance, ``(T⁻ − T⁺) / D`` [J/m] (Font & Kövecses 2008's ξ_L, eq. 23, with the distance actually travelled).

    **Why constraints.** Unconstrained the problem has no interior optimum: the loss vanishes as ``R → l``
    (Font-Llagunes et al. 2010, §4: no impact at all) and, per distance, as ``q3 → 0`` (short steps, Font & Kövecses 2008 conclusion (ii)).
    Two physical limits make it meaningful:

    - the foot arc must carry the rolling contact, which moves by ``2 q3`` on the arc during a step:
      arc length ``2 R q3 ≤`` `foot_length` [m];
    - each step must travel at least `progression` [m]. Per step the stance arc rolls ``2 R q3`` and the
      contact points are ``L = 2 (l − R) sin q3`` apart at heel strike, so ``D = L + 2 R q3`` (``L`` alone
      — :meth:`CompassGait.step_length` — vanishes at ``R = l``, where the walker is a rolling wheel).

    Both are active at the optimum: the best foot is the largest the foot length allows and the best step
    the shortest the task allows. Pre-impact state: Font-Llagunes et al. 2010, ``q̇3 = 1 rad/s`` (:meth:`CompassGait.
    pre_impact_state`); the swing foot sticks, the stance foot is released. ``x = [R, q3]`` within
    ``[0.05, 0.95] m × [2°, 30°]`` (Font-Llagunes et al. 2010's ranges, less ``R = l``, where the swing foot does not collide).
    """
    foot_length, progression = positive("foot_length", foot_length), positive("progression", progression)
    lower, upper = _bounds((0.05, 0.95), (math.radians(2.0), math.radians(30.0)))
    return Problem(Partial(_compass_objective), Partial(_compass_constraints, jnp.asarray(foot_length, float),
                                                        jnp.asarray(progression, float)), lower, upper, ("R", "q3"))


def _compass_parts(x):
    R, q3 = x[0], x[1]
    model = CompassGait(R=R)
    q, qdot = model.pre_impact_state(q3)
    distance = model.step_length(q) + 2 * R * q3
    return energy_loss(model, q, qdot, stick=("swing_foot",)), distance, R, q3


def _compass_objective(x):
    loss, distance, *_ = _compass_parts(x)
    return loss / distance


def _compass_constraints(foot_length, progression, x):
    _, distance, R, q3 = _compass_parts(x)
    return jnp.stack([2 * R * q3 / foot_length - 1.0, 1.0 - distance / progression])


def biped_torso(lift_off: float = 0.05, q4: float = math.radians(30.0)) -> Problem:
    r"""Biped with torso (Font & Kövecses 2008, §4.2): torso angle ``q5`` and upper-body mass ratio ``μ_T = m_T/m_H``
    minimising ``ξ_I = T_c⁻ / T⁻`` subject to passive stance-foot lift-off ``v_Sn⁺ ≥`` `lift_off` [m/s]
    (Font & Kövecses 2008, eq. 4).

    As in Font & Kövecses 2008, §4.2: ``q4 = 30°``, ``m = 5 kg`` per leg, ``m_B = 30 kg`` (so ``m_H = 20/(1 + μ_T)``), and
    ``x = [q5, μ_T]`` within ``[0°, 30°] × [0, 2]`` (torso between aligned with the stance leg and aligned
    with the colliding leg). With a small margin the lift-off constraint is inactive and the optimum is seed
    003's conclusions: torso aligned with the stance leg (``q5 = 0``, conclusion (iii)) and the heaviest torso
    (``μ_T = 2``, §4.2). A larger margin (lift-off needs a light torso, Fig. 5) makes it active and trades
    torso mass for lift-off. The left foot sticks, the right foot is released (``massless="keep"``: ``μ_T = 0``
    is a massless torso).
    """
    lift_off, q4 = (jnp.asarray(positive(k, v, shape=()), float) for k, v in (("lift_off", lift_off), ("q4", q4)))
    lower, upper = _bounds((0.0, math.radians(30.0)), (0.0, 2.0))
    return Problem(Partial(_biped_objective, q4), Partial(_biped_constraints, q4, lift_off), lower, upper,
                   ("q5", "mu_T"))


def _biped_state(q4, x):
    q5, mu_T = x[0], x[1]
    m_H = 20.0 / (1.0 + mu_T)
    model = BipedWithTorso(m=5.0, m_H=m_H, m_T=mu_T * m_H)
    return (model, *model.pre_impact_state(q4, q5))


def _biped_objective(q4, x):
    return constrained_energy_index(*_biped_state(q4, x), **_BIPED_CONTACT)


def _biped_constraints(q4, lift_off, x):
    v_Sn = post_impact_velocity(*_biped_state(q4, x), "P_R", **_BIPED_CONTACT)[1]
    return (1.0 - v_Sn / lift_off)[None]


def ankle_blocking(target: float = 0.05, model: SevenLinkHuman | None = None, omega0: float = -1.0
                   ) -> tuple[Problem, Scalar]:
    r"""Seven-link human (Ros et al. 2015, §4.3): the degree of partial blocking of the leading ankle that dissipates
    the fraction `target` of the kinetic energy, by least squares ``(ξ/ξ* − 1)²`` (Ros et al. 2015, eq. 23).

    Impact: the leading heel ``CAL_R`` sticks, the trailing ``MH_L`` is unilateral (Ros et al. 2015, eqs. 6–9) and the
    post-impact ankle rate is prescribed, $\dot\theta_A^R^+ = (1 - \beta) r_{free}$ (rheonomic constraint, eq. 10), with
    ``r_free`` the rate the unblocked ankle takes (coordinate rates, clockwise: :class:`SevenLinkHuman`; the
    constraint then carries no impulse: ``β = 0`` is the free ankle, ``β = 1`` full blocking). ``ξ`` is a
    parabola in the rate with its maximum at full blocking (Ros et al. 2015, eq. 24), so ``ξ(β)`` increases on
    ``[0, 1]`` and the root is unique when ``ξ(0) ≤ ξ* ≤ ξ(1)``. ``x = [β]`` within ``[0, 1]``; do not start
    at ``β = 1`` exactly, where the gradient vanishes (the parabola's vertex). Returns ``(problem, r_free)``.
    """
    model = SevenLinkHuman() if model is None else instance("model", model, SevenLinkHuman)
    target = tolerance("target", target, below=1.0)
    q, qdot = model.heel_strike_state(omega0)
    r_free = impact(model, q, qdot, **_ANKLE_CONTACT).qdot_plus[5]
    objective = Partial(_ankle_objective, model, q, qdot, r_free, jnp.asarray(target, float))
    return Problem(objective, None, jnp.zeros(1), jnp.ones(1), ("beta",)), r_free


def _ankle_objective(model, q, qdot, r_free, target, x):
    xi = energy_index(model, q, qdot, blocked={"theta_A_R": (1.0 - x[0]) * r_free}, **_ANKLE_CONTACT)
    return (xi / target - 1.0) ** 2


def crutch_peak_force(margin: float = 0.05, mu: float = 0.75, rtol: float = 1e-6) -> Problem:
    r"""Crutch walker (Font-Llagunes et al. 2012): posture ``x = [q3, q4]`` (leg angle, torso relative to the legs) minimising
    the peak crutch-tip force of the compliant contact phase (Font-Llagunes et al. 2012, §4–5: Hunt–Crossley + Hertz tip,
    exact Coulomb friction ``μ``), in kN, subject to ``μ ≥ μ_c + margin`` (:func:`~difimpact.sliding_margin`;
    Font-Llagunes et al. 2012, eq. 8, from the impulsive map): a stick, once reached, is kept with ``margin`` to
    spare. That alone does not make the impact end stuck (:func:`~difimpact.sticking_margin`); here it does: the
    tip starts sliding backward and, over the whole feasible set (defaults), comes to rest and sticks
    (``slide-stick``), with ``μ − μ_stick ≥ margin − 0.022`` (``μ_stick − μ_c ≤ 0.022`` on a 61 × 61 grid).

    Pre-impact state of Font-Llagunes et al. 2012 (§5): ``q5 = 150°``, ``q6`` placing the tip on the ground ahead of the feet,
    ``q̇ = [0, 0, 1, 0, −0.2, 0]`` rad/s. Bounds: ``q3 ∈ [3°, 21°]`` (Font-Llagunes et al. 2012's range), ``q4 ∈ [0°, 20°]``.
    The compliant solve uses a modest tolerance `rtol` (its peak is refined by
    :func:`~difimpact.peak_contact_force`); each objective gradient is one forward-mode solve with two
    tangents (the objective supports ``jax.grad`` and ``jax.vmap``, not ``jax.jacfwd``).

    The peak force falls as the legs and the torso lean forward, and so does the sliding margin: with the
    defaults the optimum is the vertex ``q4 = 20°`` (bound), ``μ − μ_c = margin`` (``q3 ≈ 7.71°``, 4.834 kN;
    ``μ − μ_stick = 0.028`` there).
    ``solve(start, learning_rate=0.01, steps=150, rounds=4, penalty=30.0)`` reaches it (multiplier ≈ 0.51);
    with the default ``penalty=100`` the multiplier collapses to 0 between rounds.
    """
    from ._experiments.fixtures import seed000_tip_contact  # the paper's tip; experiments load matplotlib

    margin = positive("margin", margin, shape=())
    tolerance("rtol", rtol, below=1.0)  # kept a Python float: static in the compiled solve
    model = CrutchWalker()
    contact = seed000_tip_contact(mu=mu)

    def state(x):
        return model.pre_impact_state(x[0], -0.2, q4=x[1])

    def peak(x):
        return 1e-3 * peak_contact_force(model, *state(x), "Q", normal=contact.normal_law,
                                         friction=contact.friction_law, rtol=rtol, atol=1e-2 * rtol,
                                         max_steps=256, adjoint=diffrax.ForwardMode())

    def constraints(x):
        return (1.0 - sliding_margin(model, *state(x), "Q", friction=contact.friction_law) / margin)[None]

    lower, upper = _bounds((math.radians(3.0), math.radians(21.0)), (0.0, math.radians(20.0)))
    return Problem(forward_mode_gradient(peak), constraints, lower, upper, ("q3", "q4"))


