"""Font-Llagunes et al. 2010, Fig. 4 (§5.2): the crutch walker over the leg angle, impulsive beside
compliant."""

import numpy as np

from ..curves import monotone
from ..experiment import Outcome, check_that, experiment
from .crutch import _CRUTCH_SYMBOLS, _CRUTCH_UNITS, _CRUTCH_VELOCITIES, _crutch, _crutch_notes, _loss_speed_check
from .impacts import _CLOSE, _diff, _figure, _majority_check, _overlap_check, _split_check


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
                  "Font-Llagunes et al. 2010, Fig. 4 — crutch walker over the leg angle, q4 = 10°, q5 = 150°, q̇3⁻ = 1 "
                  "rad/s (solid: "
                  "impulsive, dashed: compliant)", _CRUTCH_SYMBOLS)
    return Outcome(rows, {"fig4": fig}, checks, _crutch_notes(quick, imp, comp, free))
