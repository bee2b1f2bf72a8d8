"""Font-Llagunes, Kövecses, Pàmies-Vilà & Barjau (2010) on the crutch walker (§5.2, Figs. 4–5):
feet separation velocity, shoulder speed and energy loss of the crutch-tip impact over the leg angle and the
hip angle, impulsive beside compliant. Models, solves and the comparison helpers are those of :mod:`.seed001`.
"""

import numpy as np

from .base import Outcome, check_that, experiment
from .curves import monotone
from .seed001 import (
    _CLOSE,
    _OVERLAP,
    _RESTITUTION,
    _compliant_notes,
    _compliant_sweep,
    _corr,
    _crutch_compliant,
    _crutch_impulsive,
    _diff,
    _figure,
    _fmt,
    _gravity_note,
    _majority_check,
    _impulsive_sweep,
    _overlap_check,
    _rows,
    _skipped_note,
    _split_check,
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
                     f"{np.min(comp['chi']):.3g}…{np.max(comp['chi']):.3g} N s/m^2.5 (Font-Llagunes et al. 2012 uses 1e+07).")
    notes.append(_gravity_note(imp, free, _CRUTCH_QUANTITIES))
    return "\n\n".join(n for n in notes if n)


def _loss_speed_check(figure, imp, comp):
    rs = [_corr(r["energy_loss"], r["v_shoulder"]) for r in (imp, comp) if r is not None]
    return check_that("Higher energy loss goes with a lower shoulder speed after impact", figure,
                      "Pearson r(loss, v_S⁺) = " + ", ".join(f"{r:.4f}" for r in rs) + " (≤ −0.9 taken as clear)",
                      all(r <= -0.9 for r in rs))


@experiment("crutch-leg-angle", "001", "Fig. 4",
            "Crutch walker (q4 = 10°, q5 = 150°, q̇3⁻ = 1 rad/s): feet separation velocity, shoulder speed and "
            "energy loss over the leg angle q3 = 5…30°, impulsive vs compliant.", units=_CRUTCH_UNITS)
def crutch_leg_angle(quick, progress):
    q3 = np.arange(5.0, 30.0 + 1e-9, 5.0 if quick else 1.0)
    imp, comp, free, rows = _crutch(q3, np.full_like(q3, 10.0), quick, progress, "crutch q3")
    checks = [
        check_that("Separation velocity of the feet decreases when q3 increases", "Fig. 4a",
                   f"impulsive {imp['vy_feet'][0]:.4f} → {imp['vy_feet'][-1]:.4f} m/s"
                   + ("" if comp is None else f", compliant {comp['vy_feet'][0]:.4f} → {comp['vy_feet'][-1]:.4f}"),
                   all(monotone(r["vy_feet"], False) for r in (imp, comp) if r is not None)),
        check_that("For low q3 the shoulder speed after impact is lower (it grows with q3)", "Fig. 4a",
                   f"impulsive {imp['v_shoulder'][0]:.4f} → {imp['v_shoulder'][-1]:.4f} m/s",
                   all(monotone(r["v_shoulder"]) for r in (imp, comp) if r is not None)),
        check_that("A higher q3 leads to less energy loss", "Fig. 4b",
                   f"impulsive {imp['energy_loss'][0]:.3f} → {imp['energy_loss'][-1]:.3f} J",
                   all(monotone(r["energy_loss"], False) for r in (imp, comp) if r is not None)),
        _loss_speed_check("Fig. 4", imp, comp),
    ]
    if comp is not None:
        low = q3 <= 15.0
        d_low, d_high = (_diff(imp["energy_loss"], comp["energy_loss"], m) for m in (low, ~low))
        more = imp["energy_loss"] > comp["energy_loss"]
        checks += [
            _overlap_check("Shoulder-speed curves of both methods almost overlap", "Fig. 4a", q3, "v_S⁺", imp,
                           comp, "v_shoulder"),
            _overlap_check("Feet separation-velocity curves of both methods almost overlap", "Fig. 4a", q3,
                           "v_Py⁺", imp, comp, "vy_feet"),
            _split_check("Energy losses very close for q3 in [5°, 15°], differing a little at higher angles",
                         "Fig. 4b", (d_low, d_high), ("q3 ≤ 15°", "q3 > 15°"), _CLOSE, "close"),
            _majority_check("Energy losses are higher with the impulsive approach", "§5.2 (Fig. 4b vs 5b)", more,
                            "impulsive > compliant", "angles"),
        ]
    fig = _figure(q3, "leg angle q3⁻ [deg]", imp, comp, _CRUTCH_VELOCITIES,
                  "Font-Llagunes et al. 2010, Fig. 4 — crutch walker over the leg angle, q4 = 10°, q5 = 150°, q̇3⁻ = 1 rad/s (solid: "
                  "impulsive, dashed: compliant)", _CRUTCH_SYMBOLS)
    return Outcome(rows, {"fig4": fig}, checks, _crutch_notes(quick, imp, comp, free))


