import math

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import Array, Config, Float, Scalar, Velocity
from .._tree import Body, PlanarTree, Point
from .._validation import positive
from .compass_gait import _slope
from .walker import AbstractWalker, rolling_stance_accelerations


class RimlessWheel(AbstractWalker):
    """Rimless wheel (McGeer 1990): `n_spokes` massless spokes of length `l` and a point mass `m` at the hub.

    Coordinates ``q = [q1, q2, q3]``: ``(q1, q2)`` the tip of the stance spoke, ``q3`` its absolute angle (the
    hub at ``(q1, q2) + l (sin q3, cos q3)``). The next spoke ahead, ``2α = 2π/N`` behind the stance spoke in
    angle, strikes the ground at ``q3 = α`` (:meth:`strike_gap` ``α − q3``); it becomes the stance spoke,
    ``q3 ↦ q3 − 2α``. Named points: ``stance_foot``, ``swing_foot`` (the next spoke's tip), ``H`` (the hub).
    The section state is the hub's angular rate just after impact, ``x = (q̇3,)`` at ``q3 = −α``.

    **Arguments:** `n_spokes` ``N ≥ 3`` (static), `l` = 1 m, `m` = 1 kg, `g` = 9.81 m/s², `slope` ``γ`` = 0 rad.
    """

    n_spokes: int = eqx.field(static=True)
    l: Scalar
    m: Scalar
    g: Scalar
    slope: Scalar
    coordinate_names = ("q1", "q2", "q3")
    section_names = ("q3dot",)

    def __init__(self, n_spokes: int = 8, l=1.0, m=1.0, g=9.81, slope=0.0):
        if isinstance(n_spokes, bool) or not isinstance(n_spokes, int) or n_spokes < 3:
            raise ValueError(f"`n_spokes` must be an integer ≥ 3, got {n_spokes!r}.")
        self.n_spokes = n_spokes
        self.l = positive("l", l, shape=())
        self.m = positive("m", m, shape=())
        self.g = positive("g", g, allow_zero=True, shape=())
        self.slope = _slope(slope)

    @property
    def alpha(self) -> float:
        """Half the angle between spokes, ``α = π / N``."""
        return math.pi / self.n_spokes

    def tree(self) -> PlanarTree:
        a2 = 2 * self.alpha
        bodies = [Body("wheel", -1, 2, self.m, 0.0, (self.l, 0.0))]
        points = [
            Point("stance_foot", 0, (0.0, 0.0)),
            Point("H", 0, (self.l, 0.0)),
            Point("swing_foot", 0, (self.l * (1 - math.cos(a2)), self.l * math.sin(a2))),
        ]
        return PlanarTree._assemble(3, bodies, points, self.g, self.slope, checked=False)

    @property
    def foot_radius(self) -> Scalar:
        return jnp.zeros_like(self.l)

    def from_section(self, x: Float[Array, " 1"]) -> tuple[Float[Array, " 1"], Float[Array, " 1"]]:
        return jnp.full((1,), -self.alpha, x.dtype), x

    def to_section(self, theta: Float[Array, " 1"], theta_dot: Float[Array, " 1"]) -> Float[Array, " 1"]:
        return theta_dot

    def strike_gap(self, theta: Float[Array, " 1"]) -> Scalar:
        return self.alpha - theta[0]

    def swap(self, theta: Float[Array, " 1"]) -> Float[Array, " 1"]:
        return theta - 2 * self.alpha

    def stance_accelerations(self, theta: Float[Array, " 1"], theta_dot: Float[Array, " 1"]) -> Float[Array, " 1"]:
        """The hub on the stance spoke, an inverted pendulum (:func:`rolling_stance_accelerations`)."""
        return rolling_stance_accelerations(self, theta, theta_dot)

    def strike_posture(self) -> tuple[Config, Velocity]:
        zero = jnp.zeros_like(self.l)
        return jnp.stack([zero, zero, zero + self.alpha]), jnp.stack([zero, zero, zero + 1.0])
