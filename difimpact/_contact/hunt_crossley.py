from .._custom_types import Scalar, ScalarLike
from .._validation import positive
from .base import AbstractNormalLaw, DELTA_REF, safe_power
from .hertz import damping_from_restitution, hertz_stiffness


class HuntCrossley(AbstractNormalLaw):
    r"""Hunt–Crossley normal force (Font-Llagunes et al. 2012, eq. 35; Hunt & Crossley 1975):

    $$
    F_n = \max\left(k_n \delta^{3/2} + \chi \delta^{3/2}\dot\delta,\ 0\right),
    $$

    ``δ ≥ 0`` the indentation. ``k_n`` [N/m$^{1.5}$] is the Hertz stiffness (:func:`hertz_stiffness`), ``χ``
    [N s/m$^{2.5}$] the hysteresis damping (``χ = 0``: elastic). The force is continuous at first contact and
    clipped at zero when ``δ̇ < −k_n/χ`` (it never pulls).

    **Arguments:** `stiffness` ``k_n > 0``, `damping` ``χ ≥ 0``.
    """

    stiffness: Scalar
    damping: Scalar

    def __init__(self, stiffness: ScalarLike, damping: ScalarLike = 0.0):
        self.stiffness = positive("stiffness", stiffness, shape=())
        self.damping = positive("damping", damping, allow_zero=True, shape=())

    @classmethod
    def from_materials(cls, radius: ScalarLike, E1: ScalarLike, nu1: ScalarLike, E2: ScalarLike,
                       nu2: ScalarLike, damping: ScalarLike = 0.0) -> "HuntCrossley":
        """Sphere of radius ``radius`` (material 1) on a plane (material 2), Font-Llagunes et al. 2012 eqs. 36–37."""
        return cls(hertz_stiffness(radius, E1, nu1, E2, nu2), damping)

    @classmethod
    def from_restitution(cls, stiffness: ScalarLike, restitution: ScalarLike, impact_velocity: ScalarLike,
                         rule: str = "lankarani_nikravesh") -> "HuntCrossley":
        """Damping from a restitution coefficient (:func:`damping_from_restitution`)."""
        return cls(stiffness, damping_from_restitution(stiffness, restitution, impact_velocity, rule))

    def unclipped(self, delta, delta_dot):
        return safe_power(delta, 1.5) * (self.stiffness + self.damping * delta_dot)

    def margin(self, delta, delta_dot):
        return 1.0 + self.damping * delta_dot / self.stiffness

    def reference_force(self):
        return self.stiffness * DELTA_REF**1.5
