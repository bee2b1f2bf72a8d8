"""Font-Llagunes, Kövecses, Pàmies-Vilà & Barjau (2010) on the crutch walker (§5.2): the sweeps and notes of
Figs. 4–5 (feet separation velocity, shoulder speed and energy loss of the crutch-tip impact), impulsive beside
compliant. Models, solves and the comparison helpers are those of :mod:`.impacts`.
"""

import numpy as np

from ..experiment import check_that
from .impacts import (
    _RESTITUTION,
    _compliant_notes,
    _compliant_sweep,
    _corr,
    _crutch_compliant,
    _crutch_impulsive,
    _gravity_note,
    _impulsive_sweep,
    _rows,
    _skipped_note,
)

_CRUTCH_UNITS = "q3_deg, q4_deg [deg], energy_loss [J], vy_feet (post-impact vertical velocity of the feet P), " \
                "v_shoulder (post-impact speed of the shoulder S) [m/s]"
_CRUTCH_KEYS = ("method", "q3_deg", "q4_deg", "energy_loss", "vy_feet", "v_shoulder")
_CRUTCH_VELOCITIES = (("v_shoulder", "shoulder speed v_S⁺"), ("vy_feet", "feet separation velocity v_Py⁺"))
_CRUTCH_QUANTITIES = (("v_shoulder", "v_S⁺"), ("vy_feet", "v_Py⁺"), ("energy_loss", "energy loss"))
_CRUTCH_SYMBOLS = "v_S⁺: shoulder speed after the impact; v_Py⁺: vertical velocity of the feet P (> 0: they lift)"


def _crutch(q3, q4, quick, progress, desc):
    imp = _impulsive_sweep(_crutch_impulsive, np.radians(q3), np.radians(q4))
    comp, free = (None, None) if quick else (
        _compliant_sweep(_crutch_compliant, np.radians(q3), np.radians(q4), progress, d, g=g)
        for d, g in ((desc, 9.81), (f"{desc}, g = 0", 0.0)))
    cols = {"q3_deg": q3, "q4_deg": q4}
    rows = _rows(_CRUTCH_KEYS, {"impulsive": cols, "compliant": cols}, {"impulsive": imp, "compliant": comp},
                 ("energy_loss", "vy_feet", "v_shoulder"))
    return imp, comp, free, rows


def _crutch_notes(quick, imp, comp, free):
    notes = [_skipped_note(quick)] + _compliant_notes(comp, "one per angle")
    if comp is not None:
        notes.append(f"Hunt–Crossley damping from eq. 16 with e = {_RESTITUTION}: χ = "
                     f"{np.min(comp['chi']):.3g}…{np.max(comp['chi']):.3g} N s/m^2.5 (Font-Llagunes et al. 2012 uses "
                     f"1e+07).")
    notes.append(_gravity_note(imp, free, _CRUTCH_QUANTITIES))
    return "\n\n".join(n for n in notes if n)


def _loss_speed_check(figure, imp, comp):
    rs = [_corr(r["energy_loss"], r["v_shoulder"]) for r in (imp, comp) if r is not None]
    return check_that("Higher energy loss goes with a lower shoulder speed after impact", figure,
                      "Pearson r(loss, v_S⁺) = " + ", ".join(f"{r:.4f}" for r in rs) + " (≤ −0.9 taken as clear)",
                      all(r <= -0.9 for r in rs))
