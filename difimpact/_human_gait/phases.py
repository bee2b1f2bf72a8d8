r"""The phases of one step of the seven-link human's symmetric gait on level ground, their constrained dynamics,
the heel strike and the legs' relabelling.

The model is :class:`~difimpact.SevenLinkHuman` with its floating base (the lumbar joint centre) and joint torques
``u`` at the hips, knees and ankles (on the distal segment, the reaction on the proximal one), so ``B = [0; I_6]``.
Each foot is a rigid segment touching the ground at two points, its heel ``CAL`` and its metatarsal heads ``MH``
(no toe joint). A phase holds a set of contact rows ``A(q)`` (normal ``+y`` and tangential ``+x`` velocity of
a point, :meth:`~difimpact.AbstractPlanarModel.contact_jacobian`) at zero velocity; its dynamics are the
index-1 form of the constrained Lagrange equations (Ros et al. 2015, eq. 2, with finite forces),

$$\begin{bmatrix} M & -A^T \\ A & 0 \end{bmatrix}\begin{bmatrix}\ddot q \\ λ\end{bmatrix}
  = \begin{bmatrix} B u - c(q, \dot q) \\ -\dot A \dot q \end{bmatrix},$$

``λ`` the ground's forces ``(F_n, F_t)`` on the contact points, solved through the Schur complement
``A M^{-1} A^T`` (two unrolled ``LDL^T`` solves), with Baumgarte's stabilisation of the held rows,
``A \ddot q + \dot A \dot q = -2α A \dot q - α^2 (y, 0)`` (``α`` = :data:`ALPHA`; heights ``y`` on the normal rows): the
index-1 form keeps ``A \dot q`` only up to the collocation's error, and on the 3/2/4/3 mesh an unstabilised optimum
let a "held" heel drift at 0.3 m/s. On the constraint manifold the added terms vanish. One step, right heel strike to left heel strike:

1. ``double``: the right heel sticks and turns about ``CAL_R``; the left foot rolls about ``MH_L``; until the
   left toe-off;
2. ``heel``: single support on the right heel, until the right foot is flat (``MH_R`` lands at rest);
3. ``flat``: the right foot flat (``CAL_R`` held, ``MH_R`` on the ground), until the right heel-off;
4. ``toe``: the right foot rolls about ``MH_R``, until the left heel strikes.

Heel strike is :func:`~difimpact._impact.kkt.solve_kkt` with the left heel sticking and the right metatarsal heads
held (``M(\dot q^+ - \dot q^-) = A^T \bar λ``, ``A \dot q^+ = 0``; Ros et al. 2015, eqs. 4–9 with the trailing foot
staying); the legs are then relabelled and the origin moved to the new leading heel.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Float
from .._impact.kkt import ImpactSolution, solve_kkt
from .._linalg import full_precision, solve_spd
from .._models.seven_link_human import SevenLinkHuman

FEET = ("CAL_R", "MH_R", "CAL_L", "MH_L")
JOINTS = ("theta_H_R", "theta_K_R", "theta_A_R", "theta_H_L", "theta_K_L", "theta_A_L")
N, K = 9, 6  # coordinates, joint torques
ALPHA = 30.0  # 1/s: Baumgarte rate of the held contacts (:func:`dynamics`)


class Phase(NamedTuple):
    """A phase: its name and its contact rows ``(point, rows)``, rows ``0`` normal and ``1`` tangential."""

    name: str
    contacts: tuple[tuple[str, tuple[int, ...]], ...]

    @property
    def rows(self) -> int:
        return sum(len(r) for _, r in self.contacts)

    @property
    def free_points(self) -> tuple[str, ...]:
        """The foot points off the ground in this phase (their height must stay ``≥ 0``)."""
        held = {p for p, _ in self.contacts}
        return tuple(p for p in FEET if p not in held)


PHASES = (
    Phase("double", (("CAL_R", (0, 1)), ("MH_L", (0, 1)))),
    Phase("heel", (("CAL_R", (0, 1)),)),
    Phase("flat", (("CAL_R", (0, 1)), ("MH_R", (0,)))),
    Phase("toe", (("MH_R", (0, 1)),)),
)


def actuation(dtype) -> Float[Array, "9 6"]:
    """``B``: joint torques on the six relative joint coordinates."""
    return jnp.concatenate([jnp.zeros((3, K), dtype), jnp.eye(K, dtype=dtype)])


ROWS = tuple((p, r) for p in FEET for r in (0, 1))  # every contact row: (point, 0 normal | 1 tangential)


def mask(phase: Phase) -> np.ndarray:
    """``(8,)`` which rows of :data:`ROWS` the phase holds."""
    held = {(p, r) for p, rows in phase.contacts for r in rows}
    return np.array([row in held for row in ROWS])


@full_precision
def dynamics(human: SevenLinkHuman, active, q, qd, u):
    """``(q̈, λ, y)``: the accelerations, the ground's forces on the rows of :data:`ROWS` [N] (zero where not
    `active`) and the heights of :data:`FEET`; the held rows obey ``A q̈ + Ȧ q̇ = -2α A q̇ - α² (y, 0)``. An inactive row is dropped by a unit diagonal in the Schur
    complement and a zero right-hand side, so every phase is one traced program."""
    tree = human.tree()
    M, c = tree.mass_and_bias(q, qd)
    kin = [tree.point_kinematics(q, qd, p) for p in FEET]
    A_all = jnp.concatenate([J[::-1] for _, J, _ in kin])
    A = A_all * active[:, None]
    bias = jnp.concatenate([a[::-1] for _, _, a in kin])
    # Baumgarte: the held rows' drift (velocity, and the normal rows' height) decays at rate ALPHA; zero on the
    # constraint manifold, so the contacts' forces and the energy balance of an exact solution are unchanged
    height = jnp.concatenate([jnp.stack([p[1], jnp.zeros((), q.dtype)]) for p, _, _ in kin])
    stab = 2 * ALPHA * (A_all @ qd) + ALPHA**2 * height
    rhs = jnp.concatenate([A.T, (actuation(q.dtype) @ u - c)[:, None]], axis=1)
    X = solve_spd(M, rhs, "M")
    Minv_At, free = X[:, :-1], X[:, -1]
    schur = A @ Minv_At + jnp.diag(jnp.where(active, 0.0, 1.0))
    lam = solve_spd(schur, jnp.where(active, -bias - stab - A @ free, 0.0), "A M^-1 A^T")
    return free + Minv_At @ lam, lam, jnp.stack([p[1] for p, _, _ in kin])


def swap(v) -> Float[Array, " 9"]:
    """Left and right legs exchanged (the model's legs are identical)."""
    return jnp.concatenate([v[:3], v[6:9], v[3:6]])


@full_precision
def heel_strike(human: SevenLinkHuman, q, qd) -> ImpactSolution:
    """The left heel strikes and sticks while the right metatarsal heads stay: rows ``CAL_L (n, t)``,
    ``MH_R (n, t)``, impulses in that order."""
    A = jnp.concatenate([human.contact_jacobian(q, "CAL_L"), human.contact_jacobian(q, "MH_R")])
    return solve_kkt(human.mass_matrix(q), A, qd, jnp.zeros(4, q.dtype), False)


def relabel(human: SevenLinkHuman, q, qd_plus) -> tuple[Float[Array, " 9"], Float[Array, " 9"]]:
    """The next step's initial state: legs exchanged, the new leading heel (``CAL_L``) at ``x = 0``."""
    shift = human.tree().point_position(q, "CAL_L")[0]
    return swap(q).at[0].add(-shift), swap(qd_plus)


def energy(human: SevenLinkHuman, q, qd):
    """Mechanical energy ``T + V`` [J]."""
    tree = human.tree()
    return tree.kinetic_energy(q, qd) + tree.potential_energy(q)


def joint_power(qd, u):
    """Actuator power ``u · \\dot θ`` [W] (``B^T \\dot q`` are the joint rates)."""
    return jnp.sum(u * qd[3:], axis=-1)


vdynamics = jax.vmap(dynamics, in_axes=(None, 0, 0, 0, 0))
