"""Font-Llagunes et al. 2010, Fig. 3 (§5.1): the compass walker over the foot radius, impulsive beside
compliant."""

import numpy as np

from ..curves import monotone
from ..experiment import Outcome, check_that, experiment
from .compass import _COMPASS_QUANTITIES, _COMPASS_SYMBOLS, _COMPASS_UNITS, _COMPASS_VELOCITIES, _compass_rows
from .impacts import (
    _CLOSE,
    _OVERLAP,
    _compass_compliant,
    _compass_impulsive,
    _compliant_notes,
    _compliant_sweep,
    _diff,
    _figure,
    _gravity_note,
    _impulsive_sweep,
    _majority_check,
    _overlap_check,
    _padded,
    _skipped_note,
    _split_check,
)


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
                  "Font-Llagunes et al. 2010, Fig. 3 — compass walker over the foot radius, q3⁻ = 20°, q4⁻ = 40° "
                  "(solid: impulsive, "
                  "dashed: compliant)", _COMPASS_SYMBOLS)
    notes = [_skipped_note(quick)] + _compliant_notes(None if comp is None else
                                                      {k: v[hit] for k, v in comp.items()}, "one per R < l") + [
        _gravity_note(imp, free, _COMPASS_QUANTITIES)]
    return Outcome(rows, {"fig3": fig}, checks, "\n\n".join(n for n in notes if n))
