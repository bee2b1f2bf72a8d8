"""Font-Llagunes et al. 2012, Table 3 and Figs. 18–21 (§5.5): the sensitivity of the compliant model to its
stiffness ``k_n`` and damping ``χ``. The solves are those of :mod:`.impacts`; time samples of a compliant solve
are exact (the same solve stopped earlier)."""

import matplotlib.pyplot as plt
import numpy as np

from ..experiment import Outcome, check_close, check_that, experiment
from ..plotting import panel_grid
from .impacts import _END_NOTE, _FIGURE_RESOLUTION, _run_compliant

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
            units="kn_factor, chi_factor [-] (of k_n = 4/3 E* √R_s, χ = 1e7 N s/m^2.5), Pn, Pt [N s], peak_Fn [N], "
                  "duration [s]")
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
            panels, f"Font-Llagunes et al. 2012, Fig. {number} — q̇(t), compliant model, {label} varied (μ = 0.75, "
                    f"q̇5⁻ = −0.2 rad/s, "
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
            panels, f"Font-Llagunes et al. 2012, Fig. {number} — contact forces, compliant model, {label} varied (μ = "
                    f"0.75, "
            "q̇5⁻ = −0.2 rad/s, q3⁻ = 12°)", "time [ms]", note=_END_NOTE)
    return Outcome(rows, figures, checks, markdown)
