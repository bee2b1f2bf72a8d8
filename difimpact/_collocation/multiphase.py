r"""One step of a symmetric multi-phase gait (a :class:`~.contact.ContactGait`) as a nonlinear program.

Every collocation point holds ``(q, \dot q, t, E, τ)`` and the torques ``v = u / U``: ``t`` the time since the
step began, ``E = ∫ Σ v^2 dt`` the effort so far, ``τ`` its phase's duration. In phase time ``s ∈ [0, 1]`` the
states obey ``d/ds (q, \dot q, t, E, τ) = τ (\dot q, \ddot q, 1, Σ v^2, 0)``, transcribed on the phases' meshes
(:class:`~.mesh.Mesh`; Kelly 2017, §§3–4): with the durations and the running cost as states every constraint
meets one point or a few neighbouring ones, so the Newton matrix is a band closed into a ring by the periodicity
(:mod:`.stages`). The cost is the effort per distance (Kelly 2017, eq. 7.1 over the step length ``L``) plus any
further terms (`terms`, e.g. tracking a measured gait),

$$J = \frac{1}{L}\int_0^{T} \sum_j v_j^2\,dt + \sum_k J_k,\qquad L = x_\text{strike}(q(T)),\quad L = v\,T,$$

the step periodic through the impact and the relabelling; consecutive phases share their boundary state (``τ``
apart). Path constraints: normal forces ``≥ 0`` and the friction cone ``|F_t| ≤ μ F_n`` on every held row, the
free points above the ground at the interior points, the touchdowns at rest, the striking point on the ground and
descending, the impact's normal impulses ``≥ 0``; coordinate, rate and torque bounds. Forces enter the
inequalities in body weights and impulses per unit mass [m/s], so that every row is of order one.
"""

import itertools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Float, Scalar
from .._nlp.sparsity import Sparsity
from .contact import ContactGait
from .mesh import Mesh
from .stages import StageRows, point_stages, stage_sparsity


class PointLayout(eqx.Module):
    """The columns of a point's block: ``q`` ``[0, n)``, ``\\dot q`` ``[n, 2n)``, ``t``, ``E`` (where `effort_state`:
    a cost read at the step's end), ``τ``, then the `controls`."""

    n: int = eqx.field(static=True)
    controls: int = eqx.field(static=True)
    effort_state: bool = eqx.field(static=True, default=True)

    @property
    def t(self) -> int:
        return 2 * self.n

    @property
    def effort(self) -> int:
        if not self.effort_state:
            raise ValueError("this layout holds no effort state.")
        return 2 * self.n + 1

    @property
    def tau(self) -> int:
        return 2 * self.n + 1 + int(self.effort_state)

    @property
    def states(self) -> int:
        return self.tau + 1

    @property
    def block(self) -> int:
        return self.states + self.controls


