"""Font-Llagunes, Kövecses, Pàmies-Vilà & Barjau (2010) on the compass walker with circular feet (§5.1): the rows
and quantities of Figs. 2–3 (trailing-foot separation velocity, hip speed and energy loss of heel strike),
impulsive beside compliant. Models, solves and the comparison helpers are those of :mod:`.impacts`.
"""

from .impacts import _rows

_COMPASS_UNITS = "q3_deg [deg], R [m], energy_loss [J], vy_trailing, v_hip [m/s]"
_COMPASS_KEYS = ("method", "q3_deg", "R", "energy_loss", "vy_trailing", "v_hip")
_COMPASS_VELOCITIES = (("v_hip", "hip speed v_H⁺"), ("vy_trailing", "trailing foot q̇2⁺"))
_COMPASS_QUANTITIES = (("v_hip", "v_H⁺"), ("vy_trailing", "q̇2⁺"), ("energy_loss", "energy loss"))
_COMPASS_SYMBOLS = ("v_H⁺: hip speed after the impact; q̇2⁺: vertical velocity of the trailing (stance) foot's arc "
                    "centre")


def _compass_rows(q3, R, imp, comp):
    cols = {"q3_deg": q3, "R": R}
    return _rows(_COMPASS_KEYS, {"impulsive": cols, "compliant": cols}, {"impulsive": imp, "compliant": comp},
                 ("energy_loss", "vy_trailing", "v_hip"))
