"""Seed 000 (Font-Llagunes, Barjau, Pàmies-Vilà & Kövecses 2012): crutch-tip impact of the crutch walker,
the impulsive map with Coulomb friction beside the compliant Hunt–Crossley model — critical friction
(Fig. 3), the grid of §5.1–5.3 (Figs. 4–12), evolutions in normal-impulse space (§5.4, Figs. 13–17) and the
sensitivity of the compliant model to ``k_n`` and ``χ`` (§5.5, Table 3, Figs. 18–21).

Compile time is the cost here: the impulsive map is one ``jit(vmap)`` per grid; every compliant solve goes
through one jitted single-case function (:func:`_compliant`) shared by the three compliant experiments and
called in a loop (a second, vmapped compilation of the compliant solver costs more than the loop saves).
Time samples of a compliant solve (``q̇(t)``, ``P_n(t)`` …) are exact: the same solve stopped at ``t_max``.
"""

import math

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np

from .._compliant import CompliantResults, compliant_impact, seed000_tip_contact
from .._impact.frictional import FRICTIONAL_REGIMES, frictional_impact
from .._models import CrutchWalker
from .base import Outcome, check_close, check_that, experiment

MUS = (0.5, 0.75, 1.0)  # seed 000, §5
Q3_DEG = tuple(range(3, 22, 3))  # seed 000, §5: 3°…21° step 3°
Q5DOTS = (-0.2, 0.0, 0.2, 0.4)  # seed 000, §5: q̇5⁻ from −0.2 to 0.4 rad/s
REST_TOL = 1e-9  # |v_t⁻| ≤ REST_TOL |v_n⁻| counts as rest, as in `frictional_impact_map`
T_END = 0.5  # [s] generous bound on the contact duration (≈ 4 ms at the nominal parameters)
_WALKER = CrutchWalker()  # seed 000, Table 1


def _impulsive(mu, q3_deg, q5dot):
    """Impulsive frictional map (seed 000, eqs. 8–34) at the pre-impact states of §5, one per entry of the
    equal-length sequences ``mu, q3_deg, q5dot``. Batches are padded to the full grid's size so that every
    experiment reuses one compilation."""
    size = len(MUS) * len(Q3_DEG) * len(Q5DOTS)
    args = [np.resize(np.asarray(a, float), size) for a in (mu, np.radians(q3_deg), q5dot)]
    out = _impulsive_batch(*map(jnp.asarray, args))
    out = jax.tree.map(lambda x: x[:len(mu)], out)
    if not np.all(out.pop("ok")):
        raise RuntimeError("impulsive map: friction could not stop the approach (FrictionalImpactResults)")
    return out


@jax.jit
def _impulsive_batch(mu, q3, q5dot):
    def one(mu, q3, q5dot):
        q, qdot = _WALKER.pre_impact_state(q3, q5dot)
        r = frictional_impact(_WALKER, q, qdot, "Q", mu)
        v_minus = r.jacobian @ qdot
        return dict(Pn=r.normal_impulse, Pt=r.tangential_impulse, Wn=r.normal_work, Wt=r.tangential_work,
                    vnP=r.qdot_plus[1], vtQ=(r.jacobian @ r.qdot_plus)[1], vtQ_minus=v_minus[1],
                    vnQ_minus=v_minus[0], regime=r.regime, mu_c=r.mu_c, ok=r.result._value == 0,
                    impact=r)
    return jax.vmap(one)(mu, q3, q5dot)


@jax.jit
def _compliant(kn_factor, chi_factor, mu, q3, q5dot, t_max):
    """Compliant contact phase of seed 000 (eqs. 35–38) from the pre-impact state of §5, stopped at its end
    of compression or at ``t_max`` [s] (whichever comes first); ``v_n(P) = q̇2``, ``v_t(Q) = A_t q̇``."""
    q, qdot = _WALKER.pre_impact_state(q3, q5dot)
    r = compliant_impact(_WALKER, q, qdot, (seed000_tip_contact(kn_factor, chi_factor, mu),), t_max=t_max,
                         max_steps=1024, max_phases=8, history=True, throw=False)
    v_minus = _WALKER.contact_jacobian(q, "Q") @ qdot
    return dict(Pn=r.P_n[0], Pt=r.P_t[0], Wn=r.W_n[0], Wt=r.W_t[0], vnP=r.qdot[1],
                vtQ=_WALKER.contact_jacobian(r.q, "Q")[1] @ r.qdot, vtQ_minus=v_minus[1], vnQ_minus=v_minus[0],
                qdot=r.qdot, qdot_minus=qdot,
                duration=r.duration, peak_Fn=r.peak_Fn[0], stick_time=r.stick_time[0],
                final_stick=r.final_stick[0], result=r.result._value, t=r.history.t, Fn=r.history.F_n[:, 0],
                Ft=r.history.F_t[:, 0])


