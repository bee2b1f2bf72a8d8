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
let a "held" heel drift at 0.3 m/s. On the constraint manifold the added terms vanish. One step, right heel strike to
left heel strike:

1. ``double``: the right heel sticks and turns about ``CAL_R``; the left foot rolls about ``MH_L``; until the
   left toe-off;
2. ``heel``: single support on the right heel, until the right foot is flat (``MH_R`` lands at rest);
3. ``flat``: the right foot flat (``CAL_R`` held, ``MH_R`` on the ground), until the right heel-off;
4. ``toe``: the right foot rolls about ``MH_R``, until the left heel strikes.

Heel strike is :func:`~difimpact._impact.kkt.solve_kkt` with the left heel sticking and the right metatarsal heads
held (``M(\dot q^+ - \dot q^-) = A^T \bar λ``, ``A \dot q^+ = 0``; Ros et al. 2015, eqs. 4–9 with the trailing foot
staying); the legs are then relabelled and the origin moved to the new leading heel.
"""

import jax.numpy as jnp
import numpy as np

from .._collocation.contact import ContactGait, ContactPhase
from .._collocation.contact import energy as energy
from .._custom_types import Array, Float
from .._impact.kkt import ImpactSolution
from .._models.seven_link_human import SevenLinkHuman

FEET = ("CAL_R", "MH_R", "CAL_L", "MH_L")
JOINTS = ("theta_H_R", "theta_K_R", "theta_A_R", "theta_H_L", "theta_K_L", "theta_A_L")
N, K = 9, 6  # coordinates, joint torques
ALPHA = 30.0  # 1/s: Baumgarte rate of the held contacts (:func:`dynamics`)
Phase = ContactPhase
# Bounds of (q, q̇): x, y, torso, then hip, knee, ankle per leg (clockwise; knee flexion positive).
Q_LO = (-1.0, 0.5, -0.5, -1.0, 0.0, -0.6, -1.0, 0.0, -0.6)
Q_HI = (1.5, 1.5, 0.5, 0.7, 1.4, 0.6, 0.7, 1.4, 0.6)
QD_MAX = (5.0, 5.0, 5.0) + (15.0,) * 6

PHASES = (
    Phase("double", (("CAL_R", (0, 1)), ("MH_L", (0, 1)))),
    Phase("heel", (("CAL_R", (0, 1)),)),
    Phase("flat", (("CAL_R", (0, 1)), ("MH_R", (0,)))),
    Phase("toe", (("MH_R", (0, 1)),)),
)
# The step as data (:class:`~difimpact._collocation.contact.ContactGait`): the torques on the six joints, the
# legs exchanged at relabelling, the left heel striking with the right metatarsal heads staying, the right
# metatarsal heads landing at rest when the foot becomes flat, the left toe above the ground at the strike.
STEP = ContactGait(points=FEET, phases=PHASES, actuated=tuple(range(3, 9)), mirror=(0, 1, 2, 6, 7, 8, 3, 4, 5),
                   strike=(("CAL_L", (0, 1)), ("MH_R", (0, 1))), touchdowns=((2, "MH_R"),),
                   end_clearance=("MH_L",), q_bounds=(Q_LO, Q_HI), qd_max=QD_MAX, alpha=ALPHA)
ROWS = STEP.rows  # every contact row: (point, 0 normal | 1 tangential)


def actuation(dtype) -> Float[Array, "9 6"]:
    """``B``: joint torques on the six relative joint coordinates."""
    return STEP.actuation(dtype)


def mask(phase: Phase) -> np.ndarray:
    """``(8,)`` which rows of :data:`ROWS` the phase holds."""
    return STEP.mask(phase)


def dynamics(human: SevenLinkHuman, active, q, qd, u):
    """``(q̈, λ, y)``: the accelerations, the ground's forces on the rows of :data:`ROWS` [N] (zero where not
    `active`) and the heights of :data:`FEET` (:meth:`~difimpact._collocation.contact.ContactGait.dynamics`)."""
    return STEP.dynamics(human, active, q, qd, u)


def swap(v) -> Float[Array, " 9"]:
    """Left and right legs exchanged (the model's legs are identical)."""
    return jnp.concatenate([v[:3], v[6:9], v[3:6]])


def heel_strike(human: SevenLinkHuman, q, qd) -> ImpactSolution:
    """The left heel strikes and sticks while the right metatarsal heads stay: rows ``CAL_L (n, t)``,
    ``MH_R (n, t)``, impulses in that order."""
    return STEP.impact(human, q, qd)


def relabel(human: SevenLinkHuman, q, qd_plus) -> tuple[Float[Array, " 9"], Float[Array, " 9"]]:
    """The next step's initial state: legs exchanged, the new leading heel (``CAL_L``) at ``x = 0``."""
    return STEP.relabel(human, q, qd_plus)


def joint_power(qd, u):
    """Actuator power ``u · \\dot θ`` [W] (``B^T \\dot q`` are the joint rates)."""
    return jnp.sum(u * qd[3:], axis=-1)


def vdynamics(human, active, q, qd, u):
    """:func:`dynamics` at every point."""
    return STEP.vdynamics(human, active, q, qd, u)
