"""Font-Llagunes, Barjau, Pàmies-Vilà & Kövecses (2012), what happens during the crutch-tip impact:
the evolutions in normal-impulse space of both methods (§5.4, Figs. 13–17) and the sensitivity of the compliant
model to its stiffness ``k_n`` and damping ``χ`` (§5.5, Table 3, Figs. 18–21). The solves are those of
:mod:`.seed000`; time samples of a compliant solve are exact (the same solve stopped earlier).
"""

import jax
import matplotlib.pyplot as plt
import numpy as np

from .._impact.frictional import impulse_space_path
from .base import Outcome, check_close, check_that, experiment
from .curves import plotted_range
from .plotting import panel_grid
from .seed000 import _METHOD_STYLE, _compliant_regime, _impulsive, _run_compliant

_END_NOTE = "the compliant model ends at the tip's end of compression (v_n(Q) = 0), as the paper's does"

# Figs. 13–17 (seed 000, §5.4): figure number, μ, q̇5⁻ [rad/s], q3⁻ [deg], regime as the paper names it.
_PATH_CASES = ((13, 0.5, 0.0, 21.0, "slide-from-rest", "immediate sliding"),
               (14, 0.5, 0.4, 21.0, "slide-reversal", "sliding reversion"),
               (15, 0.75, -0.2, 12.0, "slide-stick", "sliding-sticking"),
               (16, 0.75, 0.0, 15.0, "stick", "permanent sticking"),
               (17, 0.75, 0.0, 18.0, "slide-from-rest", "immediate sliding"))
_PATH_KEYS = (("vnP", "foot velocity v_n(P) [m/s]"), ("vtQ", "tip velocity v_t(Q) [m/s]"),
              ("Pt", "tangential impulse P_t [N s]"), ("Wn", "normal work W_n [J]"), ("Wt", "tangential work W_t [J]"))
_FIGURE_RESOLUTION = 0.02  # two line widths on a paper panel, as a fraction of its plotted range


def _compliant_path(mu, q3_deg, q5dot, samples):
    """Compliant solve sampled at ``samples`` equal times of its duration, mapped to ``P_n(t) = ∫F_n dt``
    (the equivalence of the two independent variables, Font-Llagunes et al. 2012, §3.2 and §5.1): exact states of the same solve."""
    end = _run_compliant(mu=mu, q3_deg=q3_deg, q5dot=q5dot)
    parts = [_run_compliant(mu=mu, q3_deg=q3_deg, q5dot=q5dot, t_max=float(end["duration"]) * k / samples)
             for k in range(1, samples)] + [end]
    start = {"Pn": 0.0, "vnP": float(end["qdot_minus"][1]), "vtQ": float(end["vtQ_minus"]), "Pt": 0.0, "Wn": 0.0,
             "Wt": 0.0}
    path = {k: np.array([start[k]] + [float(p[k]) for p in parts]) for k in start}
    return path, end


def _deviation(imp, comp, key):
    """Largest gap between the compliant samples and the impulsive path at the same ``P_n`` (and between the
    end points), as a fraction of the panel's plotted range (at least 10⁻³ of its unit, as
    :func:`~.plotting.panel_grid` plots a flat curve)."""
    inside = comp["Pn"] <= imp["Pn"][-1]
    gap = np.abs(comp[key][inside] - np.interp(comp["Pn"][inside], imp["Pn"], imp[key]))
    gap = max(gap.max(), abs(comp[key][-1] - imp[key][-1]))
    return float(gap / plotted_range(imp[key], comp[key], floor=1e-3))


@experiment("crutch-impulse-space", "000", "Figs. 13–17",
            "Crutch walker: v_n(P), v_t(Q), P_t, W_n, W_t as functions of the normal impulse P_n for one case of "
            "each regime — impulsive (integration in P_n space, §3.2) beside the compliant solve mapped to P_n(t).",
            units="Pn, Pt [N s], Wn, Wt [J], vnP, vtQ [m/s], q3_deg [deg], q5dot [rad/s]")