def _run_compliant(kn_factor=1.0, chi_factor=1.0, mu=0.75, q3_deg=12.0, q5dot=-0.2, t_max=T_END):
    """One compliant solve (numpy outputs); a solve that does not reach its end event before ``T_END`` is
    an error, a shorter ``t_max`` is a time sample."""
    out = _compliant(*(jnp.asarray(float(v)) for v in (kn_factor, chi_factor, mu, math.radians(q3_deg), q5dot,
                                                         t_max)))
    out = {k: np.asarray(v) for k, v in out.items()}
    if t_max == T_END and int(out["result"]) != 0:
        raise RuntimeError(f"compliant solve failed (μ = {mu}, q3 = {q3_deg}°, q̇5 = {q5dot}, k_n × {kn_factor}, "
                           f"χ × {chi_factor}): {CompliantResults[int(out['result'])]}")
    return out


def _compliant_regime(out) -> str:
    """Regime name of a compliant solve (names of seed 000, Table 2), from its start and end."""
    rest = abs(out["vtQ_minus"]) <= REST_TOL * abs(out["vnQ_minus"])
    if out["final_stick"]:
        return "stick" if rest else "slide-stick"
    if rest:
        return "slide-from-rest"
    return "slide-reversal" if np.sign(out["vtQ"]) != np.sign(out["vtQ_minus"]) else "slide"


def _figure(panels, title, xlabel, ncols=None):
    """Panels of curves, each curve with its own abscissa: ``panels`` is a list of ``(ylabel, curves)`` and
    ``curves`` a list of ``(x, y, label, matplotlib kwargs)``. A panel spans at least 10⁻³ of its unit."""
    ncols = ncols or len(panels)
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.6 * nrows), squeeze=False)
    for ax, (ylabel, curves) in zip(axes.flat, panels):
        for x, y, label, style in curves:
            ax.plot(x, y, label=label, **style)
        lo, hi = ax.get_ylim()
        if hi - lo < 1e-3:  # a flat curve (v_t = 0 while sticking): no magnified round-off
            ax.set_ylim(0.5 * (lo + hi) - 5e-4, 0.5 * (lo + hi) + 5e-4)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    rows = -(-len(labels) // 4)
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=8)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.045 * rows / nrows + 0.01, 1, 1))
    return fig


_METHOD_STYLE = {"impulsive": dict(ls="-", marker="o", ms=3), "compliant": dict(ls="--", marker="x", ms=4)}


@experiment("crutch-critical-friction", "000", "Fig. 3",
            "Crutch walker: critical friction coefficient μ_c (eq. 8) over the leg angle q3 for the seven "
            "postures of §5, with the friction coefficients μ = 0.5, 0.75, 1 chosen from it.",
            units="q3_deg [deg], mu_c [-]")
