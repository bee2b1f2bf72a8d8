import math

import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Config, Float, Scalar, ScalarLike, Velocity
from .._linalg import full_precision
from .._tree import Body, PlanarTree, Point
from .._validation import as_float, positive
from .base import AbstractSteppingModel, feet_apart

# Kelly's absolute counter-clockwise angles (q1..q5) from q[2:] = (a, b, c, d, e): q_k = −a + b − c + … (k terms).
_TO_KELLY = np.tril(np.tile([-1.0, 1.0, -1.0, 1.0, -1.0], (5, 1)))
_FROM_KELLY = np.linalg.inv(_TO_KELLY)  # a = −q1, b = q2 − q1, c = q2 − q3, d = q4 − q3, e = q4 − q5
# The leg swap on q[2:]: the new stance tibia angle and the joints exchanged between the legs (an involution).
_MIRROR = np.array([[1.0, -1.0, 1.0, -1.0, 1.0], [0, 0, 0, 0, 1], [0, 0, 0, 1, 0], [0, 0, 1, 0, 0], [0, 1, 0, 0, 0]])
# Kelly's pre-impact guess (MAIN.m: the left-right flip of q0 = (−0.3, 0.7, 0, −0.5, −0.6)), his angles.
_KELLY_GUESS = (-0.6, -0.5, 0.0, 0.7, -0.3)


