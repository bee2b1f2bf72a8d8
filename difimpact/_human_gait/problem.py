r"""One step of the seven-link human's symmetric gait as a nonlinear program (the phases of :mod:`.phases`).

Every collocation point holds ``(q, \dot q, t, E, τ)`` and the torques ``v = u / U`` (``U = 100`` N m): ``t`` the
time since heel strike, ``E = ∫ Σ v^2 dt`` the effort so far, ``τ`` its phase's duration. In phase time
``s ∈ [0, 1]`` the states obey ``d/ds (q, \dot q, t, E, τ) = τ (\dot q, \ddot q, 1, Σ v^2, 0)``, transcribed by
Hermite–Simpson or trapezoidal collocation (:mod:`difimpact._powered.collocation`; Kelly 2017, §§3–4) on segments
of width ``h_j`` in phase time, equal or geometrically graded (:func:`widths`, :func:`defects`): with the
durations and the running cost as states every constraint meets one point or a few neighbouring ones, so the
Newton matrix is banded (:mod:`difimpact._nlp.banded`). The cost is the effort per distance (Kelly 2017, eq. 7.1
over the step length ``L``),

$$J = \frac{1}{L}\int_0^{T} \sum_j u_j^2\,dt,\qquad L = x_{CAL_L}(q(T)),\quad L = v\,T,$$

the step periodic through the heel strike and the relabelling (:func:`.phases.relabel`); consecutive phases
share their boundary state. Path constraints: normal forces ``≥ 0`` and the friction cone ``|F_t| ≤ μ F_n``
on every contact row, the free foot points above the ground at the interior points, the right foot landing
flat at rest (``y_{MH_R} = \dot y_{MH_R} = 0``), the left heel on the ground and descending at the strike, the
normal impulses of the left heel and of the right metatarsal heads ``≥ 0`` (the heel is pushed, the trailing foot
stays), joint limits as bounds. Forces enter the inequalities in body weights and impulses per unit mass [m/s], so
that every row is of order one.
"""

import itertools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Float, Scalar
from .._models.seven_link_human import SevenLinkHuman
from .._nlp.matrix import Pattern
from .._nlp.sparsity import Sparsity
from .._collocation import methods as collocation
from . import phases as ph
from .phases import PHASES, K, N

S = 2 * N + 3  # states per point: q, q̇, t, E, τ
B = S + K  # variables per point
U = 100.0  # N m per unit of the torque variables
FLAT = 2  # index of the flat-foot phase
IT, IE, ITAU = 2 * N, 2 * N + 1, 2 * N + 2
# Bounds of (q, q̇): x, y, torso, then hip, knee, ankle per leg (clockwise; knee flexion positive).
Q_LO = (-1.0, 0.5, -0.5, -1.0, 0.0, -0.6, -1.0, 0.0, -0.6)
Q_HI = (1.5, 1.5, 0.5, 0.7, 1.4, 0.6, 0.7, 1.4, 0.6)
QD_MAX = (5.0, 5.0, 5.0) + (15.0,) * 6


