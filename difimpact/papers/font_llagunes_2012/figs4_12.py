"""Font-Llagunes et al. 2012, Figs. 4–12 (§5.1–5.3): both methods over ``μ × q3 × q̇5``, post-impact velocities,
impulses and works of the contact forces, and the regimes they end in."""

import matplotlib.pyplot as plt
import numpy as np

from ..experiment import Outcome, check_that, experiment
from ..plotting import panel_grid
from .impacts import _METHOD_STYLE, MUS, Q3_DEG, Q5DOTS, _compliant_regime, _impulsive, _run_compliant

_GRID_KEYS = ("Pn", "Pt", "Wn", "Wt", "vnP", "vtQ")


def _grid_rows(quick, progress):
    """Both methods over μ × q3 × q̇5 (Font-Llagunes et al. 2012, §5): arrays indexed ``[method][key][μ, q3, q̇5]``."""
    q3s = (3, 12, 21) if quick else Q3_DEG
    q5s = (-0.2, 0.0, 0.4) if quick else Q5DOTS
    mu, q3, q5 = (a.ravel() for a in np.meshgrid(MUS, np.asarray(q3s, float), q5s, indexing="ij"))
    shape = (len(MUS), len(q3s), len(q5s))
    imp = _impulsive(mu, q3, q5)
    comp = [_run_compliant(mu=m, q3_deg=a, q5dot=b)
            for m, a, b in progress(list(zip(mu, q3, q5)), desc="crutch-grid compliant")]
    regimes = {"impulsive": list(imp["impact"].regime_name),
               "compliant": [_compliant_regime(c) for c in comp]}
    data = {"impulsive": {k: np.asarray(imp[k]) for k in _GRID_KEYS},
            "compliant": {k: np.array([c[k] for c in comp]) for k in _GRID_KEYS + ("duration",)}}
    rows = [{"method": method, "mu": float(mu[i]), "q3_deg": float(q3[i]), "q5dot": float(q5[i]),
             **{k: float(data[method][k][i]) for k in _GRID_KEYS}, "regime": regimes[method][i]}
            for method in ("impulsive", "compliant") for i in range(mu.size)]
    grid = {m: {k: v.reshape(shape) for k, v in d.items()} for m, d in data.items()}
    for m in grid:
        grid[m]["regime"] = np.array(regimes[m]).reshape(shape)
    return rows, grid, np.asarray(q3s, float), q5s


@experiment("crutch-grid", "000", "Figs. 4–12",
            "Crutch walker, both methods (impulsive frictional map, compliant Hunt–Crossley + Coulomb) over μ ∈ "
            "{0.5, 0.75, 1}, q3 = 3°…21°, q̇5⁻ = −0.2…0.4 rad/s: post-impact v_n(P), v_t(Q), impulses and works.",
            units="q3_deg [deg], q5dot [rad/s], Pn, Pt [N s], Wn, Wt [J], vnP, vtQ [m/s]")