def crutch_impulse_space(quick, progress):
    fig_no, mus, q5s, q3s, expected, names = zip(*_PATH_CASES)
    imp_all = _impulsive(mus, q3s, q5s)
    mu_c = np.asarray(_impulsive(np.ones(2), np.array([15.0, 18.0]), np.zeros(2))["mu_c"])
    rows, figures, checks, deviations = [], {}, [], {}
    for i in progress(range(len(_PATH_CASES)), desc="crutch-impulse-space"):
        impact = jax.tree.map(lambda x: x[i], imp_all["impact"])
        p = impulse_space_path(impact, 101 if quick else 401)
        imp = {"Pn": np.asarray(p.normal_impulse), "vnP": np.asarray(p.qdot[:, 1]),
               "vtQ": np.asarray(p.velocity[:, 1]), "Pt": np.asarray(p.tangential_impulse),
               "Wn": np.asarray(p.normal_work), "Wt": np.asarray(p.tangential_work)}
        comp, end = _compliant_path(mus[i], q3s[i], q5s[i], 8 if quick else 24)
        regimes = (impact.regime_name, _compliant_regime(end))
        case = {"figure": fig_no[i], "mu": mus[i], "q3_deg": q3s[i], "q5dot": q5s[i]}
        for method, path in (("impulsive", imp), ("compliant", comp)):
            rows += [{**case, "method": method, **{k: float(path[k][j]) for k in path}}
                     for j in range(path["Pn"].size)]
        deviations[fig_no[i]] = {k: _deviation(imp, comp, k) for k, _ in _PATH_KEYS}
        checks.append(check_that(
            f"Fig. {fig_no[i]} (μ = {mus[i]:g}, q̇5⁻ = {q5s[i]:g} rad/s, q3⁻ = {q3s[i]:g}°): {names[i]}", expected[i],
            f"{regimes[0]} (impulsive), {regimes[1]} (compliant)", regimes == (expected[i], expected[i])))
        labels = {"impulsive": "impulsive (integration in P_n, §3.2)",
                  "compliant": "compliant (samples in time, at P_n(t) = ∫F_n dt)"}
        panels = [(ylabel, [(path["Pn"], path[k], labels[method], dict(**_METHOD_STYLE[method], markevery=None
                                                                          if method == "compliant" else [-1]))
                            for method, path in (("impulsive", imp), ("compliant", comp))])
                  for k, ylabel in _PATH_KEYS]
        figures[f"fig{fig_no[i]}_impulse_space"] = panel_grid(
            panels, f"Font-Llagunes et al. 2012, Fig. {fig_no[i]} — μ = {mus[i]:g}, q̇5⁻ = {q5s[i]:g} rad/s, q3⁻ = {q3s[i]:g}° "
            f"({names[i]})", "normal impulse P_n [N s]", ncols=3,
            note=f"P: feet, Q: crutch tip; both curves end at the end of compression, where v_n(Q) = 0 "
                 f"(impulsive: ● at P_n⁺ = {imp['Pn'][-1]:.2f} N s)")
    vt = np.asarray(imp_all["vtQ_minus"])
    fmt = lambda fig: ", ".join(f"{k} {100 * v:.1f} %" for k, v in deviations[fig].items())  # noqa: E731
    close = lambda fig, keys: all(deviations[fig][k] <= _FIGURE_RESOLUTION for k in keys)  # noqa: E731
    keys = [k for k, _ in _PATH_KEYS]
    checks += [
        check_that("Figs. 13, 16, 17: v_t⁻(Q) = 0; Fig. 14: v_t⁻(Q) < 0", "§5.4",
                   f"v_t⁻(Q) = {', '.join(f'{v:.3g}' for v in vt)} m/s (Figs. 13–17)",
                   np.all(np.abs(vt[[0, 3, 4]]) < 1e-12) and vt[1] < 0),
        check_that("Fig. 15: v_t⁻(Q) < 0", "§5.4",
                   f"v_t⁻(Q) = {vt[2]:+.3f} m/s. v_t⁻ is linear in q̇5⁻ and zero at q̇5⁻ = 0 (Fig. 13), so "
                   "Fig. 14 (q̇5⁻ = +0.4) and Fig. 15 (q̇5⁻ = −0.2) cannot both have v_t⁻ < 0: the paper "
                   "contradicts itself",
                   vt[2] < 0),
        check_that("Figs. 16/17: μ = 0.75 slightly above μ_c at q3 = 15°, slightly below at 18°", "§5.4",
                   f"μ_c = {mu_c[0]:.3f}, {mu_c[1]:.3f}", mu_c[0] < 0.75 < mu_c[1]),
        check_that(f"μ = 0.5: the two approaches are extremely close (all curves within {_FIGURE_RESOLUTION:.0%} of "
                   "the plotted range)", "§5.4", f"Fig. 13: {fmt(13)}; Fig. 14: {fmt(14)}",
                   close(13, keys) and close(14, keys)),
        check_that("μ = 0.75: the only non-negligible discrepancy is in v_n(P), systematically higher (up to 10 %) "
                   "in the impulsive approach", "§5.4", f"Fig. 15: {fmt(15)}; Fig. 16: {fmt(16)}; Fig. 17: {fmt(17)}",
                   all(close(f, keys[1:]) for f in (15, 16, 17))),
    ]
    return Outcome(rows, figures, checks)