class HumanGaitProblem(eqx.Module):
    """The numbers and the structure of one gait problem (built by :func:`~difimpact.predictive_gait`)."""

    human: SevenLinkHuman
    speed: Scalar
    friction: Scalar
    torque_max: Scalar
    duration_bounds: tuple[Float[Array, " 4"], Float[Array, " 4"]]
    tracking: object  # None or a ``TrackingTarget``: a cost term of :mod:`.tracking`
    segments: tuple[int, ...] = eqx.field(static=True)
    method: str = eqx.field(static=True)
    grading: tuple[float, ...] = eqx.field(static=True, default=(1.0,) * len(PHASES))

    def widths(self, phase: int) -> np.ndarray:
        """The segments' widths in phase time of `phase` (:func:`widths`)."""
        return widths(self.segments[phase], self.grading[phase])

    def times(self) -> np.ndarray:
        """``(G,)`` every point's phase time ``s ∈ [0, 1]`` (midpoints included), phase after phase."""
        out = []
        for p in range(len(PHASES)):
            edges = np.concatenate([[0.0], np.cumsum(self.widths(p))])
            edges[-1] = 1.0
            if self.method == "hermite-simpson":
                mid = (edges[:-1] + edges[1:]) / 2
                edges = np.stack([edges[:-1], mid], axis=1).reshape(-1).tolist() + [1.0]
            out.append(np.asarray(edges))
        return np.concatenate(out)

    def weights(self) -> np.ndarray:
        r"""``(G,)`` quadrature weights in phase time, ``∫_0^1 g ds ≈ Σ w_i g_i`` per phase: Simpson's
        ``h_j/6 (1, 4, 1)`` per segment, or the trapezoid's ``h_j/2 (1, 1)`` (Kelly 2017, eqs. 3.3, 4.7)."""
        out = []
        for p, n in enumerate(self.segments):
            h, w = self.widths(p), np.zeros(self.points[p])
            if self.method == "hermite-simpson":
                np.add.at(w, np.arange(0, 2 * n, 2), h / 6)
                np.add.at(w, np.arange(1, 2 * n, 2), 4 * h / 6)
                np.add.at(w, np.arange(2, 2 * n + 1, 2), h / 6)
            else:
                np.add.at(w, np.arange(n), h / 2)
                np.add.at(w, np.arange(1, n + 1), h / 2)
            out.append(w)
        return np.concatenate(out)

    @property
    def points(self) -> tuple[int, ...]:
        return tuple(collocation.points(self.method, n) for n in self.segments)

    @property
    def offsets(self) -> tuple[int, ...]:
        return tuple(int(o) for o in np.cumsum((0,) + self.points))

    @property
    def size(self) -> int:
        return self.offsets[-1] * B

    def unpack(self, z):
        """Per phase ``(x (G_p, S), v (G_p, K))``."""
        Z = z.reshape(-1, B)
        o = self.offsets
        return [(Z[o[p]:o[p + 1], :S], Z[o[p]:o[p + 1], S:]) for p in range(len(PHASES))]

    def active(self) -> np.ndarray:
        """``(G, 8)`` the contact rows (:data:`~.phases.ROWS`) each point's phase holds."""
        return np.concatenate([np.tile(ph.mask(phase), (g, 1)) for phase, g in zip(PHASES, self.points)])

    def field(self, z):
        """``(f, λ, y)`` at every point: the phase-time derivative of the states, the contact forces on the rows
        of :data:`~.phases.ROWS` [N] and the heights of :data:`~.phases.FEET` [m]."""
        Z = z.reshape(-1, B)
        x, v = Z[:, :S], Z[:, S:]
        qdd, lam, y = ph.vdynamics(self.human, jnp.asarray(self.active(), z.dtype), x[:, :N], x[:, N:2 * N],
                                   U * v)
        ones = jnp.ones((x.shape[0], 1), x.dtype)
        f = jnp.concatenate([x[:, N:2 * N], qdd, ones, jnp.sum(v**2, axis=1, keepdims=True), 0 * ones], axis=1)
        return x[:, ITAU:ITAU + 1] * f, lam, y

    def end(self, z):
        x, _ = self.unpack(z)[-1]
        return x[-1, :N], x[-1, N:2 * N]

    def step_length(self, z):
        q, _ = self.end(z)
        return self.human.tree().point_position(q, "CAL_L")[0]

    def objective(self, z):
        x, _ = self.unpack(z)[-1]
        J = x[-1, IE] / self.step_length(z)
        return J if self.tracking is None else J + self.tracking.cost(self, z)

    def constraints(self, z):
        """``(c, d)``: :meth:`equality` and :meth:`inequality` from one evaluation of the dynamics at every point
        and of the heel strike (what the solver differentiates)."""
        f, lam, y = self.field(z)
        q, qd = self.end(z)
        impact = ph.heel_strike(self.human, q, qd)
        return self._equality(z, f, q, impact), self._inequality(lam, y, q, qd, impact)

    def equality(self, z):
        """The collocation defects, the phases' continuity, the step's periodicity through the heel strike and
        relabelling, the right foot landing flat at rest, the left heel on the ground at the step's length."""
        return self.constraints(z)[0]

    def _equality(self, z, f, q, impact):
        parts = self.unpack(z)
        o = self.offsets
        rows = [defects(self.method, x, f[o[p]:o[p + 1]], self.widths(p)).reshape(-1)
                for p, (x, _) in enumerate(parts)]
        for (a, _), (b, _) in itertools.pairwise(parts):
            rows.append(b[0, :ITAU] - a[-1, :ITAU])
        q0, qd0 = ph.relabel(self.human, q, impact.qdot_plus)
        x0 = parts[0][0][0]
        rows += [x0[:N] - q0, x0[N:2 * N] - qd0, x0[IT:ITAU]]
        tree = self.human.tree()
        flat = parts[FLAT][0][0]
        _, J, _ = tree.point_kinematics(flat[:N], flat[N:2 * N], "MH_R")
        rows.append(jnp.stack([tree.point_position(flat[:N], "MH_R")[1], J[1] @ flat[N:2 * N]]))
        t_end = parts[-1][0][-1, IT]
        heel = tree.point_position(q, "CAL_L")  # its x is the step length (:meth:`step_length`)
        rows.append(jnp.stack([heel[1], heel[0] - self.speed * t_end]))
        return jnp.concatenate(rows)

    def path_rows(self) -> np.ndarray:
        """Indices into the ``(G, 16)`` candidates of :meth:`inequality` (per point: normal forces, the two sides
        of the friction cone, heights, each for the four foot points) that are imposed."""
        act = self.active()
        normal, tangent = act[:, 0::2], act[:, 1::2] & act[:, 0::2]
        free = []
        for p, (phase, g) in enumerate(zip(PHASES, self.points)):
            m = np.zeros((g, 4), bool)
            m[1:-1] = [pt in phase.free_points for pt in ph.FEET]
            if p == len(PHASES) - 1:
                m[-1, ph.FEET.index("MH_L")] = True
            free.append(m)
        return np.flatnonzero(np.concatenate([normal, tangent, tangent, np.concatenate(free)], axis=1))

    def inequality(self, z):
        """The path constraints (:meth:`path_rows`), the left heel descending at the strike and the heel strike's
        normal impulses ``≥ 0``; forces in body weights and impulses per unit mass [m/s]."""
        return self.constraints(z)[1]

    def _inequality(self, lam, y, q, qd, impact):
        mass = jnp.sum(self.human.tree().mass)
        lam = lam / (mass * self.human.g)  # forces in body weights, impulses in m/s: rows of order one
        n, t = lam[:, 0::2], lam[:, 1::2]
        candidates = jnp.concatenate([n, self.friction * n - t, self.friction * n + t, y], axis=1)
        impulses = impact.impulses / mass
        final = jnp.stack([-self.human.point_velocity(q, qd, "CAL_L")[1], impulses[0], impulses[2]])
        return jnp.concatenate([candidates.reshape(-1)[self.path_rows()], final])

    def inequality_bounds(self, dtype):
        m = jax.eval_shape(self.inequality, jnp.zeros(self.size, dtype)).shape[0]
        return jnp.zeros(m, dtype), jnp.full(m, jnp.inf, dtype)

    def variable_bounds(self, dtype):
        """Joint limits and rate bounds (:data:`Q_LO`, :data:`Q_HI`, :data:`QD_MAX`), the torques within
        `torque_max`, each point's duration within its phase's `duration_bounds`."""
        inf = np.inf
        lo = np.concatenate([Q_LO, -np.asarray(QD_MAX), [0.0, 0.0, 0.0], np.full(K, -1.0)])
        hi = np.concatenate([Q_HI, QD_MAX, [inf, inf, inf], np.full(K, 1.0)])
        G = self.offsets[-1]
        lo, hi = jnp.tile(jnp.asarray(lo, dtype), (G, 1)), jnp.tile(jnp.asarray(hi, dtype), (G, 1))
        phase = np.repeat(np.arange(len(PHASES)), self.points)
        lo = lo.at[:, ITAU].set(self.duration_bounds[0][phase]).at[:, S:].multiply(self.torque_max / U)
        hi = hi.at[:, ITAU].set(self.duration_bounds[1][phase]).at[:, S:].multiply(self.torque_max / U)
        return lo.reshape(-1), hi.reshape(-1)