@experiment("crutch-hip-angle", "001", "Fig. 5",
            "Crutch walker (q3 = 10°, q5 = 150°, q̇3⁻ = 1 rad/s): feet separation velocity, shoulder speed and "
            "energy loss over the hip angle q4 = −10…20°, impulsive vs compliant.", units=_CRUTCH_UNITS)
def crutch_hip_angle(quick, progress):
    q4 = np.arange(-10.0, 20.0 + 1e-9, 5.0 if quick else 1.0)
    imp, comp, free, rows = _crutch(np.full_like(q4, 10.0), q4, quick, progress, "crutch q4")
    checks = [
        check_that("Shoulder speed after impact increases when the torso leans forward (q4 grows)", "Fig. 5a",
                   f"impulsive v_S⁺ = {_fmt(imp['v_shoulder'][::5], 4)} m/s at q4 = {_fmt(q4[::5], 0)}°",
                   all(monotone(r["v_shoulder"]) for r in (imp, comp) if r is not None)),
        _loss_speed_check("Fig. 5", imp, comp),
    ]
    for method, res in (("impulsive", imp), ("compliant", comp)):
        if res is None:
            continue
        peak = q4[np.nanargmax(res["vy_feet"])]
        checks.append(check_that(f"Feet separation velocity is largest for q4 ≈ −5° ({method}; ±2.5°, half the "
                                 "paper's tick spacing)", "Fig. 5a",
                                 f"maximum {np.nanmax(res['vy_feet']):.4f} m/s at q4 = {peak:g}°",
                                 abs(peak + 5.0) <= 2.5))
    if comp is not None:
        neg = q4 < 0.0
        d_neg, d_pos = (_diff(imp["energy_loss"], comp["energy_loss"], m) for m in (neg, ~neg))
        more = comp["energy_loss"] > imp["energy_loss"]
        checks += [
            _overlap_check("Post-impact shoulder speeds of both methods are similar", "Fig. 5a", q4, "v_S⁺", imp,
                           comp, "v_shoulder", _CLOSE),
            _overlap_check("Post-impact feet velocities of both methods are similar", "Fig. 5a", q4, "v_Py⁺", imp,
                           comp, "vy_feet", _CLOSE),
            _split_check("Energy-loss curves overlap for q4 ≥ 0, slightly different for negative q4", "Fig. 5b",
                         (d_pos, d_neg), ("q4 ≥ 0", "q4 < 0"), _OVERLAP, "overlap"),
            _majority_check("Energy losses are higher with the compliant approach (contrary to Fig. 4b)", "§5.2",
                            more, "compliant > impulsive", "angles"),
        ]
    fig = _figure(q4, "hip angle q4⁻ [deg]", imp, comp, _CRUTCH_VELOCITIES,
                  "Font-Llagunes et al. 2010, Fig. 5 — crutch walker over the hip angle, q3 = 10°, q5 = 150°, q̇3⁻ = 1 rad/s (solid: "
                  "impulsive, dashed: compliant)", _CRUTCH_SYMBOLS)
    return Outcome(rows, {"fig5": fig}, checks, _crutch_notes(quick, imp, comp, free))
