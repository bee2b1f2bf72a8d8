r"""A gait as data: the contact phases of one step, the touchdowns between them, the impact that ends it and the
relabelling that makes it periodic, for any planar model with a floating base.

A phase holds a set of contact rows ``A(q)`` (normal ``+y`` and tangential ``+x`` velocity of a point,
:meth:`~difimpact.AbstractPlanarModel.contact_jacobian`) at zero velocity; its dynamics are the index-1 form of
the constrained Lagrange equations (Ros et al. 2015, eq. 2, with finite forces),

$$\begin{bmatrix} M & -A^T \\ A & 0 \end{bmatrix}\begin{bmatrix}\ddot q \\ λ\end{bmatrix}
  = \begin{bmatrix} B u - c(q, \dot q) \\ -\dot A \dot q \end{bmatrix},$$

``λ`` the ground's forces ``(F_n, F_t)`` on the contact points, solved through the Schur complement
``A M⁻¹Aᵀ``, with Baumgarte's stabilisation of the held rows,
``A \ddot q + \dot A \dot q = -2α A \dot q - α^2 (y, 0)`` (heights ``y`` on the normal rows; zero on the
constraint manifold, so an exact solution's forces and energy are unchanged). Every phase is one traced program:
an inactive row is dropped by a unit diagonal in the Schur complement and a zero right-hand side.

A point that joins the held set between phases without an impact lands at rest (:class:`ContactGait`'s
`touchdowns`: height and normal velocity zero at the phase's first point). The step ends with an impulsive impact
(``M(\dot q^+ - \dot q^-) = A^T \bar λ``, ``A \dot q^+ = 0`` on the `strike` rows; Ros et al. 2015, eqs. 4–9),
then the model's coordinates are permuted (`mirror`: the legs exchanged) and the origin moved to the striking
point.
"""

from typing import NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Float
from .._impact.kkt import ImpactSolution, solve_kkt
from .._linalg import full_precision, solve_spd

Contacts = tuple[tuple[str, tuple[int, ...]], ...]


class ContactPhase(NamedTuple):
    """A phase: its name and its contact rows ``(point, rows)``, rows ``0`` normal and ``1`` tangential."""

    name: str
    contacts: Contacts

    @property
    def rows(self) -> int:
        return sum(len(r) for _, r in self.contacts)

    def held(self) -> set[str]:
        return {p for p, _ in self.contacts}


