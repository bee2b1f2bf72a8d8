"""Font-Llagunes, Kövecses, Pàmies-Vilà & Barjau (2010) on the compass walker with circular feet
(§5.1, Figs. 2–3): trailing-foot separation velocity, hip speed and energy loss of heel strike over the step
length and the foot radius, impulsive beside compliant. Models, solves and the comparison helpers are those
of :mod:`.seed001`.
"""

import numpy as np

from .._impact.constrained import constrained_impact
from .base import Outcome, check_that, experiment
from .curves import monotone
from .plotting import model_figure
from .seed001 import (
    _CLOSE,
    _OVERLAP,
    _compass_compliant,
    _compass_impulsive,
    _compass_state,
    _compliant_notes,
    _compliant_sweep,
    _corr,
    _diff,
    _figure,
    _gravity_note,
    _majority_check,
    _impulsive_sweep,
    _overlap_check,
    _padded,
    _rows,
    _skipped_note,
    _split_check,
)

_COMPASS_UNITS = "q3_deg [deg], R [m], energy_loss [J], vy_trailing, v_hip [m/s]"
_COMPASS_KEYS = ("method", "q3_deg", "R", "energy_loss", "vy_trailing", "v_hip")
_COMPASS_VELOCITIES = (("v_hip", "hip speed v_H⁺"), ("vy_trailing", "trailing foot q̇2⁺"))
_COMPASS_QUANTITIES = (("v_hip", "v_H⁺"), ("vy_trailing", "q̇2⁺"), ("energy_loss", "energy loss"))
_COMPASS_SYMBOLS = "v_H⁺: hip speed after the impact; q̇2⁺: vertical velocity of the trailing (stance) foot's arc centre"


def _compass_rows(q3, R, imp, comp):
    cols = {"q3_deg": q3, "R": R}
    return _rows(_COMPASS_KEYS, {"impulsive": cols, "compliant": cols}, {"impulsive": imp, "compliant": comp},
                 ("energy_loss", "vy_trailing", "v_hip"))


@experiment("compass-step-length", "001", "Fig. 2",
            "Compass walker with circular feet (R = 0.25 m): trailing-foot separation velocity, hip speed and "
            "energy loss over the pre-impact stance angle q3 (q4 = 2 q3), impulsive vs compliant.",
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
                  "Font-Llagunes et al. 2010, Fig. 2 — compass walker over the step, R = 0.25 m (solid: impulsive, dashed: compliant)",
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
    return model_figure(model, q, "Compass walker with circular feet (Font-Llagunes et al. 2010) at heel strike, q3⁻ = 15°, R = 0.25 m",
                        contacts=("swing_foot", "stance_foot"),
                        arrows={"swing_foot": (float(sol.impulses[1]), float(sol.impulses[0]))},
                        note="arrow: impulse at the swing foot (it sticks; the stance foot is released); H: hip mass")


@experiment("compass-foot-radius", "001", "Fig. 3",
            "Compass walker at q3 = 20°, q4 = 40°: trailing-foot separation velocity, hip speed and energy "
            "loss over the foot radius R = 0.05…1 m, impulsive vs compliant.", units=_COMPASS_UNITS)
def compass_foot_radius(quick, progress):
    R = np.round(np.arange(0.1 if quick else 0.05, 1.0 + 1e-9, 0.1 if quick else 0.05), 10)
    q3 = np.full_like(R, 20.0)
    imp = _impulsive_sweep(_compass_impulsive, R, np.radians(q3))
    # At R = l the swing foot rolls onto the ground (v_n⁻ = 0): there is no collision to integrate.
    hit = R < 1.0
    comp, free = (None, None) if quick else (_padded(
        _compliant_sweep(_compass_compliant, R[hit], np.radians(q3[hit]), progress, desc, g=g), len(R))
        for desc, g in (("compass R", 9.81), ("compass R, g = 0", 0.0)))
    rows = _compass_rows(q3, R, imp, comp)
    at_l = R == 1.0
    solved = np.zeros_like(hit) if comp is None else np.isfinite(comp["energy_loss"])
    checks = [
        check_that("Energy loss vanishes at R = l = 1 m (no impact at all)", "§5.1, Fig. 3b",
                   f"impulsive loss at R = l: {imp['energy_loss'][at_l][0]:.2e} J of T⁻ = "
                   f"{imp['T_minus'][at_l][0]:.3f} J; swing-foot approach speed v_n⁻ = "
                   f"{imp['vn_minus'][at_l][0]:.1e} m/s (no collision, so no compliant solve)",
                   abs(imp["energy_loss"][at_l][0]) <= 1e-12 * imp["T_minus"][at_l][0]),
        check_that("Large radii lead to lower energy losses", "Fig. 3b",
                   f"impulsive {imp['energy_loss'][0]:.3f} J at R = {R[0]:g} m → "
                   f"{imp['energy_loss'][-1]:.2e} J at R = 1 m"
                   + ("" if comp is None else f"; compliant → {comp['energy_loss'][solved][-1]:.3f} J at "
                      f"R = {R[solved][-1]:g} m (largest solved R)"),
                   all(monotone(r["energy_loss"], False) for r in (imp, comp) if r is not None)),
    ]
    if comp is not None:
        big = R > 0.5
        d_small, d_big = (_diff(imp["vy_trailing"], comp["vy_trailing"], m) for m in (~big, big))
        more = comp["energy_loss"][solved] > imp["energy_loss"][solved]
        checks += [
            _overlap_check("Hip-speed curves of both methods almost overlap", "Fig. 3a", R, "v_H⁺", imp, comp,
                           "v_hip"),
            _split_check("Trailing-foot velocity curves overlap for R > 0.5 m, slight difference for lower radii",
                         "Fig. 3a", (d_big, d_small), ("R > 0.5 m", "R ≤ 0.5 m"), _OVERLAP, "overlap"),
            _overlap_check("Energy losses of both methods are very close", "Fig. 3b", R, "energy loss", imp,
                           comp, "energy_loss", _CLOSE),
            _majority_check("In general the compliant approach estimates more energy loss than the impulsive one",
                            "Fig. 3b", more, "compliant > impulsive", "solved radii"),
        ]
    fig = _figure(R, "foot radius R [m] (leg length l = 1 m)", imp, comp, _COMPASS_VELOCITIES,
                  "Font-Llagunes et al. 2010, Fig. 3 — compass walker over the foot radius, q3⁻ = 20°, q4⁻ = 40° (solid: impulsive, "
                  "dashed: compliant)", _COMPASS_SYMBOLS)
    notes = [_skipped_note(quick)] + _compliant_notes(None if comp is None else
                                                      {k: v[hit] for k, v in comp.items()}, "one per R < l") + [
        _gravity_note(imp, free, _COMPASS_QUANTITIES)]
    return Outcome(rows, {"fig3": fig}, checks, "\n\n".join(n for n in notes if n))
