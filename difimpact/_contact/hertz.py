"""Hertz and Mindlin contact stiffness of a sphere on a plane, and damping from restitution."""

import jax.numpy as jnp

from .._custom_types import Scalar, ScalarLike
from .._validation import check, positive


def _poisson(name: str, nu):
    nu = positive(name, nu, allow_zero=True)
    return check(nu, nu >= 1.0, f"`{name}` must be a Poisson ratio in [0, 1).")


def effective_modulus(E1: ScalarLike, nu1: ScalarLike, E2: ScalarLike, nu2: ScalarLike) -> Scalar:
    r"""Effective Young's modulus of two bodies in contact (Font-Llagunes et al. 2012, eq. 37):

    $$
    E^* = \left[\frac{1-\nu_1^2}{E_1} + \frac{1-\nu_2^2}{E_2}\right]^{-1}.
    $$
    """
    E1, E2 = positive("E1", E1), positive("E2", E2)
    nu1, nu2 = _poisson("nu1", nu1), _poisson("nu2", nu2)
    return 1.0 / ((1.0 - nu1**2) / E1 + (1.0 - nu2**2) / E2)


def hertz_stiffness(radius: ScalarLike, E1: ScalarLike, nu1: ScalarLike, E2: ScalarLike,
                    nu2: ScalarLike) -> Scalar:
    r"""Hertz sphere–plane stiffness ``k_n`` [N/m$^{1.5}$] (Font-Llagunes et al. 2012, eq. 36):
    $k_n = \tfrac43 E^*\sqrt{R}$."""
    return 4.0 / 3.0 * effective_modulus(E1, nu1, E2, nu2) * jnp.sqrt(positive("radius", radius))


def mindlin_stiffness(radius: ScalarLike, E1: ScalarLike, nu1: ScalarLike, E2: ScalarLike,
                      nu2: ScalarLike) -> Scalar:
    r"""Mindlin tangential stiffness ``k_t`` [N/m$^{1.5}$] (Font-Llagunes et al. 2010, eqs. 18–19), with
    ``G = E / (2 (1 + ν))``:

    $$
    k_t = 8 G^* \sqrt{R},\qquad G^* = \left[\frac{2-\nu_1}{G_1} + \frac{2-\nu_2}{G_2}\right]^{-1}.
    $$
    """
    E1, E2 = positive("E1", E1), positive("E2", E2)
    nu1, nu2 = _poisson("nu1", nu1), _poisson("nu2", nu2)
    G1, G2 = E1 / (2.0 * (1.0 + nu1)), E2 / (2.0 * (1.0 + nu2))
    G = 1.0 / ((2.0 - nu1) / G1 + (2.0 - nu2) / G2)
    return 8.0 * G * jnp.sqrt(positive("radius", radius))


def damping_from_restitution(stiffness: ScalarLike, restitution: ScalarLike, impact_velocity: ScalarLike,
                             rule: str = "lankarani_nikravesh") -> Scalar:
    r"""Hunt–Crossley damping ``χ`` [N s/m$^{2.5}$] that gives restitution ``e`` at normal impact speed ``v⁻``.

    - ``"lankarani_nikravesh"`` (Font-Llagunes et al. 2010, eq. 16; Lankarani & Nikravesh 1990), accurate for ``e`` near
      1: $\chi = \frac{3 k_n (1 - e^2)}{4 v^-}$.
    - ``"flores"`` (Flores, Machado, Silva & Martins, Multibody Syst. Dyn. 25 (2011) 357–375),
      valid over the whole range ``0 < e ≤ 1``: $\chi = \frac{8 k_n (1 - e)}{5 e\, v^-}$.
    """
    k = positive("stiffness", stiffness)
    e = positive("restitution", restitution)
    e = check(e, e > 1.0, "`restitution` must be in (0, 1].")
    v = positive("impact_velocity", impact_velocity)
    if rule == "lankarani_nikravesh":
        return 3.0 * k * (1.0 - e**2) / (4.0 * v)
    if rule == "flores":
        return 8.0 * k * (1.0 - e) / (5.0 * e * v)
    raise ValueError(f"`rule` must be 'lankarani_nikravesh' or 'flores', got {rule!r}.")
