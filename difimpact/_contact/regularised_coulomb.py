import jax.numpy as jnp

from .._custom_types import Scalar, ScalarLike
from .._validation import positive
from .base import AbstractSmoothFrictionLaw


class RegularisedCoulomb(AbstractSmoothFrictionLaw):
    r"""Smooth Coulomb friction $F_t = -\mu F_n \tanh(v_t / v_\varepsilon)$.

    Smooth in the state, so no stick/slip events, at two prices. Bias against exact :class:`Coulomb`:
    there is no true stick (the contact creeps at ``|v_t| ≈ v_ε |F_t| / (μ F_n)``), which changes impulses
    and post-impact velocities by an amount about linear in ``v_ε`` (about 0.1 % at ``v_ε = 10⁻³`` m/s on
    Font-Llagunes et al. 2012's crutch impact). Stiffness: ``∂F_t/∂v_t = μF_n/v_ε`` makes the ODE stiff for small
    ``v_ε``: use an implicit solver (the compliant solver's default for smooth laws).

    **Arguments:** `mu` ``≥ 0``, `velocity_scale` ``v_ε > 0`` [m/s].
    """

    mu: Scalar
    velocity_scale: Scalar

    def __init__(self, mu: ScalarLike, velocity_scale: ScalarLike = 1e-3):
        self.mu = positive("mu", mu, allow_zero=True, shape=())
        self.velocity_scale = positive("velocity_scale", velocity_scale, shape=())

    def force(self, normal_force, slip_velocity, displacement, delta):
        return -self.mu * normal_force * jnp.tanh(slip_velocity / self.velocity_scale)