# Seed 000, Table 3: (k_n factor, χ factor, P_n⁺ [N s], P_t⁺ [N s]) of the compliant model at μ = 0.75,
# q̇5⁻ = −0.2 rad/s, q3⁻ = 12° (§5.5), copied from the paper in its row order.
PAPER_TABLE3 = ((1.0, 1.0, 14.409, -9.899), (1 / 3, 1.0, 14.476, -9.927), (1 / 2, 1.0, 14.461, -9.922),
                (2.0, 1.0, 14.353, -9.868), (3.0, 1.0, 14.241, -9.797), (1.0, 1 / 5, 14.428, -9.908),
                (1.0, 1 / 2, 14.394, -9.886), (1.0, 2.0, 14.343, -9.858), (1.0, 5.0, 14.331, -9.851))
_KN_SET = (1 / 3, 1 / 2, 1.0, 2.0, 3.0)  # §5.5
_CHI_SET = (1 / 5, 1 / 2, 1.0, 2.0, 5.0)


def _factor(f):
    return "1" if f == 1 else (f"1/{round(1 / f)}" if f < 1 else f"{f:g}")


def _sensitivity(kn, chi, samples):
    """Table 3 case: the compliant solve and ``q̇(t)`` at ``samples`` equal times of its duration (Figs. 18–19)."""
    end = _run_compliant(kn, chi)
    times = np.linspace(0.0, float(end["duration"]), samples + 1)
    qdot = [end["qdot_minus"]] + [_run_compliant(kn, chi, t_max=float(t))["qdot"] for t in times[1:-1]] + [end["qdot"]]
    return end, times, np.array(qdot)


@experiment("crutch-table3", "000", "Table 3, Figs. 18–21",
            "Compliant model at μ = 0.75, q̇5⁻ = −0.2 rad/s, q3⁻ = 12°: impulses, peak force and duration for "
            "k_n/3…3k_n and χ/5…5χ beside Table 3; q̇(t) and F_n(t), F_t(t) with the slide→stick switch.",
            units="kn_factor, chi_factor [-] (of k_n = 4/3 E* √R_s, χ = 1e7 N s/m^2.5), Pn, Pt [N s], "
                  "peak_Fn [N], duration [s]")
