"""The papers' contact fixtures: the crutch tip's materials and Font-Llagunes et al. 2012's tip contact."""

from difimpact import Contact, Coulomb, HuntCrossley, hertz_stiffness
from difimpact._validation import as_float

TIP_RADIUS = 0.05  # crutch tip sphere [m] (seed 000 §5, seed 001 §5.2)
ELASTOMER_ON_CONCRETE = (0.1e9, 0.5, 30e9, 0.2)  # E_s [Pa], ν_s of the tip; E_p [Pa], ν_p of the ground (seed 000 §5)
CHI = 1e7  # Hunt–Crossley damping of seed 000 §5 [N s/m^2.5]


def tip_contact(kn_factor: float = 1.0, chi_factor: float = 1.0, mu: float = 0.75) -> Contact:
    """The crutch tip ``Q`` of Font-Llagunes et al. 2012 (§5): Hunt–Crossley with Hertz stiffness of an elastomer sphere
    ``R_s = 0.05 m, E_s = 0.1 GPa, ν_s = 0.5`` on concrete ``E_p = 30 GPa, ν_p = 0.2`` (eqs. 36–37),
    ``χ = 10⁷ N s/m^2.5``, scaled by ``kn_factor`` and ``chi_factor`` (Table 3), and exact Coulomb
    friction ``mu``."""
    k_n = hertz_stiffness(TIP_RADIUS, *ELASTOMER_ON_CONCRETE) * as_float("kn_factor", kn_factor)
    return Contact("Q", HuntCrossley(k_n, CHI * as_float("chi_factor", chi_factor)), Coulomb(mu))