def widths(segments: int, grading: float) -> np.ndarray:
    r"""``(n,)`` segment widths in phase time, summing to one: geometric, ``h_j ∝ r^j`` with ``r`` = `grading`
    (``r > 1``: finer towards the phase's start, as after an impact; ``r = 1``: equal, ``h_j = 1/n``)."""
    if grading == 1.0:
        return np.full(segments, 1.0 / segments)
    h = float(grading) ** np.arange(segments)
    return h / h.sum()


def defects(method: str, x, f, h) -> Float[Array, "D s"]:
    r"""The collocation defects on segments of widths `h` (rows per segment: interpolation then Simpson, or the
    trapezoid's one); Kelly 2017, eqs. 4.4–4.5 and 3.5 with each segment's own ``h_j``,

    $$x_{j+½} - \tfrac12 (x_j + x_{j+1}) - \tfrac{h_j}{8} (f_j - f_{j+1}) = 0,\qquad
      x_{j+1} - x_j - \tfrac{h_j}{6} (f_j + 4 f_{j+½} + f_{j+1}) = 0.$$

    Equal widths give :func:`difimpact._powered.collocation.defects` (the same operations)."""
    if np.all(h == h[0]):
        return collocation.defects(method, x, f, 1.0)
    h = jnp.asarray(h, x.dtype)[:, None]
    if method == "hermite-simpson":
        x0, xm, x1 = x[0:-1:2], x[1::2], x[2::2]
        f0, fm, f1 = f[0:-1:2], f[1::2], f[2::2]
        return jnp.concatenate([xm - 0.5 * (x0 + x1) - h / 8 * (f0 - f1), x1 - x0 - h / 6 * (f0 + 4 * fm + f1)])
    return x[1:] - x[:-1] - h / 2 * (f[:-1] + f[1:])


