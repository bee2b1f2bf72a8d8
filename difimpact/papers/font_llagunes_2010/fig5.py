"""Font-Llagunes et al. 2010, Fig. 5 (§5.2): the crutch walker over the hip angle, impulsive beside
compliant."""

import numpy as np

from ..curves import monotone
from ..experiment import Outcome, check_that, experiment
from .crutch import _CRUTCH_SYMBOLS, _CRUTCH_UNITS, _CRUTCH_VELOCITIES, _crutch, _crutch_notes, _loss_speed_check
from .impacts import _CLOSE, _OVERLAP, _diff, _figure, _fmt, _majority_check, _overlap_check, _split_check


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
                  "Font-Llagunes et al. 2010, Fig. 5 — crutch walker over the hip angle, q3 = 10°, q5 = 150°, q̇3⁻ = 1 "
                  "rad/s (solid: "
                  "impulsive, dashed: compliant)", _CRUTCH_SYMBOLS)
    return Outcome(rows, {"fig5": fig}, checks, _crutch_notes(quick, imp, comp, free))
