"""Font-Llagunes et al. 2012, Figs. 13–17 (§5.4): the evolutions in normal-impulse space of both methods, for the
five cases of the paper's regimes; the compliant solve sampled at exact states of the same solve."""

import jax
import numpy as np

from difimpact import impulse_space_path

from ..curves import plotted_range
from ..experiment import Outcome, check_that, experiment
from ..plotting import panel_grid
from .impacts import _FIGURE_RESOLUTION, _METHOD_STYLE, _compliant_regime, _impulsive, _run_compliant

# Figs. 13–17 (§5.4): figure number, μ, q̇5⁻ [rad/s], q3⁻ [deg], regime as the paper names it.
_PATH_CASES = ((13, 0.5, 0.0, 21.0, "slide-from-rest", "immediate sliding"),
               (14, 0.5, 0.4, 21.0, "slide-reversal", "sliding reversion"),
               (15, 0.75, -0.2, 12.0, "slide-stick", "sliding-sticking"),
               (16, 0.75, 0.0, 15.0, "stick", "permanent sticking"),
               (17, 0.75, 0.0, 18.0, "slide-from-rest", "immediate sliding"))
_PATH_KEYS = (("vnP", "foot velocity v_n(P) [m/s]"), ("vtQ", "tip velocity v_t(Q) [m/s]"),
              ("Pt", "tangential impulse P_t [N s]"), ("Wn", "normal work W_n [J]"), ("Wt", "tangential work W_t [J]"))


def _compliant_path(mu, q3_deg, q5dot, samples):
    """Compliant solve sampled at ``samples`` equal times of its duration, mapped to ``P_n(t) = ∫F_n dt``
    (the equivalence of the two independent variables, Font-Llagunes et al. 2012, §3.2 and §5.1): exact states of the
    same solve."""
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
            "Crutch walker: v_n(P), v_t(Q), P_t, W_n, W_t as functions of the normal impulse P_n for one case of each "
            "regime — impulsive (integration in P_n space, §3.2) beside the compliant solve mapped to P_n(t).",
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
            panels, f"Font-Llagunes et al. 2012, Fig. {fig_no[i]} — μ = {mus[i]:g}, q̇5⁻ = {q5s[i]:g} rad/s, q3⁻ = "
                    f"{q3s[i]:g}° "
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
                   "Fig. 14 (q̇5⁻ = +0.4) and Fig. 15 (q̇5⁻ = −0.2) cannot both have v_t⁻ < 0: the paper contradicts "
                   "itself",
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
