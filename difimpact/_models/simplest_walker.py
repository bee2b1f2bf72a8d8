import jax.numpy as jnp

from .._custom_types import Array, Float, Scalar
from .._tree import Body, PlanarTree, Point
from .._validation import positive
from .compass_gait import _slope, AbstractCompassWalker


class SimplestWalker(AbstractCompassWalker):
    r"""Garcia, Chatterjee, Ruina & Coleman's (1998) simplest walking model, by its exact limit equations.

    A compass gait with point feet, a hip mass ``M`` and foot masses ``m`` at the ends of legs of length ``l``,
    in the limit ``β = m / M → 0`` (coordinates of :class:`CompassGait`). The stance leg is an inverted
    pendulum carrying the hip, ``q̈3 = (g/l) sin(q3 + γ)``; the swing leg is a pendulum hanging from the moving
    hip, whose foot feels only gravity and the massless leg's axial force: with ``s = q4 − q3`` the swing leg's
    absolute angle from the downward normal, ``s̈ = −(g/l) sin(s − γ) − q̈3 cos q4 + q̇3² sin q4``, which with
    ``q̈3`` above and ``sin(q4 − q3 − γ) = sin q4 cos(q3 + γ) − cos q4 sin(q3 + γ)`` is

    $$
    \ddot q_4 = \ddot q_3 + \sin q_4 \Big(\dot q_3^2 - \frac{g}{l}\cos(q_3 + γ)\Big)
    $$

    (Garcia et al. 1998, eqs. 1–2, in these coordinates). At heel strike (``q4 = 2 q3 = 2a``) the hip's angular
    momentum about the striking foot is conserved and the new swing foot keeps zero velocity across its leg:
    ``q̇3⁺ = q̇3⁻ cos 2a``, ``q̇4⁺ = q̇3⁺ (1 − cos 2a)`` in the swapped labels (Garcia et al. 1998, eq. 4): the
    gait's impact law for this walker, :class:`~difimpact.MasslessLegsHeelStrike` (the general map of
    :func:`~difimpact.impact` needs the legs' mass). Kinetic energy is the hip's, ``½ M l² q̇3²``. Gait results
    are exact in the limit, not ``O(β)`` approximations.

    **Arguments:** `slope` ``γ`` [rad]; `l`, `g`, `M` = 1 (Garcia's scaling).
    """

    slope: Scalar
    l: Scalar
    g: Scalar
    M: Scalar
    coordinate_names = ("q1", "q2", "q3", "q4")

    def __init__(self, slope=0.009, l=1.0, g=1.0, M=1.0):
        self.slope = _slope(slope)
        self.l = positive("l", l, shape=())
        self.g = positive("g", g, shape=())
        self.M = positive("M", M, shape=())

    @property
    def foot_radius(self) -> Scalar:
        return jnp.zeros_like(self.l)

    def tree(self) -> PlanarTree:
        """The hip mass on massless legs (geometry, energies and the hip's motion)."""
        zero = jnp.zeros_like(self.M)
        bodies = [Body("stance_leg", -1, 2, zero, 0.0, (0.0, 0.0)),
                  Body("hip", 0, -1, self.M, 0.0, (0.0, 0.0), (self.l, 0.0)),
                  Body("swing_leg", 0, 3, zero, 0.0, (self.l, 0.0), (self.l, 0.0), sign=-1.0, offset=jnp.pi)]
        points = [Point("stance_foot", 0), Point("H", 0, (self.l, 0.0)), Point("swing_foot", 2, (self.l, 0.0))]
        return PlanarTree._assemble(4, bodies, points, self.g, self.slope, checked=False)

    def stance_accelerations(self, theta: Float[Array, " 2"], theta_dot: Float[Array, " 2"]) -> Float[Array, " 2"]:
        q3, q4 = theta
        u3 = theta_dot[0]
        w2 = self.g / self.l
        a3 = w2 * jnp.sin(q3 + self.slope)
        return jnp.stack([a3, a3 + jnp.sin(q4) * (u3**2 - w2 * jnp.cos(q3 + self.slope))])
