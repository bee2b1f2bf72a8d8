import jax.numpy as jnp

from .._custom_types import Scalar, ScalarLike
from .._validation import positive
from .base import AbstractExactStickLaw


class Coulomb(AbstractExactStickLaw):
    r"""Coulomb friction with true stick (Font-Llagunes et al. 2012, §4.2 and eq. 38), ``μ_s = μ``.

    While sliding, $F_t = -\mu\,\sigma F_n$ with ``σ`` the sign of the slip velocity; while sticking,
    ``F_t`` is the Lagrange multiplier that keeps the tangential acceleration of the contact point at zero,
    valid while $|F_t| \le \mu F_n$. The compliant solver switches between the two at events
    (``v_t`` crosses zero; the stick force reaches the cone), so there is no regularisation bias: this is
    the exact law the other friction laws are compared with.

    :meth:`force` is the sliding force, used only where the regime is not tracked.
    """

    mu: Scalar

    def __init__(self, mu: ScalarLike):
        self.mu = positive("mu", mu, allow_zero=True, shape=())

    def force(self, normal_force, slip_velocity, displacement, delta):
        return -self.mu * jnp.sign(slip_velocity) * normal_force
