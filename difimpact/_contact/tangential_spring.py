import jax.numpy as jnp

from .._custom_types import Scalar, ScalarLike
from .._validation import positive
from .base import AbstractElasticStickLaw, safe_power
from .hertz import mindlin_stiffness


class TangentialSpring(AbstractElasticStickLaw):
    r"""Mindlin tangential spring capped by Coulomb friction (Font-Llagunes et al. 2010, eqs. 17–19), a hybrid law:

    $$
    \text{stick:}\ F_t = -k_t \delta^{1/2} z,\ \dot z = v_t; \qquad
    \text{sliding:}\ F_t = -\mu\,\sigma F_n,\ \dot z = 0,
    $$

    ``z`` the elastic tangential displacement of the contact point, $k_t = 8 G^* \sqrt R$
    (:func:`mindlin_stiffness`, eqs. 18–19). Eq. 17 (the paper writes 16) holds while ``|F_t| ≤ μ F_n``;
    beyond it, or when a relative tangential velocity appears, ``F_t`` is Coulomb's (Font-Llagunes et al. 2010, after
    eq. 19). The compliant solver switches regimes at events: stick → sliding when ``|F_t|`` reaches
    ``μ F_n`` (``σ = −sign F_t``), sliding → stick when ``σ v_t`` reaches 0 with ``z = μ σ F_n / (k_t √δ)``
    (:meth:`stick_displacement`: ``F_t`` continuous); a contact starts in stick with ``z = 0``. Both regimes
    are smooth, so an explicit solver does.

    Bias against exact :class:`Coulomb`: "stick" is elastic, the contact point moves by ``z`` instead of
    holding still. Entering stick, ``F_t`` starts on the cone while the rigid stick force is inside it, so
    ``F_t`` oscillates undamped about the rigid one at ``√(k_t √δ / m)`` with an amplitude independent of
    ``k_t``; the impulse error is bounded by about amplitude / frequency $\propto  k_t^{-1/2}$ but its sign follows
    the phase at the end (on Font-Llagunes et al. 2012's crutch impact, about 10 % at the materials' ``k_t`` and below
    0.3 % at ten times it: docs/design.md).

    :meth:`force` is the stick-regime (elastic) force; the cap is the solver's regime switch.

    **Arguments:** `stiffness` ``k_t > 0`` [N/m$^{1.5}$], `mu` ``≥ 0``.
    """

    stiffness: Scalar
    mu: Scalar

    def __init__(self, stiffness: ScalarLike, mu: ScalarLike):
        self.stiffness = positive("stiffness", stiffness, shape=())
        self.mu = positive("mu", mu, allow_zero=True, shape=())

    @classmethod
    def from_materials(cls, radius: ScalarLike, E1: ScalarLike, nu1: ScalarLike, E2: ScalarLike,
                       nu2: ScalarLike, mu: ScalarLike) -> "TangentialSpring":
        return cls(mindlin_stiffness(radius, E1, nu1, E2, nu2), mu)

    def force(self, normal_force, slip_velocity, displacement, delta):
        return -self.stiffness * safe_power(delta, 0.5) * displacement

    def displacement_rate(self, normal_force, slip_velocity, displacement, delta):
        return slip_velocity

    def stick_displacement(self, friction_force, delta):
        # Double `where`: out of contact (δ ≤ 0, never entered) the division is not evaluated.
        root = safe_power(delta, 0.5)
        inside = root > 0
        return jnp.where(inside, -friction_force / (self.stiffness * jnp.where(inside, root, 1.0)), 0.0)
