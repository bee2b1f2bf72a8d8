"""Font & Kövecses 2008, Figs. 2–4 (§4.1): stance-foot lift-off, energy decomposition and energy-loss indices over
the inter-leg angle for lower-body mass distributions, and the biped in place of the paper's Fig. 1."""

import numpy as np

from difimpact import BipedWithTorso, impact

from ..curves import monotone
from ..experiment import Outcome, check_that, experiment
from ..plotting import line_panels, model_figure
from .impacts import _TOL, M_B, _grid, _lower_body, _reversal, _rows, _visual


@experiment("biped-step-length", "003", "Figs. 2–4",
            "Biped with torso: v_Sn⁺, T_c⁻, T_a⁻, ξ_I, ξ_L over inter-leg angle q4 and μ = 2m/m_H (μ = 0 as the limit "
            "μ → 0⁺).",
            units="q4_deg [deg], vSn [m/s], Tc, Ta [J], xi_I [-], xi_L [J/m]")
def biped_step_length(quick, progress):
    mus = [0.0, 0.5, 1.0, 1.5, 2.0]
    q4 = np.arange(10.0, 50.0 + 1e-9, 10.0 if quick else 1.0)
    res = _grid(_lower_body, mus, q4)
    rows = _rows("mu", mus, "q4_deg", q4, res)
    lifts = res["vSn"] > 0
    fails = ~lifts
    # the failing set must be an "upper corner": long steps and heavy legs
    corner = all(fails[i:, j:].all() for i, j in zip(*np.nonzero(fails)))
    masked = {k: np.where(lifts, res[k], np.nan) for k in ("Tc", "Ta", "xi_I", "xi_L")}
    checks = [
        check_that("v_Sn⁺ ≤ 0 (no natural lift-off) occurs for high q4 and μ", "Fig. 2",
                   f"{fails.sum()} of {fails.size} grid points fail, smallest failing q4 = "
                   f"{q4[np.nonzero(fails)[1]].min() if fails.any() else 'none'}°", fails.any() and corner),
        check_that("For μ = 0 all inter-leg angles are valid (v_Sn⁺ > 0)", "§4.1",
                   f"min v_Sn⁺ at μ = 0: {res['vSn'][0].min():.4f} m/s", lifts[0].all()),
        check_that("Low μ gives a larger range of valid configurations", "§4.1",
                   f"valid q4 per μ: {lifts.sum(axis=1).tolist()}",
                   monotone(lifts.sum(axis=1), False, axis=0, tol=_TOL)),
        check_that("For a given q4, lower μ gives lower ξ_I (valid points, to 1 % of the plotted range)",
                   "Fig. 4", f"ξ_I at q4 = 30°: {np.round(res['xi_I'][:, np.argmin(abs(q4 - 30))], 4).tolist()}; "
                   f"largest reversal {_reversal(masked['xi_I'], 0, True):.1e}",
                   monotone(masked["xi_I"], True, axis=0, tol=_visual(masked["xi_I"]))),
        check_that("Short steps give lower ξ_I", "Fig. 4", "ξ_I increases with q4 for every μ",
                   monotone(masked["xi_I"], True, axis=1, tol=_TOL)),
        check_that("For a given μ, shorter steps give lower ξ_L (more short steps are better)", "Fig. 4",
                   f"ξ_L at μ = 1: {res['xi_L'][2, 0]:.3f} → {res['xi_L'][2, -1]:.3f} J/m",
                   monotone(masked["xi_L"], True, axis=1, tol=_TOL)),
        check_that("For a given q4, higher μ gives lower ξ_L", "Fig. 4",
                   f"ξ_L at q4 = 30°: {np.round(res['xi_L'][:, np.argmin(abs(q4 - 30))], 3).tolist()} J/m",
                   monotone(masked["xi_L"], False, axis=0, tol=_TOL)),
    ]
    labels = [f"μ = {m:g}" for m in mus]
    note = (f"μ = 2m/m_H: mass ratio of the legs to the hip (m_T = 10 kg, m_B = {M_B:g} kg; μ = 0 as the limit μ → "
            f"0⁺); upright torso (q5 = 0)")
    energies = ("; T_c⁻, T_a⁻: pre-impact kinetic energy in the spaces of constrained and admissible motion, T⁻ = T_c⁻ "
                "+ T_a⁻; L: step length")
    masked_note = note + energies + "; curves end where the stance foot would not lift off (v_Sn⁺ ≤ 0, Fig. 2)"
    figures = {
        "fig2_vSn": line_panels(q4, [res["vSn"]], labels, "inter-leg angle q4⁻ [deg]",
                                ["post-impact stance-foot velocity v_Sn⁺ [m/s]"],
                                "Font & Kövecses 2008, Fig. 2 — stance-foot lift-off over the step, impulsive map",
                                zero_line=True, note=note),
        "fig3_energies": line_panels(q4, [masked["Tc"], masked["Ta"]], labels, "inter-leg angle q4⁻ [deg]",
                                     ["T_c⁻, constrained space [J]", "T_a⁻, admissible space [J]"],
                                     "Font & Kövecses 2008, Fig. 3 — energy decomposition over the step",
                                     note=masked_note),
        "fig4_indexes": line_panels(q4, [masked["xi_I"], masked["xi_L"]], labels, "inter-leg angle q4⁻ [deg]",
                                    ["ξ_I = T_c⁻/T⁻ [-]", "ξ_L = T_c⁻/L [J/m]"],
                                    "Font & Kövecses 2008, Fig. 4 — energy-loss indices over the step",
                                    note=masked_note),
        "model_biped_with_torso": _model_figure(),
    }
    return Outcome(rows, figures, checks)


def _model_figure():
    """The biped with torso (Table 1) at the heel strike of §4 (q4 = 30°, upright torso) with the impulse at the
    leading foot, in place of the paper's Fig. 1."""
    model = BipedWithTorso()
    q, qdot = model.pre_impact_state(np.radians(30.0), None)
    sol = impact(model, q, qdot, stick=("P_L",))
    return model_figure(model, q, "Biped with torso (Font & Kövecses 2008, Table 1) at heel strike, q4⁻ = 30°, q5 = 0",
                        contacts=("P_L", "P_R"), arrows={"P_L": (float(sol.impulses[1]), float(sol.impulses[0]))},
                        note="arrow: impulse at the leading foot P_L (it sticks; P_R is released); H hip, T torso "
                             "mass; dots: masses")
