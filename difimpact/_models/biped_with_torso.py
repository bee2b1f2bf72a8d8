import math

import jax.numpy as jnp

from .._custom_types import Config, Scalar, ScalarLike, Velocity
from .._tree import Body, PlanarTree, Point
from .._validation import as_float, positive
from .base import AbstractSteppingModel


class BipedWithTorso(AbstractSteppingModel):
    """Straight-legged biped with a torso and point feet (Font & Kövecses 2008, Fig. 1, Table 1, Appendix A).

    Coordinates ``q = [q1, q2, q3, q4, q5]``: ``(q1, q2)`` the right foot P_R, ``q3`` the absolute angle of the
    right leg, ``q4`` the inter-leg angle (left leg along ``(sin(q4 − q3), −cos(q4 − q3))`` from the hip),
    ``q5`` the torso relative to the right leg, **subtracted**: the torso's absolute angle is ``q3 − q5``.
    All masses are points: legs ``m`` at ``b`` from the hip, hip ``m_H``, torso ``m_T`` at ``l_T`` from the hip.
    The mass matrix is exactly Font & Kövecses 2008, eq. 26. Named points: ``P_R``, ``P_L``, ``H``, ``T`` (torso mass).

    **Arguments** (defaults: Font & Kövecses 2008, Table 1; m_B = 2m + m_H + m_T = 30 kg, μ = 2m/m_H = 1,
    μ_T = m_T/m_H = 1): `m` = 5 kg, `m_H` = 10 kg, `m_T` = 10 kg, `l` = 0.8 m, `b` = 0.4 m, `l_T` = 0.4 m,
    `g` = 9.81 m/s². ``m = 0`` (all leg mass at the hip) and ``m_T = 0`` (massless torso) are allowed: ``M`` is then
    singular, which the impact maps handle.
    """

    m: Scalar
    m_H: Scalar
    m_T: Scalar
    l: Scalar
    b: Scalar
    l_T: Scalar
    g: Scalar
    coordinate_names = ("q1", "q2", "q3", "q4", "q5")

    def __init__(self, m: ScalarLike = 5.0, m_H: ScalarLike = 10.0, m_T: ScalarLike = 10.0, l: ScalarLike = 0.8,
                 b: ScalarLike = 0.4, l_T: ScalarLike = 0.4, g: ScalarLike = 9.81):
        self.m = positive("m", m, allow_zero=True, shape=())
        self.m_H = positive("m_H", m_H, shape=())
        self.m_T = positive("m_T", m_T, allow_zero=True, shape=())
        self.l = positive("l", l, shape=())
        self.b = positive("b", b, shape=())
        self.l_T = positive("l_T", l_T, shape=())
        self.g = positive("g", g, allow_zero=True, shape=())

    @classmethod
    def from_ratios(cls, mu: ScalarLike = 1.0, mu_T: ScalarLike = 1.0, m_B: ScalarLike = 30.0,
                    **kwargs: ScalarLike) -> "BipedWithTorso":
        """Build from Font & Kövecses 2008's mass ratios ``μ = 2m/m_H``, ``μ_T = m_T/m_H`` and total mass ``m_B``."""
        m_H = jnp.asarray(m_B, float) / (1.0 + jnp.asarray(mu, float) + jnp.asarray(mu_T, float))
        return cls(m=0.5 * mu * m_H, m_H=m_H, m_T=mu_T * m_H, **kwargs)

    def tree(self) -> PlanarTree:
        bodies = [
            Body("right_leg", -1, 2, self.m, 0.0, (self.l - self.b, 0.0)),
            Body("hip", 0, -1, self.m_H, 0.0, (0.0, 0.0), (self.l, 0.0)),
            Body("left_leg", 0, 3, self.m, 0.0, (self.b, 0.0), (self.l, 0.0), sign=-1.0, offset=math.pi),
            Body("torso", 0, 4, self.m_T, 0.0, (self.l_T, 0.0), (self.l, 0.0), sign=-1.0),
        ]
        points = [
            Point("P_R", 0),
            Point("H", 0, (self.l, 0.0)),
            Point("P_L", 2, (self.l, 0.0)),
            Point("T", 3, (self.l_T, 0.0)),
        ]
        return PlanarTree._assemble(5, bodies, points, self.g, checked=False)

    def heel_strike_posture(self, q4, q5=0.0) -> Config:
        """Symmetric heel-strike posture of Font & Kövecses 2008 (§4): both feet on the ground, ``q3 = q4/2``."""
        q4, q5 = as_float("q4", q4, shape=()), as_float("q5", q5, shape=())
        zero = jnp.zeros_like(q4)
        return jnp.stack([zero, zero, 0.5 * q4, q4, zero + q5])

    def pre_impact_state(self, q4: ScalarLike, q5: ScalarLike | None = None, q3dot: ScalarLike = 1.0
                         ) -> tuple[Config, Velocity]:
        """Pre-impact state of Font & Kövecses 2008 (§4): :meth:`heel_strike_posture` ``q3 = q4/2``, right foot at rest
        (``q̇1 = q̇2 = 0``), no relative leg rotation (``q̇4 = 0``), torso not rotating (``q̇5 = q̇3``).
        ``q5`` defaults to an upright torso, ``q5 = q3`` (§4.1); §4.2 varies it over 0…30° at ``q4 = 30°``."""
        q4 = as_float("q4", q4, shape=())
        q3dot = as_float("q3dot", q3dot, shape=())
        q5 = 0.5 * q4 if q5 is None else as_float("q5", q5, shape=())
        zero = jnp.zeros_like(q4)
        return self.heel_strike_posture(q4, q5), jnp.stack([zero, zero, q3dot, zero, q3dot])

    def step_length(self, q: Config) -> Scalar:
        """``L = 2 l sin(q4/2)`` (Font & Kövecses 2008, below eq. 23)."""
        return 2 * self.l * jnp.sin(self._q(q)[3] / 2)
