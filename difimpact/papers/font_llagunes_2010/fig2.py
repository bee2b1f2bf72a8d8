"""Font-Llagunes et al. 2010, Fig. 2 (§5.1): the compass walker with circular feet over the pre-impact stance
angle, impulsive beside compliant, and the walker at heel strike in place of the paper's Fig. 1."""

import numpy as np

from difimpact import constrained_impact

from ..curves import monotone
from ..experiment import Outcome, check_that, experiment
from ..plotting import model_figure
from .compass import _COMPASS_QUANTITIES, _COMPASS_SYMBOLS, _COMPASS_UNITS, _COMPASS_VELOCITIES, _compass_rows
from .impacts import (
    _CLOSE,
    _compass_compliant,
    _compass_impulsive,
    _compass_state,
    _compliant_notes,
    _compliant_sweep,
    _corr,
    _diff,
    _figure,
    _gravity_note,
    _impulsive_sweep,
    _overlap_check,
    _skipped_note,
    _split_check,
)


@experiment("compass-step-length", "001", "Fig. 2",
            "Compass walker with circular feet (R = 0.25 m): trailing-foot separation velocity, hip speed and energy "
            "loss over the pre-impact stance angle q3 (q4 = 2 q3), impulsive vs compliant.",
            units=_COMPASS_UNITS)
def compass_step_length(quick, progress):
    # q3 = 0 is left out: both feet coincide and the swing foot does not approach the ground (no collision).
    q3 = np.arange(5.0 if quick else 1.0, 30.0 + 1e-9, 5.0 if quick else 1.0)
    R = np.full_like(q3, 0.25)
    imp = _impulsive_sweep(_compass_impulsive, R, np.radians(q3))
    comp, free = (None, None) if quick else (
        _compliant_sweep(_compass_compliant, R, np.radians(q3), progress, "compass q3"),
        _compliant_sweep(_compass_compliant, R, np.radians(q3), progress, "compass q3, g = 0", g=0.0))
    rows = _compass_rows(q3, R, imp, comp)
    vh = imp["v_hip_minus"]
    checks = [
        check_that("Hip speed before impact is 1 m/s for all cases (to 3 %: the paper's value is round)", "§5.1",
                   f"v_H⁻ from {vh.min():.4f} to {vh.max():.4f} m/s", np.all(np.abs(vh - 1.0) <= 0.03)),
        check_that("Energy loss increases with q3 (step length)", "Fig. 2b",
                   f"impulsive {imp['energy_loss'][0]:.3f} → {imp['energy_loss'][-1]:.3f} J"
                   + ("" if comp is None else f", compliant {comp['energy_loss'][0]:.3f} → "
                      f"{comp['energy_loss'][-1]:.3f} J"),
                   all(monotone(r["energy_loss"]) for r in (imp, comp) if r is not None)),
    ]
    for method, res in (("impulsive", imp), ("compliant", comp)):
        if res is None:
            continue
        peak = q3[np.nanargmax(res["vy_trailing"])]
        checks.append(check_that(f"Separation velocity q̇2⁺ is largest for q3 between 15° and 20° ({method})",
                                 "Fig. 2a", f"maximum {np.nanmax(res['vy_trailing']):.4f} m/s at q3 = {peak:g}°",
                                 15.0 <= peak <= 20.0))
        r = _corr(res["energy_loss"], vh - res["v_hip"])
        checks.append(check_that(f"Clear correlation between energy loss and hip-speed decrement ({method})",
                                 "§5.1", f"Pearson r = {r:.4f} (≥ 0.9 taken as clear)", r >= 0.9))
    if comp is not None:
        low = q3 <= 10.0
        d_low, d_high = (_diff(imp["vy_trailing"], comp["vy_trailing"], m) for m in (low, ~low))
        checks += [
            _overlap_check("Hip-speed curves of both methods almost overlap", "Fig. 2a", q3, "v_H⁺", imp, comp,
                           "v_hip"),
            _split_check("Trailing-foot velocities similar for q3 ≤ 10°, some discrepancy beyond", "Fig. 2a",
                         (d_low, d_high), ("q3 ≤ 10°", "q3 > 10°"), _CLOSE, "close"),
            _overlap_check("Both methods estimate a very similar energy loss", "Fig. 2b", q3, "energy loss",
                           imp, comp, "energy_loss", _CLOSE),
        ]
    fig = _figure(q3, "stance-leg angle q3⁻ [deg] (q4⁻ = 2 q3⁻)", imp, comp, _COMPASS_VELOCITIES,
                  "Font-Llagunes et al. 2010, Fig. 2 — compass walker over the step, R = 0.25 m (solid: impulsive, "
                  "dashed: compliant)",
                  _COMPASS_SYMBOLS)
    notes = [_skipped_note(quick)] + _compliant_notes(comp, "one per q3") + [
        _gravity_note(imp, free, _COMPASS_QUANTITIES)]
    return Outcome(rows, {"fig2": fig, "model_compass_gait": _model_figure()}, checks,
                   "\n\n".join(n for n in notes if n))


def _model_figure():
    """The compass walker with circular feet at the heel strike of §5.1 (q3 = 15°, R = 0.25 m) with the impulse
    at the swing foot, in place of the paper's Fig. 1."""
    model, q, qdot = _compass_state(0.25, np.radians(15.0))
    sol = constrained_impact(model.mass_matrix(q), model.contact_jacobian(q, "swing_foot"), qdot)
    return model_figure(model, q, "Compass walker with circular feet (Font-Llagunes et al. 2010) at heel strike, q3⁻ = "
                                  "15°, R = 0.25 m",
                        contacts=("swing_foot", "stance_foot"),
                        arrows={"swing_foot": (float(sol.impulses[1]), float(sol.impulses[0]))},
                        note="arrow: impulse at the swing foot (it sticks; the stance foot is released); H: hip mass")
