import jax.numpy as jnp

from .._custom_types import Scalar, ScalarLike
from .._validation import positive
from .base import AbstractNormalLaw, DELTA_REF


class KelvinVoigt(AbstractNormalLaw):
    r"""Linear spring–damper normal force, the baseline of Font-Llagunes et al. 2012, §4.1 (Kelvin–Voigt):

    $$
    F_n = \max(k\,\delta + c\,\dot\delta,\ 0)\quad (\delta > 0).
    $$

    Unlike :class:`HuntCrossley` the force jumps to ``c δ̇`` at first contact, and the damping term makes
    it reach zero before ``δ`` does at separation (clipped: it never pulls).

    **Arguments:** `stiffness` ``k > 0`` [N/m], `damping` ``c ≥ 0`` [N s/m].
    """

    stiffness: Scalar
    damping: Scalar

    def __init__(self, stiffness: ScalarLike, damping: ScalarLike = 0.0):
        self.stiffness = positive("stiffness", stiffness, shape=())
        self.damping = positive("damping", damping, allow_zero=True, shape=())

    def unclipped(self, delta, delta_dot):
        return jnp.where(delta > 0, self.stiffness * delta + self.damping * delta_dot, 0.0)

    def margin(self, delta, delta_dot):
        return (delta + self.damping / self.stiffness * delta_dot) / DELTA_REF

    def reference_force(self):
        return self.stiffness * DELTA_REF
