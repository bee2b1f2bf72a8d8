"""Font & Kövecses, IMECE (2008): heel strike of the biped with torso — energy decomposition
into constrained/admissible spaces over step length and lower-body mass distribution (Figs. 2–4), and over
torso angle and upper-body mass distribution (Figs. 5–7)."""


import jax
import jax.numpy as jnp
import numpy as np

from .._impact.ground import impact
from .._models import BipedWithTorso
from .base import Outcome, check_that, experiment
from .curves import monotone, plotted_range, table_rows
from .plotting import line_panels, model_figure

M_B = 30.0  # seed 003, Table 1
# μ = 0 (massless legs) and μ_T = 0 (massless torso) are the limit μ → 0⁺ (massless="limit"): at exactly zero
# mass the massless segment's post-impact rate is otherwise undetermined, and with it v_Sn⁺.


def _heel_strike(model: BipedWithTorso, q4, q5):
    """One heel strike, Font & Kövecses 2008, §4: left foot P_L sticks (A_I, eq. 25), the stance foot is released and
    its post-impact normal velocity ``v_Sn⁺ = B_S q̇⁺`` is reported (eq. 4)."""
    q, qdot = model.pre_impact_state(q4, q5)
    sol = impact(model, q, qdot, stick=("P_L",), massless="limit")
    vsn = model.contact_jacobian(q, "P_R")[0] @ sol.qdot_plus
    return dict(xi_I=sol.xi_I, xi_L=sol.Tc_minus / model.step_length(q), vSn=vsn, Tc=sol.Tc_minus,
                Ta=sol.Ta_minus, T=sol.T_minus)


@jax.jit
def _lower_body(mu, q4):
    """μ = 2m/m_H with m_T = 10 kg and m_B = 30 kg (§4.1); upright torso q5 = q3."""
    m_H = (M_B - 10.0) / (1.0 + mu)
    return _heel_strike(BipedWithTorso(m=0.5 * mu * m_H, m_H=m_H, m_T=10.0), q4, None)


@jax.jit
def _upper_body(mu_T, q5):
    """μ_T = m_T/m_H with m = 5 kg and m_B = 30 kg (§4.2), q4 = 30°."""
    m_H = (M_B - 10.0) / (1.0 + mu_T)
    return _heel_strike(BipedWithTorso(m=5.0, m_H=m_H, m_T=mu_T * m_H), jnp.radians(30.0), q5)


def _grid(fn, outer, inner_deg):
    a, b = np.meshgrid(np.asarray(outer, float), np.radians(inner_deg), indexing="ij")
    out = jax.vmap(fn)(jnp.asarray(a.ravel()), jnp.asarray(b.ravel()))
    return {k: np.asarray(v).reshape(a.shape) for k, v in out.items()}


def _rows(key, outer, inner_key, inner_deg, res):
    a, b = np.meshgrid(np.asarray(outer, float), np.asarray(inner_deg, float), indexing="ij")
    return table_rows({key: a.ravel(), inner_key: b.ravel(),
                       **{k: res[k].ravel() for k in ("xi_I", "xi_L", "vSn", "Tc", "Ta")}})


_TOL = 1e-12  # monotone up to rounding


def _visual(a):
    """Figure resolution: 1 % of the plotted range (statements read from curves cannot be finer)."""
    return 0.01 * plotted_range(a)


def _reversal(a, axis, increasing):
    """Largest step against the stated direction (0 when monotone)."""
    d = np.diff(a, axis=axis) * (1 if increasing else -1)
    return float(max(0.0, -np.nanmin(d)))


@experiment("biped-step-length", "003", "Figs. 2–4",
            "Biped with torso: v_Sn⁺, T_c⁻, T_a⁻, ξ_I, ξ_L over inter-leg angle q4 and μ = 2m/m_H "
            "(μ = 0 as the limit μ → 0⁺).",
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
                   f"valid q4 per μ: {lifts.sum(axis=1).tolist()}", monotone(lifts.sum(axis=1), False, axis=0, tol=_TOL)),
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
    note = (f"μ = 2m/m_H: mass ratio of the legs to the hip (m_T = 10 kg, m_B = {M_B:g} kg; μ = 0 as the limit "
            f"μ → 0⁺); upright torso (q5 = 0)")
    energies = ("; T_c⁻, T_a⁻: pre-impact kinetic energy in the spaces of constrained and admissible motion, "
                "T⁻ = T_c⁻ + T_a⁻; L: step length")
    masked_note = note + energies + "; curves end where the stance foot would not lift off (v_Sn⁺ ≤ 0, Fig. 2)"
    figures = {
        "fig2_vSn": line_panels(q4, [res["vSn"]], labels, "inter-leg angle q4⁻ [deg]",
                                ["post-impact stance-foot velocity v_Sn⁺ [m/s]"],
                                "Font & Kövecses 2008, Fig. 2 — stance-foot lift-off over the step, impulsive map", zero_line=True,
                                note=note),
        "fig3_energies": line_panels(q4, [masked["Tc"], masked["Ta"]], labels, "inter-leg angle q4⁻ [deg]",
                                     ["T_c⁻, constrained space [J]", "T_a⁻, admissible space [J]"],
                                     "Font & Kövecses 2008, Fig. 3 — energy decomposition over the step", note=masked_note),
        "fig4_indexes": line_panels(q4, [masked["xi_I"], masked["xi_L"]], labels, "inter-leg angle q4⁻ [deg]",
                                    ["ξ_I = T_c⁻/T⁻ [-]", "ξ_L = T_c⁻/L [J/m]"],
                                    "Font & Kövecses 2008, Fig. 4 — energy-loss indices over the step", note=masked_note),
        "model_biped_with_torso": _model_figure(),
    }
    return Outcome(rows, figures, checks)


@experiment("biped-torso", "003", "Figs. 5–7",
            "Biped with torso: v_Sn⁺, T_c⁻, T_a⁻, ξ_I, ξ_L over torso angle q5 and μ_T = m_T/m_H at q4 = 30° "
            "(μ_T = 0 as the limit μ_T → 0⁺).",
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
                   monotone(res["vSn"], False, axis=0, tol=_TOL) and monotone(res["vSn"], True, axis=1, tol=_visual(res["vSn"]))),
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
                                f"Font & Kövecses 2008, Fig. 5 — stance-foot lift-off over the torso angle {case}, impulsive map",
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
