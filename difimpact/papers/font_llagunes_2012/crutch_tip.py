"""The crutch tip of Font-Llagunes et al. 2012 (§5): its materials and its contact with the ground, shared by the
papers that strike it (Font-Llagunes et al. 2010 uses the same materials, §5.2) and by the tests."""

from difimpact import Contact, Coulomb, HuntCrossley, hertz_stiffness
from difimpact._validation import as_float

TIP_RADIUS = 0.05
"""Radius ``R_s`` [m] of the crutch tip's sphere (Font-Llagunes et al. 2012, §5; Font-Llagunes et al. 2010, §5.2)."""

ELASTOMER_ON_CONCRETE = (0.1e9, 0.5, 30e9, 0.2)
"""The tip's elastomer on concrete, as :func:`~difimpact.hertz_stiffness` takes them: ``(E_s [Pa], ν_s, E_p [Pa],
ν_p)``, the sphere's Young's modulus and Poisson's ratio, then the plane's (Font-Llagunes et al. 2012, §5)."""

CHI = 1e7
"""Hunt–Crossley damping ``χ`` [N s/m$^{2.5}$] of the tip (Font-Llagunes et al. 2012, §5)."""


def tip_contact(kn_factor: float = 1.0, chi_factor: float = 1.0, mu: float = 0.75) -> Contact:
    r"""The crutch tip ``Q`` of Font-Llagunes et al. 2012 (§5): Hunt–Crossley normal force
    $F_n = k_n \delta^{3/2} + \chi \delta^{3/2} \dot\delta$ with the Hertz stiffness of a sphere on a plane,
    $k_n = \tfrac{4}{3} E^* \sqrt{R_s}$ (eqs. 36–37), for :data:`TIP_RADIUS` and :data:`ELASTOMER_ON_CONCRETE`,
    damping :data:`CHI`, and exact Coulomb friction.

    **Arguments:**

    - `kn_factor`, `chi_factor`: factors on ``k_n`` and ``χ`` (Table 3 varies them).
    - `mu`: the friction coefficient ``μ`` (0.5, 0.75 or 1 in the paper).

    **Returns:** the :class:`~difimpact.Contact` of the point ``"Q"`` of :class:`~difimpact.CrutchWalker`.
    """
    k_n = hertz_stiffness(TIP_RADIUS, *ELASTOMER_ON_CONCRETE) * as_float("kn_factor", kn_factor)
    return Contact("Q", HuntCrossley(k_n, CHI * as_float("chi_factor", chi_factor)), Coulomb(mu))
