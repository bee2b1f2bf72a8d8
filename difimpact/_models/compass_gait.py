import math

import jax.numpy as jnp

from .._custom_types import Config, Scalar, ScalarLike, Velocity
from .._tree import Body, PlanarTree, Point
from .._validation import as_float, check, positive
from .base import AbstractPlanarModel


class CompassGait(AbstractPlanarModel):
    """Compass-gait biped with circular feet (seed 001, §4 and Fig. 1).

    Coordinates ``q = [q1, q2, q3, q4]``: ``(q1, q2)`` the centre of the stance foot's arc, ``q3`` the
    absolute angle of the stance leg, ``q4`` the swing leg relative to the stance leg, so that the swing leg
    points along ``(sin(q4 − q3), −cos(q4 − q3))`` from the hip (see the documentation's conventions page). Each foot is an
    arc of radius ``R`` centred on the leg at ``l − R`` from the hip (``R = l``: the centre is the hip).
    Legs are point masses at ``b`` from the hip (the paper gives no inertia), plus a hip mass ``m_H``.
    Named points: ``stance_foot``, ``swing_foot`` (arcs: lowest point, material Jacobian), ``H``.

    **Arguments** (defaults of seed 001): `l` = 1 m, `m` = 5 kg, `b` = 0.5 m, `m_H` = 10 kg, `R` = 0.3 m
    (any ``0 ≤ R ≤ l``), `g` = 9.81 m/s².
    """

    l: Scalar
    m: Scalar
    b: Scalar
    m_H: Scalar
    R: Scalar
    g: Scalar
    coordinate_names = ("q1", "q2", "q3", "q4")

    def __init__(self, l: ScalarLike = 1.0, m: ScalarLike = 5.0, b: ScalarLike = 0.5, m_H: ScalarLike = 10.0,
                 R: ScalarLike = 0.3, g: ScalarLike = 9.81):
        self.l = positive("l", l, shape=())
        self.m = positive("m", m, shape=())
        self.b = positive("b", b, shape=())
        self.m_H = positive("m_H", m_H, shape=())
        R = positive("R", R, allow_zero=True, shape=())
        self.R = check(R, R > self.l, "`R` must not exceed the leg length `l`.")
        self.g = positive("g", g, allow_zero=True, shape=())

    def tree(self) -> PlanarTree:
        d = self.l - self.R  # arc centre to hip
        bodies = [
            Body("stance_leg", -1, 2, self.m, 0.0, (d - self.b, 0.0)),
            Body("hip", 0, -1, self.m_H, 0.0, (0.0, 0.0), (d, 0.0)),
            Body("swing_leg", 0, 3, self.m, 0.0, (self.b, 0.0), (d, 0.0), sign=-1.0, offset=math.pi),
        ]
        points = [
            Point("stance_foot", 0, (0.0, 0.0), self.R),
            Point("H", 0, (d, 0.0)),
            Point("swing_foot", 2, (d, 0.0), self.R),
        ]
        return PlanarTree.build(4, bodies, points, self.g)

    def pre_impact_state(self, q3: ScalarLike, q3dot: ScalarLike = 1.0) -> tuple[Config, Velocity]:
        """Symmetric heel-strike state of seed 001 (§4): ``q = [0, R, q3, 2 q3]`` (both arcs tangent to the
        ground; the paper's ``q2 = 0`` differs by a vertical shift that does not change the impact),
        stance foot rolling without slip ``q̇1 = R q̇3``, ``q̇2 = 0``, ``q̇4 = 0``."""
        q3 = as_float("q3", q3, shape=())
        q3dot = as_float("q3dot", q3dot, shape=())
        zero = jnp.zeros_like(q3)
        q = jnp.stack([zero, zero + self.R, q3, 2 * q3])
        qdot = jnp.stack([self.R * q3dot, zero, q3dot, zero])
        return q, qdot

    def step_length(self, q: Config) -> Scalar:
        """Distance between the two contact points."""
        t, q = self.tree(), self._q(q)
        return t.point_position(q, "swing_foot")[0] - t.point_position(q, "stance_foot")[0]