def crutch_grid(quick, progress):
    rows, g, q3, q5s = _grid_rows(quick, progress)
    imp, comp = g["impulsive"], g["compliant"]
    stuck = {m: np.isin(g[m]["regime"], ("stick", "slide-stick")) for m in g}
    leaning = q3 > 15
    stick_expected = np.broadcast_to(~leaning[:, None], stuck["impulsive"][1].shape)
    wn_drop = {m: 1.0 - np.abs(g[m]["Wn"][:, -1]) / np.abs(g[m]["Wn"][:, 0]) for m in g}
    no_slide = {m: g[m]["regime"] == "stick" for m in g}
    wt_ratio = max(float(np.max(np.abs(g[m]["Wt"][no_slide[m]]) / np.abs(g[m]["Wn"][no_slide[m]]), initial=0.0))
                   for m in g)
    rel = {k: float(np.max(np.abs(comp[k] - imp[k]) / np.abs(imp[k]))) for k in ("Pn", "Pt", "Wn")}
    dv = imp["vnP"] - comp["vnP"]
    dv_rel = float(np.max(dv[1] / imp["vnP"][1].max()))
    gT = 9.81 * comp["duration"]
    checks = [
        check_that("Both methods end in the same regime at every grid point", "§5.1 (Figs. 4–6)",
                   f"{int(np.sum(g['impulsive']['regime'] == g['compliant']['regime']))} of "
                   f"{g['impulsive']['regime'].size} agree",
                   np.all(g["impulsive"]["regime"] == g["compliant"]["regime"])),
        check_that("μ = 0.5: sliding throughout the impact, v_t⁺(Q) ≠ 0", "§5.1",
                   f"regimes at μ = 0.5: {', '.join(sorted(set(g['impulsive']['regime'][0].ravel().tolist())))}; "
                   f"min \\|v_t⁺(Q)\\| = {min(np.abs(g[m]['vtQ'][0]).min() for m in g):.3f} m/s",
                   not stuck["impulsive"][0].any() and not stuck["compliant"][0].any()
                   and min(np.abs(g[m]["vtQ"][0]).min() for m in g) > 0),
        check_that("μ = 0.75: sticking reached in all cases with q3 ≤ 15°, and only there", "§5.1, Fig. 5",
                   f"sticking at q3 = {sorted(set(q3[np.nonzero(stuck['impulsive'][1])[0]].tolist()))}° (impulsive), "
                   f"{sorted(set(q3[np.nonzero(stuck['compliant'][1])[0]].tolist()))}° (compliant)",
                   all(np.array_equal(stuck[m][1], stick_expected) for m in g)),
        check_that("μ = 1: sticking reached in all simulated cases", "§5.1, Fig. 6",
                   f"{int(stuck['impulsive'][2].sum())} + {int(stuck['compliant'][2].sum())} of "
                   f"{2 * stuck['impulsive'][2].size} (impulsive + compliant)",
                   stuck["impulsive"][2].all() and stuck["compliant"][2].all()),
        check_that("P_t⁺ < 0 in all cases, regardless of the direction of v_t⁻(Q)", "§5.2",
                   f"max P_t⁺ = {max(imp['Pt'].max(), comp['Pt'].max()):.3f} N s",
                   (imp["Pt"] < 0).all() and (comp["Pt"] < 0).all()),
        check_that("P_n⁺ and \\|P_t⁺\\| larger for upright postures (decrease with q3)", "§5.2",
                   "monotone in q3 for every μ, q̇5 and method",
                   all(np.all(np.diff(np.abs(g[m][k]), axis=1) < 0) for m in g for k in ("Pn", "Pt"))),
        check_that("From upright to leaning (3° → 21°) \\|W_n⁺\\| may fall by more than 50 %", "§5.3",
                   f"fall over (μ, q̇5): {100 * min(d.min() for d in wn_drop.values()):.0f}–"
                   f"{100 * max(d.max() for d in wn_drop.values()):.0f} %, > 50 % in "
                   f"{sum(int((d > 0.5).sum()) for d in wn_drop.values())} of {2 * wn_drop['impulsive'].size}",
                   any((d > 0.5).any() for d in wn_drop.values())),
        check_that("W_t⁺ = 0 for non-sliding cases (permanent sticking), though P_t⁺ ≠ 0", "§5.3",
                   f"{int(sum(v.sum() for v in no_slide.values()))} cases, max \\|W_t⁺\\|/\\|W_n⁺\\| = {wt_ratio:.1e}, "
                   f"min \\|P_t⁺\\| = {min(np.abs(g[m]['Pt'][no_slide[m]]).min() for m in g):.2f} N s",
                   # 1e-6: the compliant stick is held by a stabilised constraint (τ = 1 ms, _compliant.py)
                   wt_ratio < 1e-6 and any(v.any() for v in no_slide.values())),
        check_that("The two approaches yield very similar post-impact impulses and works (≤ 10 %, the largest "
                   "discrepancy the paper reports, §5.4)", "§5.1–5.3, §6",
                   f"max relative difference P_n {rel['Pn']:.1%}, P_t {rel['Pt']:.1%}, W_n {rel['Wn']:.1%}; the "
                   f"compliant P_n⁺ is the larger at {int((comp['Pn'] > imp['Pn']).sum())} of {imp['Pn'].size} points "
                   "(gravity acts over the finite contact)",
                   max(rel.values()) <= 0.10),
        check_that("μ = 0.75: v_n⁺(P) systematically higher in the impulsive approach, by up to 10 %", "§5.4",
                   f"impulsive − compliant = {dv[1].min():.3f}…{dv[1].max():.3f} m/s, up to {dv_rel:.1%} of the "
                   f"largest v_n⁺(P); mean difference / (g × duration) = {float(np.mean(dv / gT)):.2f} (the feet "
                   "fall freely during the compliant contact)",
                   (dv[1] > 0).all() and dv_rel <= 0.10),
    ]
    return Outcome(rows, _figures(g, q3, q5s), checks)


def _figures(g, q3, q5s) -> dict:
    """Figs. 4–12: velocities, impulses and works over ``q3`` per ``μ``, both methods, one curve per ``q̇5⁻``."""
    figures = {}
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    pairs = {"velocities": ([("vnP", "foot velocity v_n⁺(P) [m/s]"), ("vtQ", "tip velocity v_t⁺(Q) [m/s]")],
                            (4, 5, 6), "post-impact velocities"),
             "impulses": ([("Pn", "normal impulse P_n⁺ [N s]"), ("Pt", "tangential impulse P_t⁺ [N s]")],
                          (7, 8, 9), "impulses"),
             "works": ([("Wn", "normal work W_n⁺ [J]"), ("Wt", "tangential work W_t⁺ [J]")], (10, 11, 12),
                       "works of the contact forces")}
    note = ("P: feet, Q: crutch tip; n normal (+y), t tangential (+x); compliant: Hunt–Crossley + Coulomb, "
            "integrated to the tip's end of compression (v_n(Q) = 0)")
    for name, (keys, numbers, what) in pairs.items():
        for i, (mu, number) in enumerate(zip(MUS, numbers)):
            panels = [(ylabel, [(q3, g[m][k][i, :, j], f"{m}, q̇5⁻ = {q5:+.1f} rad/s",
                                 dict(color=colors[j], **_METHOD_STYLE[m]))
                                for j, q5 in enumerate(q5s) for m in ("impulsive", "compliant")])
                      for k, ylabel in keys]
            figures[f"fig{number}_{name}_mu{mu:g}"] = panel_grid(
                panels, f"Font-Llagunes et al. 2012, Fig. {number} — {what} at μ = {mu:g}, both methods (q4 = 10°, "
                        f"q5 = 150°)",
                "leg absolute angle q3⁻ [deg]", note=note)
    return figures
