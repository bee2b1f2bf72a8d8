import math

import jax.numpy as jnp

from .._custom_types import Array, Config, Float, Scalar, ScalarLike, Velocity
from .._tree import Body, PlanarTree, Point
from .._validation import as_float, check, positive
from .walker import AbstractWalker


def _slope(slope):
    slope = as_float("slope", slope, shape=())
    return check(slope, jnp.abs(slope) >= 0.5 * math.pi, "`slope` must lie in (-π/2, π/2) radians.")


class AbstractCompassWalker(AbstractWalker):
    """Two legs joined at the hip, coordinates ``q = [q1, q2, q3, q4]`` as in :class:`CompassGait`.

    The section state is ``x = (q3, q̇3, q̇4)`` just after heel strike (``q4 = 2 q3``). Heel strike is
    ``q4 = 2 q3 > 0``: the swing foot meets the ground ahead of the stance foot, the legs in mirror posture.
    :meth:`strike_gap` is ``q4 − 2 q3``, the swing leg's lead over the mirror image of the stance leg: zero at
    the start of the step, negative while the swing leg trails it, positive once it has overtaken it, zero again
    at heel strike. :func:`~difimpact.stride` arms the heel strike once the gap has risen above zero,
    so the swing foot's passage through the ground near mid-stance (where ``|q4 − q3| < |q3|``, foot scuffing),
    before or after the stance leg passes the slope normal, is ignored, as in the literature (Garcia et al.
    1998; Goswami, Thuilot & Espiau 1998).
    """

    section_names = ("q3", "q3dot", "q4dot")

    def from_section(self, x: Float[Array, " 3"]) -> tuple[Float[Array, " 2"], Float[Array, " 2"]]:
        return jnp.stack([x[0], 2 * x[0]]), x[1:]

    def to_section(self, theta: Float[Array, " 2"], theta_dot: Float[Array, " 2"]) -> Float[Array, " 3"]:
        return jnp.concatenate([theta[:1], theta_dot])

    def strike_gap(self, theta: Float[Array, " 2"]) -> Scalar:
        return theta[1] - 2 * theta[0]

    def swap(self, theta: Float[Array, " 2"]) -> Float[Array, " 2"]:
        """The swing leg becomes the stance leg: ``(q3, q4) ↦ (q3 − q4, −q4)``."""
        return jnp.stack([theta[0] - theta[1], -theta[1]])

    def strike_posture(self) -> tuple[Config, Velocity]:
        """``q = [0, R, 0.2, 0.4]`` turning about the stance foot at 1 rad/s."""
        R, zero = self.foot_radius, jnp.zeros_like(self.l)
        return (jnp.stack([zero, R, zero + 0.2, zero + 0.4]), jnp.stack([R, zero, zero + 1.0, zero]))