class MultiPhaseProblem(eqx.Module):
    """The numbers (leaves: what gradients reach) and the structure (static) of one gait problem: `model` walking
    the phases of `gait` on `mesh` at `speed` [m/s], friction coefficient `friction`, torques within `torque_max`
    [N m] in units of `torque_unit`, each phase's duration within `duration_bounds` [s], extra cost `terms`
    (objects with ``cost(problem, z)``; one with ``uses_forces = True`` is called ``cost(problem, z, forces)``
    with the contact forces ``(G, 2 P)`` [N] on the gait's rows where they are computed already)."""

    model: object
    speed: Scalar
    friction: Scalar
    torque_max: Scalar
    duration_bounds: tuple[Float[Array, " P"], Float[Array, " P"]]
    terms: tuple
    gait: ContactGait
    mesh: Mesh
    torque_unit: float = eqx.field(static=True, default=100.0)

    @property
    def layout(self) -> PointLayout:
        return PointLayout(self.gait.coordinates, self.gait.controls)

    # the mesh's numbers, for the problem's users
    def widths(self, phase: int) -> np.ndarray:
        return self.mesh.widths(phase)

    def times(self) -> np.ndarray:
        return self.mesh.times()

    def weights(self) -> np.ndarray:
        return self.mesh.weights()

    @property
    def method(self) -> str:
        return self.mesh.method

    @property
    def segments(self) -> tuple[int, ...]:
        return self.mesh.segments

    @property
    def points(self) -> tuple[int, ...]:
        return self.mesh.points

    @property
    def offsets(self) -> tuple[int, ...]:
        return self.mesh.offsets

    @property
    def size(self) -> int:
        return self.offsets[-1] * self.layout.block

    def unpack(self, z):
        """Per phase ``(x (G_p, S), v (G_p, K))``."""
        L = self.layout
        Z = z.reshape(-1, L.block)
        o = self.offsets
        return [(Z[o[p]:o[p + 1], :L.states], Z[o[p]:o[p + 1], L.states:]) for p in range(self.mesh.phases)]

    def active(self) -> np.ndarray:
        """``(G, 2 P)`` the contact rows each point's phase holds."""
        return np.concatenate([np.tile(self.gait.mask(ph), (g, 1)) for ph, g in zip(self.gait.phases, self.points)])

    def field(self, z):
        """``(f, λ, y)`` at every point: the phase-time derivative of the states, the contact forces on the
        gait's rows [N] and the heights of its points [m]."""
        f, d = self._field(z)
        return f, d.forces, d.heights

    def _field(self, z):
        """``f`` and the :class:`~.contact.PointDynamics` at every point."""
        L, n = self.layout, self.layout.n
        Z = z.reshape(-1, L.block)
        x, v = Z[:, :L.states], Z[:, L.states:]
        d = self.gait.vdynamics(self.model, jnp.asarray(self.active(), z.dtype), x[:, :n], x[:, n:2 * n],
                                self.torque_unit * v)
        ones = jnp.ones((x.shape[0], 1), x.dtype)
        f = jnp.concatenate([x[:, n:2 * n], d.qdd, ones, jnp.sum(v**2, axis=1, keepdims=True), 0 * ones], axis=1)
        return x[:, L.tau:L.tau + 1] * f, d

    def end(self, z):
        n = self.layout.n
        x, _ = self.unpack(z)[-1]
        return x[-1, :n], x[-1, n:2 * n]

    def step_length(self, z):
        q, _ = self.end(z)
        return self.model.tree().point_position(q, self.gait.strike[0][0])[0]

    def objective(self, z, forces=None):
        """``J`` (module docstring); a term that reads the contact forces (``uses_forces``) gets `forces` (the
        field's, where the caller has them) rather than evaluating the dynamics again."""
        x, _ = self.unpack(z)[-1]
        J = x[-1, self.layout.effort] / self.step_length(z)
        for term in self.terms:
            uses = getattr(term, "uses_forces", False) and forces is not None
            J = J + (term.cost(self, z, forces) if uses else term.cost(self, z))
        return J

    def constraints(self, z):
        """``(c, d)``: :meth:`equality` and :meth:`inequality` from one evaluation of the dynamics at every point
        and of the impact (what the solver differentiates)."""
        return self._constraints(z, *self._field(z))

    def objective_and_constraints(self, z):
        """``(J, (c, d))`` from one evaluation of the dynamics at every point: the Lagrangian the solver
        differentiates twice, where a term's cost reads the contact forces."""
        f, d = self._field(z)
        return self.objective(z, d.forces), self._constraints(z, f, d)

    def _constraints(self, z, f, d):
        lam, y = d.forces, d.heights
        q, qd = self.end(z)  # the last point's: the impact reuses its rows and M^-1 A^T
        qd_plus, impulses = self.gait.impact_jump(self.model, q, qd, jax.tree.map(lambda a: a[-1], d))
        return self._equality(z, f, q, qd_plus), self._inequality(lam, y, q, qd, impulses)

    def equality(self, z):
        """The defects, the phases' continuity, the periodicity through the impact and relabelling, the
        touchdowns at rest, the striking point on the ground at the step's length."""
        return self.constraints(z)[0]

    def _equality(self, z, f, q, qd_plus):
        L, n = self.layout, self.layout.n
        parts = self.unpack(z)
        o = self.offsets
        rows = [self.mesh.defects(p, x, f[o[p]:o[p + 1]]).reshape(-1) for p, (x, _) in enumerate(parts)]
        for (a, _), (b, _) in itertools.pairwise(parts):
            rows.append(b[0, :L.tau] - a[-1, :L.tau])
        q0, qd0 = self.gait.relabel(self.model, q, qd_plus)
        x0 = parts[0][0][0]
        rows += [x0[:n] - q0, x0[n:2 * n] - qd0, x0[L.t:L.tau]]
        tree = self.model.tree()
        for phase, point in self.gait.touchdowns:
            first = parts[phase][0][0]
            _, J, _ = tree.point_kinematics(first[:n], first[n:2 * n], point)
            rows.append(jnp.stack([tree.point_position(first[:n], point)[1], J[1] @ first[n:2 * n]]))
        t_end = parts[-1][0][-1, L.t]
        strike = tree.point_position(q, self.gait.strike[0][0])  # its x is the step length
        rows.append(jnp.stack([strike[1], strike[0] - self.speed * t_end]))
        return jnp.concatenate(rows)

    def path_rows(self) -> np.ndarray:
        """Indices into the ``(G, 4 P)`` candidates of :meth:`inequality` (per point: normal forces, the two
        sides of the friction cone, heights, each for the ``P`` points) that are imposed."""
        act, points = self.active(), self.gait.points
        normal, tangent = act[:, 0::2], act[:, 1::2] & act[:, 0::2]
        free = []
        for p, (phase, g) in enumerate(zip(self.gait.phases, self.points)):
            m = np.zeros((g, len(points)), bool)
            m[1:-1] = [pt in self.gait.free_points(phase) for pt in points]
            if p == self.mesh.phases - 1:
                m[-1, [points.index(pt) for pt in self.gait.end_clearance]] = True
            free.append(m)
        return np.flatnonzero(np.concatenate([normal, tangent, tangent, np.concatenate(free)], axis=1))

    def inequality(self, z):
        """The path constraints (:meth:`path_rows`), the striking point descending and the impact's normal
        impulses ``≥ 0``; forces in body weights and impulses per unit mass [m/s]."""
        return self.constraints(z)[1]

    def _inequality(self, lam, y, q, qd, impulses):
        tree = self.model.tree()
        mass = jnp.sum(tree.mass)
        lam = lam / (mass * tree.g)  # forces in body weights, impulses in m/s: rows of order one
        n, t = lam[:, 0::2], lam[:, 1::2]
        candidates = jnp.concatenate([n, self.friction * n - t, self.friction * n + t, y], axis=1)
        impulses = impulses / mass
        descent = -self.model.point_velocity(q, qd, self.gait.strike[0][0])[1]
        final = jnp.concatenate([descent[None], impulses[self.gait.strike_normals()]])
        return jnp.concatenate([candidates.reshape(-1)[self.path_rows()], final])

    def inequality_bounds(self, dtype):
        m = jax.eval_shape(self.inequality, jnp.zeros(self.size, dtype)).shape[0]
        return jnp.zeros(m, dtype), jnp.full(m, jnp.inf, dtype)

    def variable_bounds(self, dtype):
        """The gait's coordinate and rate bounds, the torques within `torque_max`, each point's duration within
        its phase's `duration_bounds`."""
        L, inf = self.layout, np.inf
        lo = np.concatenate([self.gait.q_bounds[0], -np.asarray(self.gait.qd_max), [0.0, 0.0, 0.0],
                             np.full(L.controls, -1.0)])
        hi = np.concatenate([self.gait.q_bounds[1], self.gait.qd_max, [inf, inf, inf], np.full(L.controls, 1.0)])
        G = self.offsets[-1]
        lo, hi = jnp.tile(jnp.asarray(lo, dtype), (G, 1)), jnp.tile(jnp.asarray(hi, dtype), (G, 1))
        phase = self.mesh.phase_of_points()
        scale = self.torque_max / self.torque_unit
        lo = lo.at[:, L.tau].set(self.duration_bounds[0][phase]).at[:, L.states:].multiply(scale)
        hi = hi.at[:, L.tau].set(self.duration_bounds[1][phase]).at[:, L.states:].multiply(scale)
        return lo.reshape(-1), hi.reshape(-1)


