import jax.numpy as jnp

from .._custom_types import Scalar, ScalarLike
from .._validation import positive
from .base import AbstractFrictionLaw, safe_power
from .hertz import mindlin_stiffness


class TangentialSpring(AbstractFrictionLaw):
    r"""Mindlin tangential spring capped by Coulomb friction (seed 001, eqs. 17–19):

    .. math:: F_t = \operatorname{clip}\left(-k_t \delta^{1/2} z,\ -\mu F_n,\ \mu F_n\right),\qquad
              \dot z = \begin{cases} 0 & \text{saturated and loading} \\ v_t & \text{otherwise,}\end{cases}

    ``z`` the elastic tangential displacement of the contact point, ``k_t = 8 G^* √R``
    (:func:`mindlin_stiffness`). Bias against exact :class:`Coulomb`: "stick" is elastic (the point
    oscillates about its anchor at the tangential contact frequency instead of holding still), and while
    saturated the stored ``z`` is not returned to the cone when ``F_n`` falls, so unloading starts from
    the stored value; both effects vanish as ``k_t`` grows.

    Known limitation: ``ż`` switches discontinuously at saturation and the adaptive step chatters there.
    On the seed 000 nominal crutch case :func:`~difimpact.compliant_impact` (Kvaerno5, rtol 1e-8) did not
    finish within 32 768 steps (it reached 2 of the 4 ms). A smoothed saturation (or a saturation event)
    is needed before this law is usable in the solver; the force law itself is tested.

    **Arguments:** `stiffness` ``k_t > 0`` [N/m^1.5], `mu` ``≥ 0``.
    """

    stiffness: Scalar
    mu: Scalar

    def __init__(self, stiffness: ScalarLike, mu: ScalarLike):
        self.stiffness = positive("stiffness", stiffness)
        self.mu = positive("mu", mu, allow_zero=True)

    @classmethod
    def from_materials(cls, radius: ScalarLike, E1: ScalarLike, nu1: ScalarLike, E2: ScalarLike,
                       nu2: ScalarLike, mu: ScalarLike) -> "TangentialSpring":
        return cls(mindlin_stiffness(radius, E1, nu1, E2, nu2), mu)

    def _trial(self, displacement, delta):
        return -self.stiffness * safe_power(delta, 0.5) * displacement

    def force(self, normal_force, slip_velocity, displacement, delta):
        cap = self.mu * normal_force
        return jnp.clip(self._trial(displacement, delta), -cap, cap)

    def displacement_rate(self, normal_force, slip_velocity, displacement, delta):
        trial = self._trial(displacement, delta)
        loading = trial * slip_velocity < 0  # the spring force grows in magnitude
        saturated = jnp.abs(trial) >= self.mu * normal_force
        return jnp.where(saturated & loading, 0.0, slip_velocity)