def sparsity(problem: HumanGaitProblem) -> Sparsity:
    """The derivatives' sparsity, in the row order of `equality` then `inequality`: a row meets the points of its
    segment, its two phases' boundary points, or one point (the last: the heel strike and the step); the Hessian
    of the Lagrangian is block diagonal per point. Built from the layout by its nonzeros, ``O(nnz)``."""
    G, o = problem.offsets[-1], problem.offsets
    block = np.arange(G * B).reshape(G, B)
    rows = []  # each row's columns

    def row(pts, count=1):
        rows.extend([block[list(pts)].reshape(-1)] * count)

    hs = problem.method == "hermite-simpson"
    for p, n in enumerate(problem.segments):
        segs = [(o[p] + 2 * i, o[p] + 2 * i + 1, o[p] + 2 * i + 2) if hs else (o[p] + i, o[p] + i + 1)
                for i in range(n)]
        for _ in range(2 if hs else 1):
            for seg in segs:
                row(seg, S)
    for p in range(1, len(PHASES)):
        row((o[p] - 1, o[p]), ITAU)
    row((0, G - 1), IT + 2)
    row((o[2],), 2)
    row((G - 1,), 2)
    for i in problem.path_rows():
        row((i // 16,))
    row((G - 1,), 3)
    pattern = Pattern(np.repeat(np.arange(len(rows)), [r.size for r in rows]), np.concatenate(rows),
                      (len(rows), G * B))
    jc = np.zeros(G * B, int)
    jc[block] = np.where(np.arange(G) == G - 1, 4, np.arange(G) % 4)[:, None] * B + np.arange(B)
    hp = Pattern(np.repeat(block, B, axis=1).reshape(-1), np.tile(block, (1, B)).reshape(-1), (G * B, G * B))
    # the ring's border (:mod:`difimpact._nlp.bordered`): the first point and the periodicity rows
    defects = sum((2 if hs else 1) * n * S for n in problem.segments) + (len(PHASES) - 1) * ITAU
    return Sparsity(jc, pattern, np.tile(np.arange(B), G), hp, np.zeros(G * B, bool), border_variables=block[0],
                    border_equalities=defects + np.arange(IT + 2))
