"""Font & Kövecses 2008, Figs. 5–7 (§4.2): stance-foot lift-off, energy decomposition and energy-loss indices over
the torso angle for upper-body mass distributions."""

import numpy as np

from ..curves import monotone
from ..experiment import Outcome, check_that, experiment
from ..plotting import line_panels
from .impacts import _TOL, M_B, _grid, _reversal, _rows, _upper_body, _visual


@experiment("biped-torso", "003", "Figs. 5–7",
            "Biped with torso: v_Sn⁺, T_c⁻, T_a⁻, ξ_I, ξ_L over torso angle q5 and μ_T = m_T/m_H at q4 = 30° (μ_T = 0 "
            "as the limit μ_T → 0⁺).",
            units="q5_deg [deg], vSn [m/s], Tc, Ta [J], xi_I [-], xi_L [J/m]")
def biped_torso(quick, progress):
    mus = [0.0, 0.5, 1.0, 1.5, 2.0]
    q5 = np.arange(0.0, 30.0 + 1e-9, 5.0 if quick else 1.0)
    res = _grid(_upper_body, mus, q5)
    rows = _rows("mu_T", mus, "q5_deg", q5, res)
    tc, ta = res["Tc"], res["Ta"]
    spread = lambda a: float(np.ptp(a) / np.mean(a))  # noqa: E731
    checks = [
        check_that("v_Sn⁺ > 0 regardless of q5 and μ_T", "Fig. 5", f"min v_Sn⁺ = {res['vSn'].min():.4f} m/s",
                   (res["vSn"] > 0).all()),
        check_that("Higher v_Sn⁺ for low μ_T and high q5 (to 1 % of the plotted range)", "Fig. 5",
                   f"v_Sn⁺ at q5 = 0°: {np.round(res['vSn'][:, 0], 3).tolist()}, at 30°: "
                   f"{np.round(res['vSn'][:, -1], 3).tolist()} m/s (μ_T = 0: torso massless, no q5 effect); "
                   f"largest reversal along q5 {_reversal(res['vSn'], 1, True):.1e} m/s",
                   monotone(res["vSn"], False, axis=0, tol=_TOL)
                   and monotone(res["vSn"], True, axis=1, tol=_visual(res["vSn"]))),
        check_that("T_c⁻ is smallest at q5 = 0° and grows with q5 (μ_T > 0)", "Fig. 6",
                   "T_c⁻ increasing in q5 for μ_T > 0", monotone(tc[1:], True, axis=1, tol=_TOL)),
        check_that("T_a⁻ is largest at q5 = 0° and decreases (μ_T > 0)", "Fig. 6",
                   "T_a⁻ decreasing in q5 for μ_T > 0", monotone(ta[1:], False, axis=1, tol=_TOL)),
        check_that("Higher μ_T gives lower T_c⁻ for a given configuration", "Fig. 6",
                   f"T_c⁻ at q5 = 0°: {np.round(tc[:, 0], 3).tolist()} J", monotone(tc, False, axis=0, tol=_TOL)),
        check_that("The influence of μ_T shrinks as q5 grows; at q5 = 30° T_c⁻ is almost the same for all μ_T",
                   "Fig. 6", f"relative spread of T_c⁻ over μ_T: {spread(tc[:, 0]):.1%} at 0°, "
                   f"{spread(tc[:, -1]):.1%} at 30°", spread(tc[:, -1]) < 0.5 * spread(tc[:, 0])),
        check_that("ξ_I and ξ_L are proportional to T_c⁻ (T⁻ and L constant)", "Fig. 7",
                   f"T⁻ varies by {spread(res['T']):.1e} relative",
                   spread(res["T"]) < 1e-12 and np.allclose(res["xi_L"] / tc, res["xi_L"][0, 0] / tc[0, 0])),
    ]
    labels = [f"μ_T = {m:g}" for m in mus]
    note = (f"μ_T = m_T/m_H: mass ratio of the torso to the hip (m = 5 kg, m_B = {M_B:g} kg; μ_T = 0 as the limit "
            "μ_T → 0⁺); q5: torso angle from the stance leg, > 0 leaning forward")
    case = "at q4 = 30°"
    note_energies = note + ("; T_c⁻, T_a⁻: pre-impact kinetic energy in the spaces of constrained and admissible "
                            "motion, T⁻ = T_c⁻ + T_a⁻; L: step length")
    figures = {
        "fig5_vSn": line_panels(q5, [res["vSn"]], labels, "torso angle q5⁻ [deg]",
                                ["post-impact stance-foot velocity v_Sn⁺ [m/s]"],
                                f"Font & Kövecses 2008, Fig. 5 — stance-foot lift-off over the torso angle {case}, "
                                f"impulsive map",
                                note=note),
        "fig6_energies": line_panels(q5, [tc, ta], labels, "torso angle q5⁻ [deg]",
                                     ["T_c⁻, constrained space [J]", "T_a⁻, admissible space [J]"],
                                     f"Font & Kövecses 2008, Fig. 6 — energy decomposition over the torso angle {case}",
                                     note=note_energies),
        "fig7_indexes": line_panels(q5, [res["xi_I"], res["xi_L"]], labels, "torso angle q5⁻ [deg]",
                                    ["ξ_I = T_c⁻/T⁻ [-]", "ξ_L = T_c⁻/L [J/m]"],
                                    f"Font & Kövecses 2008, Fig. 7 — energy-loss indices over the torso angle {case}",
                                    note=note_energies),
    }
    return Outcome(rows, figures, checks)