class CompassGait(AbstractCompassWalker):
    """Compass-gait biped with circular feet (Font-Llagunes et al. 2010, §4 and Fig. 1), walking down a slope.

    Coordinates ``q = [q1, q2, q3, q4]``: ``(q1, q2)`` the centre of the stance foot's arc, ``q3`` the
    absolute angle of the stance leg, ``q4`` the swing leg relative to the stance leg, so that the swing leg
    points along ``(sin(q4 − q3), −cos(q4 − q3))`` from the hip (see the documentation's conventions page). Each
    foot is an arc of radius ``R`` centred on the leg at ``l − R`` from the hip (``R = l``: the centre is the hip;
    ``R = 0``: point feet).
    Legs are point masses at ``b`` from the hip (the paper gives no inertia), plus a hip mass ``m_H``.
    Named points: ``stance_foot``, ``swing_foot`` (arcs: lowest point, material Jacobian), ``H``.
    As a walker see :class:`AbstractCompassWalker` (section state, heel strike, scuffing).

    **Arguments** (defaults of Font-Llagunes et al. 2010): `l` = 1 m, `m` = 5 kg, `b` = 0.5 m, `m_H` = 10 kg,
    `R` = 0.3 m (any ``0 ≤ R ≤ l``), `g` = 9.81 m/s², `slope` ``γ`` = 0 rad (ground sloping down toward ``+x``).
    """

    l: Scalar
    m: Scalar
    b: Scalar
    m_H: Scalar
    R: Scalar
    g: Scalar
    slope: Scalar
    coordinate_names = ("q1", "q2", "q3", "q4")

    def __init__(self, l: ScalarLike = 1.0, m: ScalarLike = 5.0, b: ScalarLike = 0.5, m_H: ScalarLike = 10.0,
                 R: ScalarLike = 0.3, g: ScalarLike = 9.81, slope: ScalarLike = 0.0):
        self.l = positive("l", l, shape=())
        self.m = positive("m", m, shape=())
        self.b = positive("b", b, shape=())
        self.m_H = positive("m_H", m_H, shape=())
        R = positive("R", R, allow_zero=True, shape=())
        self.R = check(R, R > self.l, "`R` must not exceed the leg length `l`.")
        self.g = positive("g", g, allow_zero=True, shape=())
        self.slope = _slope(slope)

    @property
    def foot_radius(self) -> Scalar:
        return self.R

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
        return PlanarTree._assemble(4, bodies, points, self.g, self.slope, checked=False)

    def stance_accelerations(self, theta: Float[Array, " 2"], theta_dot: Float[Array, " 2"]) -> Float[Array, " 2"]:
        r"""Single support with the stance foot rolling, in closed form: Lagrange's equations of the three point
        masses (legs ``m`` at ``p_1 = C + (d − b) e(q_3)`` and ``p_3 = C + d e(q_3) + b e(φ)``, hip ``m_H`` at
        ``p_2 = C + d e(q_3)``, with ``d = l − R``, ``φ = π + q_3 − q_4``, ``e(θ) = (\sin θ, \cos θ)`` and the arc
        centre ``C = (R q_3, R)``), each ``p_i`` with Jacobian ``J_i = ∂p_i/∂θ`` and $\dot J_i \dot \theta  = \kappa_i$:

        $$
        \Big(\sum_i m_i J_i^T J_i\Big)\,\ddot θ = \sum_i m_i J_i^T (\mathbf g - κ_i),
        $$

        solved by Cramer's rule (the ``2×2`` matrix is positive definite). The same equations as the tree's
        (:func:`~difimpact._models.walker.rolling_stance_accelerations`; Goswami, Thuilot & Espiau 1998, eq. 1 at
        ``R = 0``) in scalar operations only, which under ``vmap`` are elementwise and fuse."""
        q3, q4 = theta
        u3, u4 = theta_dot
        d, b, R = self.l - self.R, self.b, self.R
        s3, c3 = jnp.sin(q3), jnp.cos(q3)
        sp, cp = -jnp.sin(q3 - q4), -jnp.cos(q3 - q4)  # e(φ) = (sin φ, cos φ)
        gx, gy = self.g * jnp.sin(self.slope), -self.g * jnp.cos(self.slope)

        # 2-vectors as pairs of scalars: elementwise under vmap (a batched dot of length 2 fuses with nothing)
        def dot(u, v):
            return u[0] * v[0] + u[1] * v[1]

        a1 = (R + (d - b) * c3, -(d - b) * s3)  # ∂p_i/∂q3 (∂e/∂θ = (cos θ, −sin θ))
        a2 = (R + d * c3, -d * s3)
        a3 = (a2[0] + b * cp, a2[1] - b * sp)
        b3 = (-b * cp, b * sp)  # ∂p_3/∂q4
        w3, w_phi = u3**2, (u3 - u4) ** 2
        f1 = (gx + (d - b) * w3 * s3, gy + (d - b) * w3 * c3)  # g − κ_i
        f2 = (gx + d * w3 * s3, gy + d * w3 * c3)
        f3 = (f2[0] + b * w_phi * sp, f2[1] + b * w_phi * cp)
        m11 = self.m * (dot(a1, a1) + dot(a3, a3)) + self.m_H * dot(a2, a2)
        m12, m22 = self.m * dot(a3, b3), self.m * b**2
        r1 = self.m * (dot(a1, f1) + dot(a3, f3)) + self.m_H * dot(a2, f2)
        r2 = self.m * dot(b3, f3)
        det = m11 * m22 - m12**2
        return jnp.stack([m22 * r1 - m12 * r2, m11 * r2 - m12 * r1]) / det

    def pre_impact_state(self, q3: ScalarLike, q3dot: ScalarLike = 1.0) -> tuple[Config, Velocity]:
        """Symmetric heel-strike state of Font-Llagunes et al. 2010 (§4): ``q = [0, R, q3, 2 q3]`` (both arcs tangent to
        the ground; the paper's ``q2 = 0`` differs by a vertical shift that does not change the impact), stance foot
        rolling without slip ``q̇1 = R q̇3``, ``q̇2 = 0``, ``q̇4 = 0``."""
        q3 = as_float("q3", q3, shape=())
        q3dot = as_float("q3dot", q3dot, shape=())
        zero = jnp.zeros_like(q3)
        q = jnp.stack([zero, zero + self.R, q3, 2 * q3])
        qdot = jnp.stack([self.R * q3dot, zero, q3dot, zero])
        return q, qdot