def crutch_critical_friction(quick, progress):
    q3 = np.asarray(Q3_DEG, float)
    mu_c = np.asarray(_impulsive(np.ones_like(q3), q3, np.zeros_like(q3))["mu_c"])
    rows = [{"q3_deg": float(a), "mu_c": float(m)} for a, m in zip(q3, mu_c)]
    listing = ", ".join(f"{a:g}°: {m:.3f}" for a, m in zip(q3, mu_c))
    checks = [
        check_that("μ_c grows as the body leans forward (with q3)", "Fig. 3, §6",
                   f"μ_c = {listing}", np.all(np.diff(mu_c) > 0)),
        check_that("μ = 0.5 is lower than all μ_c", "§5", f"min μ_c = {mu_c.min():.3f}", np.all(mu_c > 0.5)),
        check_that("μ = 1 is above all μ_c", "§5", f"max μ_c = {mu_c.max():.3f}", np.all(mu_c < 1.0)),
        check_that("μ = 0.75 is higher than the first five μ_c and lower than the last two", "§5",
                   f"μ_c(15°) = {mu_c[4]:.3f}, μ_c(18°) = {mu_c[5]:.3f}",
                   np.all(mu_c[:5] < 0.75) and np.all(mu_c[5:] > 0.75)),
    ]
    fig, ax = plt.subplots(figsize=(5.2, 4.0))
    ax.plot(q3, mu_c, "o-", label="μ_c, impulsive map (eq. 8)")
    for mu in MUS:
        ax.axhline(mu, color="r", ls=":", lw=1.2)
        ax.text(q3[0], mu + 0.01, f"μ = {mu:g}", color="r", fontsize=8)
    ax.set_xlabel("leg absolute angle q3⁻ [deg]")
    ax.set_ylabel("critical friction coefficient μ_c [-]")
    ax.set_ylim(0.4, 1.1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("Seed 000 Fig. 3 (dotted red: the μ of §5)")
    fig.tight_layout()
    return Outcome(rows, {"fig3_mu_c": fig}, checks)


_GRID_KEYS = ("Pn", "Pt", "Wn", "Wt", "vnP", "vtQ")


def _grid_rows(quick, progress):
    """Both methods over μ × q3 × q̇5 (seed 000, §5): arrays indexed ``[method][key][μ, q3, q̇5]``."""
    q3s = (3, 12, 21) if quick else Q3_DEG
    q5s = (-0.2, 0.0, 0.4) if quick else Q5DOTS
    mu, q3, q5 = (a.ravel() for a in np.meshgrid(MUS, np.asarray(q3s, float), q5s, indexing="ij"))
    shape = (len(MUS), len(q3s), len(q5s))
    imp = _impulsive(mu, q3, q5)
    comp = [_run_compliant(mu=m, q3_deg=a, q5dot=b)
            for m, a, b in progress(list(zip(mu, q3, q5)), desc="crutch-grid compliant")]
    regimes = {"impulsive": [FRICTIONAL_REGIMES[int(r)] for r in imp["regime"]],
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
            "Crutch walker, both methods (impulsive frictional map, compliant Hunt–Crossley + Coulomb) over "
            "μ ∈ {0.5, 0.75, 1}, q3 = 3°…21°, q̇5⁻ = −0.2…0.4 rad/s: post-impact v_n(P), v_t(Q), impulses and "
            "works.",
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
    figures = {}
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    pairs = {"velocities": ([("vnP", "post-impact foot velocity v_n⁺(P) [m/s]"),
                             ("vtQ", "post-impact tip velocity v_t⁺(Q) [m/s]")], (4, 5, 6)),
             "impulses": ([("Pn", "normal impulse P_n⁺ [N s]"), ("Pt", "tangential impulse P_t⁺ [N s]")],
                          (7, 8, 9)),
             "works": ([("Wn", "normal work W_n⁺ [J]"), ("Wt", "tangential work W_t⁺ [J]")], (10, 11, 12))}
    for name, (keys, numbers) in pairs.items():
        for i, (mu, number) in enumerate(zip(MUS, numbers)):
            panels = [(ylabel, [(q3, g[m][k][i, :, j], f"{m}, q̇5⁻ = {q5:+.1f} rad/s",
                                 dict(color=colors[j], **_METHOD_STYLE[m]))
                                for j, q5 in enumerate(q5s) for m in ("impulsive", "compliant")])
                      for k, ylabel in keys]
            figures[f"fig{number}_{name}_mu{mu:g}"] = _figure(
                panels, f"Seed 000 Fig. {number} — μ = {mu:g}, both methods", "leg absolute angle q3⁻ [deg]")
    return Outcome(rows, figures, checks)


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
    (the equivalence of the two independent variables, seed 000 §3.2 and §5.1): exact states of the same solve."""
    end = _run_compliant(mu=mu, q3_deg=q3_deg, q5dot=q5dot)
    parts = [_run_compliant(mu=mu, q3_deg=q3_deg, q5dot=q5dot, t_max=float(end["duration"]) * k / samples)
             for k in range(1, samples)] + [end]
    start = {"Pn": 0.0, "vnP": float(end["qdot_minus"][1]), "vtQ": float(end["vtQ_minus"]), "Pt": 0.0, "Wn": 0.0,
             "Wt": 0.0}
    path = {k: np.array([start[k]] + [float(p[k]) for p in parts]) for k in start}
    return path, end


def _deviation(imp, comp, key):
    """Largest gap between the compliant samples and the impulsive path at the same ``P_n`` (and between the
    end points), as a fraction of the panel's plotted range."""
    inside = comp["Pn"] <= imp["Pn"][-1]
    gap = np.abs(comp[key][inside] - np.interp(comp["Pn"][inside], imp["Pn"], imp[key]))
    gap = max(gap.max(), abs(comp[key][-1] - imp[key][-1]))
    both = np.concatenate([imp[key], comp[key]])
    # A flat curve (v_t = 0 while sticking) is plotted on a range of at least 10⁻³ of its unit.
    return float(gap / max(np.ptp(both), 1e-3))


@experiment("crutch-impulse-space", "000", "Figs. 13–17",
            "Crutch walker: v_n(P), v_t(Q), P_t, W_n, W_t as functions of the normal impulse P_n for one case of "
            "each regime — impulsive (integration in P_n space, §3.2) beside the compliant solve mapped to P_n(t).",
            units="Pn, Pt [N s], Wn, Wt [J], vnP, vtQ [m/s], q3_deg [deg], q5dot [rad/s]")
def crutch_impulse_space(quick, progress):
    from .._impact.frictional import impulse_space_path

    fig_no, mus, q5s, q3s, expected, names = zip(*_PATH_CASES)
    imp_all = _impulsive(mus, q3s, q5s)
    mu_c = np.asarray(_impulsive(np.ones(2), np.array([15.0, 18.0]), np.zeros(2))["mu_c"])
    rows, figures, checks, deviations = [], {}, [], {}
    for i in progress(range(len(_PATH_CASES)), desc="crutch-impulse-space"):
        impact = jax.tree.map(lambda x: x[i], imp_all["impact"])
        p = impulse_space_path(impact, 101 if quick else 401)
        imp = {"Pn": np.asarray(p.pn), "vnP": np.asarray(p.qdot[:, 1]), "vtQ": np.asarray(p.v[:, 1]),
               "Pt": np.asarray(p.pt), "Wn": np.asarray(p.wn), "Wt": np.asarray(p.wt)}
        comp, end = _compliant_path(mus[i], q3s[i], q5s[i], 8 if quick else 24)
        regimes = (FRICTIONAL_REGIMES[int(imp_all["regime"][i])], _compliant_regime(end))
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
        figures[f"fig{fig_no[i]}_impulse_space"] = _figure(
            panels, f"Seed 000 Fig. {fig_no[i]} — μ = {mus[i]:g}, q̇5⁻ = {q5s[i]:g} rad/s, q3⁻ = {q3s[i]:g}° "
            f"({names[i]})", "normal impulse P_n [N s]", ncols=3)
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
        "Seed 000, Table 3 beside ours (compliant model, μ = 0.75, q̇5⁻ = −0.2 rad/s, q3⁻ = 12°):", "",
        "| k_n | χ | P_n⁺ paper [N s] | P_n⁺ ours | rel. err. | P_t⁺ paper [N s] | P_t⁺ ours | rel. err. | "
        "peak F_n [N] | duration [ms] |", "|---|---|---|---|---|---|---|---|---|---|", *table])
    figures = {}
    for number, label, factors, subset in ((18, "k_n", _KN_SET, kn_runs), (19, "χ", _CHI_SET, chi_runs)):
        panels = [(f"q̇{i + 1} [{'m/s' if i < 2 else 'rad/s'}]",
                   [(1e3 * times, qdot[:, i], f"{_factor(f)} {label}", dict(marker=".", ms=3))
                    for f, (_, times, qdot) in zip(factors, subset)]) for i in range(6)]
        figures[f"fig{number}_qdot_{'kn' if label == 'k_n' else 'chi'}"] = _figure(
            panels, f"Seed 000 Fig. {number} — q̇(t), compliant model, {label} varied", "time [ms]", ncols=3)
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
        figures[f"fig{number}_forces_{'kn' if label == 'k_n' else 'chi'}"] = _figure(
            panels, f"Seed 000 Fig. {number} — contact forces, compliant model, {label} varied", "time [ms]")
    return Outcome(rows, figures, checks, markdown)