def crutch_table3(quick, progress):
    cases = {(kn, 1.0) for kn in _KN_SET} | {(1.0, chi) for chi in _CHI_SET}
    runs = {c: _sensitivity(*c, 6 if quick else 20) for c in progress(sorted(cases), desc="crutch-table3")}
    rows, table, checks = [], [], []
    for kn, chi, pn_paper, pt_paper in PAPER_TABLE3:
        end = runs[(kn, chi)][0]
        pn, pt = float(end["Pn"]), float(end["Pt"])
        rows.append({"kn_factor": kn, "chi_factor": chi, "Pn": pn, "Pt": pt, "Pn_paper": pn_paper,
                     "Pt_paper": pt_paper, "peak_Fn": float(end["peak_Fn"]), "duration": float(end["duration"])})
        en, et = abs(pn / pn_paper - 1), abs(pt / pt_paper - 1)
        table.append(f"| {_factor(kn)} k_n | {_factor(chi)} χ | {pn_paper:.3f} | {pn:.3f} | {en:.2%} | "
                     f"{pt_paper:.3f} | {pt:.3f} | {et:.2%} | {float(end['peak_Fn']):.0f} | "
                     f"{1e3 * float(end['duration']):.3f} |")
        checks.append(check_that(f"Table 3, k_n × {_factor(kn)}, χ × {_factor(chi)}: P_n⁺, P_t⁺ within 1 %",
                                 f"{pn_paper:.3f}, {pt_paper:.3f} N s",
                                 f"{pn:.3f}, {pt:.3f} N s (rel. err. {en:.2%}, {et:.2%})", max(en, et) <= 0.01))
    nominal = rows[0]
    checks += [check_close("Table 3 nominal row P_n⁺ within 0.1 %", nominal["Pn_paper"], nominal["Pn"], 1e-3, "N s"),
               check_close("Table 3 nominal row P_t⁺ within 0.1 %", nominal["Pt_paper"], nominal["Pt"], 1e-3, "N s")]
    kn_runs = [runs[(kn, 1.0)] for kn in _KN_SET]
    chi_runs = [runs[(1.0, chi)] for chi in _CHI_SET]
    dur = {s: np.array([float(r[0]["duration"]) for r in rs]) for s, rs in (("k_n", kn_runs), ("χ", chi_runs))}
    peak = {s: np.array([float(r[0]["peak_Fn"]) for r in rs]) for s, rs in (("k_n", kn_runs), ("χ", chi_runs))}
    stick = [float(r[0]["stick_time"]) for r in runs.values()]
    final = np.array([r[2][-1] for r in runs.values()])
    plotted = np.concatenate([r[2] for r in runs.values()])
    spread = np.ptp(final, axis=0) / np.ptp(plotted, axis=0)
    checks += [
        check_that("The lower the stiffness and the damping, the longer the impact duration", "§5.5, Figs. 18–19",
                   f"duration {1e3 * dur['k_n'][0]:.2f} → {1e3 * dur['k_n'][-1]:.2f} ms over k_n/3…3k_n, "
                   f"{1e3 * dur['χ'][0]:.2f} → {1e3 * dur['χ'][-1]:.2f} ms over χ/5…5χ",
                   np.all(np.diff(dur["k_n"]) < 0) and np.all(np.diff(dur["χ"]) < 0)),
        check_that("Peak force increases dramatically with stiffness but stays similar when the damping changes",
                   "§5.5, Figs. 20–21",
                   f"peak F_n {peak['k_n'][0]:.0f} → {peak['k_n'][-1]:.0f} N over k_n/3…3k_n, "
                   f"{peak['χ'].min():.0f}…{peak['χ'].max():.0f} N over χ/5…5χ",
                   np.all(np.diff(peak["k_n"]) > 0)
                   and np.ptp(peak["χ"]) / peak["χ"].mean() < np.ptp(peak["k_n"]) / peak["k_n"].mean()),
        check_that("The slide → stick transition happens for every parameter set", "§5.5, Figs. 20–21",
                   f"switch at {1e3 * min(stick):.2f}…{1e3 * max(stick):.2f} ms, sticking at the end in "
                   f"{sum(bool(r[0]['final_stick']) for r in runs.values())} of {len(runs)}",
                   np.all(np.isfinite(stick)) and all(bool(r[0]["final_stick"]) for r in runs.values())),
        check_that(f"Final velocities differ visibly (> {_FIGURE_RESOLUTION:.0%} of the plotted range) only for q̇1 "
                   "and q̇2", "§5.5, Figs. 18–19",
                   "spread of q̇⁺ over the 9 sets / plotted range: " + ", ".join(
                       f"q̇{i + 1} {100 * v:.1f} %" for i, v in enumerate(spread)),
                   np.all(spread[:2] > _FIGURE_RESOLUTION) and np.all(spread[2:] <= _FIGURE_RESOLUTION)),
    ]
    markdown = "\n".join([
        "Font-Llagunes et al. 2012, Table 3 beside ours (compliant model, μ = 0.75, q̇5⁻ = −0.2 rad/s, q3⁻ = 12°):", "",
        "| k_n | χ | P_n⁺ paper [N s] | P_n⁺ ours | rel. err. | P_t⁺ paper [N s] | P_t⁺ ours | rel. err. | "
        "peak F_n [N] | duration [ms] |", "|---|---|---|---|---|---|---|---|---|---|", *table])
    figures = {}
    for number, label, factors, subset in ((18, "k_n", _KN_SET, kn_runs), (19, "χ", _CHI_SET, chi_runs)):
        panels = [(f"q̇{i + 1} [{'m/s' if i < 2 else 'rad/s'}]",
                   [(1e3 * times, qdot[:, i], f"{_factor(f)} {label}", dict(marker=".", ms=3))
                    for f, (_, times, qdot) in zip(factors, subset)]) for i in range(6)]
        figures[f"fig{number}_qdot_{'kn' if label == 'k_n' else 'chi'}"] = panel_grid(
            panels, f"Font-Llagunes et al. 2012, Fig. {number} — q̇(t), compliant model, {label} varied (μ = 0.75, q̇5⁻ = −0.2 rad/s, "
            "q3⁻ = 12°)", "time [ms]", ncols=3,
            note=f"q̇1, q̇2: feet velocity; q̇3…q̇6: leg, torso, upper-arm, forearm rates; {_END_NOTE}")
    for number, label, factors, subset in ((20, "k_n", _KN_SET, kn_runs), (21, "χ", _CHI_SET, chi_runs)):
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        panels = []
        for key, ylabel in (("Fn", "normal force F_n [N]"), ("Ft", "tangential force F_t [N]")):
            curves = []
            for j, (f, (end, _, _)) in enumerate(zip(factors, subset)):
                saved = np.isfinite(end["t"])
                curves.append((1e3 * end["t"][saved], end[key][saved], f"{_factor(f)} {label}",
                               dict(color=colors[j])))
                ts = 1e3 * float(end["stick_time"])
                curves.append(([ts, ts], [0.0, float(np.interp(ts, 1e3 * end["t"][saved], end[key][saved]))],
                               "slide → stick switch" if j == 0 else None, dict(color=colors[j], ls=":")))
            panels.append((ylabel, curves))
        figures[f"fig{number}_forces_{'kn' if label == 'k_n' else 'chi'}"] = panel_grid(
            panels, f"Font-Llagunes et al. 2012, Fig. {number} — contact forces, compliant model, {label} varied (μ = 0.75, "
            "q̇5⁻ = −0.2 rad/s, q3⁻ = 12°)", "time [ms]", note=_END_NOTE)
    return Outcome(rows, figures, checks, markdown)