def sparsity(problem: MultiPhaseProblem) -> Sparsity:
    """The derivatives' sparsity, in the row order of `equality` then `inequality`: a row meets the points of its
    segment, its two phases' boundary points, or one point (the last: the impact and the step); the Hessian of
    the Lagrangian is block diagonal per point. From the layout (:mod:`.stages`), ``O(nnz)``."""
    L, o, mesh = problem.layout, problem.offsets, problem.mesh
    G = o[-1]
    rows = StageRows(np.arange(G * L.block).reshape(G, L.block), G * L.block)
    hs = mesh.method == "hermite-simpson"
    for p, n in enumerate(mesh.segments):
        segs = [(o[p] + 2 * i, o[p] + 2 * i + 1, o[p] + 2 * i + 2) if hs else (o[p] + i, o[p] + i + 1)
                for i in range(n)]
        for _ in range(2 if hs else 1):
            for seg in segs:
                rows.add(seg, count=L.states)
    for p in range(1, mesh.phases):
        rows.add((o[p] - 1, o[p]), count=L.tau)
    periodicity = len(rows) + np.arange(L.t + 2)  # the ring's border (:mod:`difimpact._nlp.bordered`)
    rows.add((0, G - 1), count=L.t + 2)
    for phase, _ in problem.gait.touchdowns:
        rows.add((o[phase],), count=2)
    rows.add((G - 1,), count=2)
    per_point = 4 * len(problem.gait.points)
    for i in problem.path_rows():
        rows.add((i // per_point,))
    rows.add((G - 1,), count=1 + problem.gait.strike_normals().size)
    return stage_sparsity(rows, groups=4, border_equalities=periodicity,
                          point_stages=point_stages(np.diff(o), hs))


def resample(problem: MultiPhaseProblem, old: MultiPhaseProblem, x_old) -> np.ndarray:
    """A start vector for `problem` from the optimum `x_old` of `old` (another mesh of the same gait; a warm
    start): per phase every state and torque interpolated linearly in phase time, the time since the step began
    from the durations. ``O(G)``."""
    L = problem.layout
    Z = problem.mesh.resample(np.asarray(x_old).reshape(-1, L.block), old.mesh)
    start = np.concatenate([[0.0], np.cumsum(Z[np.array(problem.offsets[:-1]), L.tau])])
    Z[:, L.t] = start[problem.mesh.phase_of_points()] + Z[:, L.tau] * problem.times()
    return Z.reshape(-1)