class ContactGait(eqx.Module):
    """One step of a symmetric gait, as data (module docstring).

    - `points`: the contact candidates (feet points) by name; `phases`: :class:`ContactPhase` in order.
    - `actuated`: the coordinates the torques drive (``B`` has a unit column per one).
    - `mirror`: the coordinates' permutation at relabelling (``q⁺ = q⁻[mirror]``, the legs exchanged).
    - `strike`: the impact's contact rows, the striking point first (its ``x`` is the step length).
    - `touchdowns`: ``(phase, point)``: `point` lands at rest at `phase`'s start.
    - `end_clearance`: points above the ground at the step's last point (besides every phase's free points at
      its interior points).
    - `q_bounds`, `qd_max`: bounds of every coordinate and rate; `alpha` [1/s]: Baumgarte's rate.
    """

    points: tuple[str, ...] = eqx.field(static=True)
    phases: tuple[ContactPhase, ...] = eqx.field(static=True)
    actuated: tuple[int, ...] = eqx.field(static=True)
    mirror: tuple[int, ...] = eqx.field(static=True)
    strike: Contacts = eqx.field(static=True)
    touchdowns: tuple[tuple[int, str], ...] = eqx.field(static=True)
    end_clearance: tuple[str, ...] = eqx.field(static=True)
    q_bounds: tuple[tuple[float, ...], tuple[float, ...]] = eqx.field(static=True)
    qd_max: tuple[float, ...] = eqx.field(static=True)
    alpha: float = eqx.field(static=True, default=30.0)

    def __check_init__(self):
        n = len(self.mirror)
        if sorted(self.mirror) != list(range(n)):
            raise ValueError(f"`mirror` must be a permutation of the {n} coordinates, got {self.mirror!r}.")
        for name, v in (("q_bounds[0]", self.q_bounds[0]), ("q_bounds[1]", self.q_bounds[1]),
                        ("qd_max", self.qd_max)):
            if len(v) != n:
                raise ValueError(f"`{name}`: one per coordinate ({n}), got {len(v)}.")
        known = set(self.points)
        for where, contacts in [(f"phase {ph.name!r}", ph.contacts) for ph in self.phases] + [
                ("strike", self.strike)]:
            for p, rows in contacts:
                if p not in known or not rows or not set(rows) <= {0, 1}:
                    raise ValueError(f"`{where}`: contact ({p!r}, {rows!r}) must name one of {self.points} "
                                     f"with rows among (0, 1).")
        for phase, p in self.touchdowns:
            if not 0 < phase < len(self.phases) or p not in self.phases[phase].held():
                raise ValueError(f"`touchdowns`: ({phase}, {p!r}) must be a later phase holding that point.")
        if not set(self.actuated) <= set(range(n)) or not self.actuated:
            raise ValueError(f"`actuated` must be coordinates among 0..{n - 1}, got {self.actuated!r}.")

    @property
    def coordinates(self) -> int:
        return len(self.mirror)

    @property
    def controls(self) -> int:
        return len(self.actuated)

    @property
    def rows(self) -> tuple[tuple[str, int], ...]:
        """Every contact row: ``(point, 0 normal | 1 tangential)``, point after point."""
        return tuple((p, r) for p in self.points for r in (0, 1))

    def mask(self, phase: ContactPhase) -> np.ndarray:
        """``(2 P,)`` which of :attr:`rows` `phase` holds."""
        held = {(p, r) for p, rows in phase.contacts for r in rows}
        return np.array([row in held for row in self.rows])

    def free_points(self, phase: ContactPhase) -> tuple[str, ...]:
        """The points off the ground in `phase` (their height must stay ``≥ 0``)."""
        return tuple(p for p in self.points if p not in phase.held())

    def actuation(self, dtype) -> Float[Array, "n k"]:
        """``B``: a unit column per actuated coordinate."""
        B = np.zeros((self.coordinates, self.controls))
        B[list(self.actuated), np.arange(self.controls)] = 1.0
        return jnp.asarray(B, dtype)

    def dynamics(self, model, active, q, qd, u):
        """``(q̈, λ, y)``: the accelerations, the ground's forces on :attr:`rows` [N] (zero where not `active`)
        and the heights of :attr:`points` (module docstring)."""
        d = self.point_dynamics(model, active, q, qd, u)
        return d.qdd, d.forces, d.heights

    @full_precision
    def point_dynamics(self, model, active, q, qd, u) -> "PointDynamics":
        """:meth:`dynamics` with the rows ``A`` of every contact and ``M⁻¹Aᵀ`` (the same solve's)."""
        tree = model.tree()
        M, c = tree.mass_and_bias(q, qd)
        kin = [tree.point_kinematics(q, qd, p) for p in self.points]
        A_all = jnp.concatenate([J[::-1] for _, J, _ in kin])
        A = A_all * active[:, None]
        bias = jnp.concatenate([a[::-1] for _, _, a in kin])
        height = jnp.concatenate([jnp.stack([p[1], jnp.zeros((), q.dtype)]) for p, _, _ in kin])
        stab = 2 * self.alpha * (A_all @ qd) + self.alpha**2 * height
        rhs = jnp.concatenate([A_all.T, (self.actuation(q.dtype) @ u - c)[:, None]], axis=1)
        X = solve_spd(M, rhs, "M")
        mobility, free = X[:, :-1], X[:, -1]
        Minv_At = mobility * active[None, :]
        schur = A @ Minv_At + jnp.diag(jnp.where(active, 0.0, 1.0))
        lam = solve_spd(schur, jnp.where(active, -bias - stab - A @ free, 0.0), "A M^-1 A^T")
        return PointDynamics(free + Minv_At @ lam, lam, jnp.stack([p[1] for p, _, _ in kin]), A_all, mobility)

    def vdynamics(self, model, active, q, qd, u) -> "PointDynamics":
        """:meth:`point_dynamics` at every point (rows of `active`, `q`, `qd`, `u`)."""
        return jax.vmap(self.point_dynamics, in_axes=(None, 0, 0, 0, 0))(model, active, q, qd, u)

    @full_precision
    def impact(self, model, q, qd) -> ImpactSolution:
        """The step's impact on the `strike` rows, impulses in their order: the library's impact map, with its
        diagnosis (redundant rows, an undetermined velocity) in ``result``."""
        A = self._strike_jacobian(model, q)
        return solve_kkt(model.mass_matrix(q), A, qd, jnp.zeros(A.shape[0], q.dtype), False)

    @full_precision
    def impact_jump(self, model, q, qd, at: "PointDynamics | None" = None
                    ) -> tuple[Float[Array, " n"], Float[Array, " m"]]:
        r"""``(q̇⁺, P)`` of :meth:`impact` (the post-impact rates and the impulses on the `strike` rows) by the
        Schur complement alone, for the transcription, which differentiates it twice:

        $$P = -(A M^{-1} A^T)^{-1} A \dot q^-, \qquad \dot q^+ = \dot q^- + M^{-1} A^T P$$

        (Ros et al. 2015, eqs. 4–9, the strike rows sticking), ``A`` and ``M⁻¹Aᵀ`` taken from `at` (the
        :meth:`point_dynamics` at ``q``, ``q̇``) where given. Equal to :meth:`impact`'s where ``A`` has full row
        rank; where ``A M⁻¹Aᵀ`` is singular to working precision the values are NaN (:func:`solve_spd`'s
        check inside the solve's program), a trial point the solver rejects."""
        if at is None:
            A = self._strike_jacobian(model, q)
            X = solve_spd(model.mass_matrix(q), A.T, "M")
        else:
            struck = np.array([self.rows.index((p, r)) for p, rows in self.strike for r in rows])
            A, X = at.rows[struck], at.mobility[:, struck]
        P = solve_spd(A @ X, -(A @ qd), "A M^-1 A^T")
        return qd + X @ P, P

    def _strike_jacobian(self, model, q):
        return jnp.concatenate([_rows(model.contact_jacobian(q, p), rows) for p, rows in self.strike])

    def strike_normals(self) -> np.ndarray:
        """Indices of the impact's normal impulses."""
        return np.flatnonzero(np.array([r == 0 for _, rows in self.strike for r in rows]))

    def relabel(self, model, q, qd_plus) -> tuple[Float[Array, " n"], Float[Array, " n"]]:
        """The next step's initial state: coordinates permuted by `mirror`, the striking point at ``x = 0``."""
        shift = model.tree().point_position(q, self.strike[0][0])[0]
        perm = np.asarray(self.mirror)
        return q[perm].at[0].add(-shift), qd_plus[perm]


class PointDynamics(NamedTuple):
    """:meth:`ContactGait.point_dynamics` at a point (or at every point, stacked): ``q̈``, the `forces` on the
    gait's rows [N], the `heights` of its points [m], the `rows` ``A`` ``(2 P, n)`` of every contact (normal and
    tangential velocity of each point) and their `mobility` ``M⁻¹Aᵀ`` ``(n, 2 P)``."""

    qdd: Float[Array, "... n"]
    forces: Float[Array, "... m"]
    heights: Float[Array, "... p"]
    rows: Float[Array, "... m n"]
    mobility: Float[Array, "... n m"]


def _rows(J, rows):
    return J if tuple(rows) == (0, 1) else J[np.asarray(rows)]


def energy(model, q, qd):
    """Mechanical energy ``T + V`` [J]."""
    tree = model.tree()
    return tree.kinetic_energy(q, qd) + tree.potential_energy(q)