class FiveLinkBiped(AbstractSteppingModel):
    r"""The five-link planar biped of Kelly (2017, §7 and appendix; OptimTraj ``demo/fiveLinkBiped``), with the
    parameters of the robot RABBIT (Chevallereau et al. 2003; Westervelt, Grizzle & Koditschek 2003): two
    tibias, two femurs and a torso, point feet, knees and hips revolute.

    Coordinates ``q = [x, y, q_stance_tibia, q_stance_knee, q_stance_hip, q_swing_hip, q_swing_knee]``:
    ``(x, y)`` the stance foot (the floating base), ``q[2] = θ_1`` the stance tibia's absolute angle (clockwise
    from the upward vertical, the package's convention), then the joints along the chain stance tibia → stance
    femur → torso → swing femur → swing tibia, measured so that each means the same on either leg — knee
    flexion and hip flexion (thigh ahead of the torso) positive (indices of ``q`` from 0):

    $$
    θ_2 = θ_1 - q_3, \quad θ_3 = θ_2 + q_4, \quad θ_4 = θ_3 - q_5 + π, \quad θ_5 = θ_4 + q_6
    $$

    (``θ_4``, ``θ_5``: the swing segments point down from their joints). ``q[2:] = 0`` stands upright with both
    legs straight below the hip. Kelly's counter-clockwise absolute angles are $q_1^K = -\theta_1$,
    $q_2^K = -\theta_2$, $q_3^K = -\theta_3$, $q_{4,5}^K = \pi  - \theta_{4,5}$, i.e.

    $$
    q^K_k = \sum_{j=1}^{k} (-1)^j\, q_{j+1}, \qquad k = 1, \dots, 5
    $$

    (:meth:`to_kelly`, :meth:`from_kelly`). Masses ``m``, centroidal inertias ``I``; the tibia's COM lies
    ``c_tibia`` below the knee, the femur's ``c_femur`` below the hip, the torso's ``torso_com`` above the hip.

    At heel strike the legs swap (:attr:`mirror`, :meth:`swap_legs`): with ``q[2:] = (a, b, c, d, e)``,
    ``(a, b, c, d, e) ↦ (a − b + c − d + e, e, d, c, b)``, Kelly's $q^+ = q^-([5\ 4\ 3\ 2\ 1])$.

    Actuators (:attr:`actuators`, Kelly's ``u_2..u_5``: stance knee, stance hip, swing hip, swing knee): a pair
    ``(a, b)`` applies a torque ``u`` to body ``a`` and ``−u`` to body ``b``, positive in the package's
    (clockwise) angle direction, so its generalised force is ``(∂θ_a/∂q − ∂θ_b/∂q)ᵀ u``. Kelly's torques act
    counter-clockwise on the distal body of each joint: ``u_k = −u`` (:meth:`kelly_to_actuator_torques`);
    his ``u_1`` acts between the ground and the stance tibia (:meth:`kelly_torques`).

    Named points: ``stance_foot``, ``stance_knee``, ``hip``, ``shoulders`` (top of the torso), ``swing_knee``,
    ``swing_foot``.

    **Arguments** (defaults: Kelly 2017, ``getPhysicalParameters.m``): `m_tibia` = 3.2 kg, `m_femur` = 6.8 kg,
    `m_torso` = 20 kg, `I_tibia` = 0.93, `I_femur` = 1.08, `I_torso` = 2.22 kg m², `l_tibia` = 0.4 m,
    `l_femur` = 0.4 m, `l_torso` = 0.625 m, `c_tibia` = 0.128 m (knee to COM), `c_femur` = 0.163 m (hip to COM),
    `torso_com` = 0.425 m (hip to COM: Kelly's 0.2 m measured down from the shoulders), `g` = 9.81 m/s².
    RABBIT's torso COM is 0.2 m above the hip: :meth:`rabbit`.
    """

    m_tibia: Scalar
    m_femur: Scalar
    m_torso: Scalar
    I_tibia: Scalar
    I_femur: Scalar
    I_torso: Scalar
    l_tibia: Scalar
    l_femur: Scalar
    l_torso: Scalar
    c_tibia: Scalar
    c_femur: Scalar
    torso_com: Scalar
    g: Scalar
    coordinate_names = ("x", "y", "q_stance_tibia", "q_stance_knee", "q_stance_hip", "q_swing_hip", "q_swing_knee")
    actuators = (("stance_femur", "stance_tibia"), ("torso", "stance_femur"), ("swing_femur", "torso"),
                 ("swing_tibia", "swing_femur"))
    mirror = (("stance_tibia", "swing_tibia"), ("stance_femur", "swing_femur"), ("torso", "torso"))

    def __init__(self, m_tibia: ScalarLike = 3.2, m_femur: ScalarLike = 6.8, m_torso: ScalarLike = 20.0,
                 I_tibia: ScalarLike = 0.93, I_femur: ScalarLike = 1.08, I_torso: ScalarLike = 2.22,
                 l_tibia: ScalarLike = 0.4, l_femur: ScalarLike = 0.4, l_torso: ScalarLike = 0.625,
                 c_tibia: ScalarLike = 0.128, c_femur: ScalarLike = 0.163, torso_com: ScalarLike = 0.425,
                 g: ScalarLike = 9.81):
        self.m_tibia = positive("m_tibia", m_tibia, shape=())
        self.m_femur = positive("m_femur", m_femur, shape=())
        self.m_torso = positive("m_torso", m_torso, shape=())
        self.I_tibia = positive("I_tibia", I_tibia, allow_zero=True, shape=())
        self.I_femur = positive("I_femur", I_femur, allow_zero=True, shape=())
        self.I_torso = positive("I_torso", I_torso, allow_zero=True, shape=())
        self.l_tibia = positive("l_tibia", l_tibia, shape=())
        self.l_femur = positive("l_femur", l_femur, shape=())
        self.l_torso = positive("l_torso", l_torso, shape=())
        self.c_tibia = positive("c_tibia", c_tibia, allow_zero=True, shape=())
        self.c_femur = positive("c_femur", c_femur, allow_zero=True, shape=())
        self.torso_com = positive("torso_com", torso_com, allow_zero=True, shape=())
        self.g = positive("g", g, allow_zero=True, shape=())

    @classmethod
    def rabbit(cls, **kwargs: ScalarLike) -> "FiveLinkBiped":
        """RABBIT as Chevallereau et al. (2003, Table 1) and Westervelt, Grizzle & Koditschek (2003) give it: the
        defaults (Kelly 2017) but for the torso's COM, 0.2 m above the hip (``torso_com = 0.2``) where Kelly's is
        0.2 m below the shoulders (0.425 m above the hip). Other parameters may be overridden by keyword."""
        return cls(**{"torso_com": 0.2, **kwargs})

    def tree(self) -> PlanarTree:
        lt, lf = self.l_tibia, self.l_femur
        zero = jnp.zeros_like(lt)
        bodies = [
            Body("stance_tibia", None, 2, self.m_tibia, self.I_tibia, (lt - self.c_tibia, zero)),
            Body("stance_femur", "stance_tibia", 3, self.m_femur, self.I_femur, (lf - self.c_femur, zero),
                 (lt, zero), sign=-1.0),
            Body("torso", "stance_femur", 4, self.m_torso, self.I_torso, (self.torso_com, zero), (lf, zero)),
            Body("swing_femur", "torso", 5, self.m_femur, self.I_femur, (self.c_femur, zero), sign=-1.0,
                 offset=math.pi),
            Body("swing_tibia", "swing_femur", 6, self.m_tibia, self.I_tibia, (self.c_tibia, zero), (lf, zero)),
        ]
        points = [
            Point("stance_foot", "stance_tibia"),
            Point("stance_knee", "stance_femur"),
            Point("hip", "torso"),
            Point("shoulders", "torso", (self.l_torso, zero)),
            Point("swing_knee", "swing_tibia"),
            Point("swing_foot", "swing_tibia", (lt, zero)),
        ]
        return PlanarTree._assemble(7, bodies, points, self.g, checked=False)

    @full_precision
    def to_kelly(self, q: Config, qdot: Velocity) -> tuple[Float[Array, " 5"], Float[Array, " 5"]]:
        """Kelly's absolute counter-clockwise angles ``(q1..q5)`` and their rates (class docstring); the base
        ``q[0:2]`` and its velocity are dropped (Kelly's stance foot is pinned at the origin)."""
        q, qdot = self._q(q), self._q(qdot, "qdot")
        to = jnp.asarray(_TO_KELLY, q.dtype)
        return to @ q[2:], to @ qdot[2:]

    @full_precision
    def from_kelly(self, q_kelly: Float[Array, " 5"], dq_kelly: Float[Array, " 5"]) -> tuple[Config, Velocity]:
        """``(q, q̇)`` of Kelly's angles and rates: the inverse of :meth:`to_kelly`, with the stance foot at the
        origin and at rest."""
        q_kelly = as_float("q_kelly", q_kelly, shape=(5,))
        dq_kelly = as_float("dq_kelly", dq_kelly, shape=(5,))
        back, base = jnp.asarray(_FROM_KELLY, q_kelly.dtype), jnp.zeros(2, q_kelly.dtype)
        return jnp.concatenate([base, back @ q_kelly]), jnp.concatenate([base, back @ dq_kelly])

    def kelly_to_actuator_torques(self, u_kelly: Float[Array, " 5"]) -> Float[Array, " 4"]:
        """The torques of :attr:`actuators` (clockwise, on the first body of each pair) of Kelly's ``u1..u5``:
        ``−(u2, u3, u4, u5)`` (his ankle torque ``u1`` has no actuator here)."""
        return -as_float("u_kelly", u_kelly, shape=(5,))[1:]

    @full_precision
    def kelly_torques(self, u_kelly: Float[Array, " 5"]) -> Velocity:
        r"""Generalised forces ``τ`` (``M q̈ + c = τ + Jᵀ F``) of Kelly's joint torques ``u1..u5``: ``u_k`` turns
        body ``k`` counter-clockwise and body ``k − 1`` (the ground for ``k = 1``) clockwise, so

        $$
        τ = -\sum_k u_k \left(\frac{∂θ_k}{∂q} - \frac{∂θ_{k-1}}{∂q}\right)^T,\qquad θ_0 = 0,
        $$

        ``τ = (0, 0, −u1, u2, −u3, u4, −u5)`` in these coordinates."""
        u = as_float("u_kelly", u_kelly, shape=(5,))
        rows = self.tree().angle_jacobian().astype(u.dtype)
        steps = rows - jnp.concatenate([jnp.zeros_like(rows[:1]), rows[:-1]])
        return -(steps.T @ u)

    @full_precision
    def swap_legs(self, q: Config, qdot: Velocity) -> tuple[Config, Velocity]:
        r"""The same state with the legs relabelled (heel strike, :attr:`mirror`): the base moves to the swing
        foot (its position and velocity) and ``q[2:] ↦ P q[2:]`` (likewise ``q̇[2:]``) with

        $$
        P = \begin{pmatrix} 1 & -1 & 1 & -1 & 1 \\ 0 & 0 & 0 & 0 & 1 \\ 0 & 0 & 0 & 1 & 0 \\
        0 & 0 & 1 & 0 & 0 \\ 0 & 1 & 0 & 0 & 0 \end{pmatrix},\qquad P^2 = I,
        $$

        no offset: the new stance tibia's angle is the old swing tibia's minus ``π``."""
        q, qdot = self._q(q), self._q(qdot, "qdot")
        tree, mirror = self.tree(), jnp.asarray(_MIRROR, q.dtype)
        foot, jac = tree.point_position(q, "swing_foot"), tree.point_jacobian(q, "swing_foot")
        return jnp.concatenate([foot, mirror @ q[2:]]), jnp.concatenate([jac @ qdot, mirror @ qdot[2:]])

    def step_length(self, q: Config) -> Scalar:
        """Swing foot ``x`` minus stance foot ``x`` (Kelly's ``P5(1)``, ``autoGen_cst_steplength.m``)."""
        return feet_apart(self, q)

    def pre_impact_guess(self) -> tuple[Config, Velocity]:
        """A heel-strike state to start from: Kelly's guess of the end of a step (``MAIN.m``, his angles
        ``(−0.6, −0.5, 0, 0.7, −0.3)``: stance leg behind, torso upright, swing knee bent) with the swing knee
        solved so that the swing foot is on the ground (step about 0.55 m with the defaults), stance foot at the
        origin, the whole robot turning about it at 1 rad/s (clockwise: forward, the swing foot coming down)."""
        q, qdot = self.from_kelly(jnp.asarray(_KELLY_GUESS), jnp.zeros(5))
        q = self.solve_coordinate(q, "swing_foot", 6, q[6])
        return q, qdot.at[2].set(1.0)
