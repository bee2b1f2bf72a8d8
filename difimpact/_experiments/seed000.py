"""Font-Llagunes, Barjau, Pàmies-Vilà & Kövecses (2012): crutch-tip impact of the crutch walker,
the impulsive map with Coulomb friction beside the compliant Hunt–Crossley model — critical friction
(Fig. 3) and the grid of §5.1–5.3 (Figs. 4–12) here; evolutions in normal-impulse space (§5.4, Figs. 13–17)
and the sensitivity of the compliant model to ``k_n`` and ``χ`` (§5.5, Table 3, Figs. 18–21) in
:mod:`.seed000_evolution`.

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

from .._compliant import CompliantResults, compliant_impact
from .._contact import Coulomb
from .._impact.frictional_ground import frictional_impact
from .._models import CrutchWalker
from .base import Outcome, check_that, experiment
from .fixtures import seed000_tip_contact
from .plotting import model_figure, panel_grid

MUS = (0.5, 0.75, 1.0)  # seed 000, §5
Q3_DEG = tuple(range(3, 22, 3))  # seed 000, §5: 3°…21° step 3°
Q5DOTS = (-0.2, 0.0, 0.2, 0.4)  # seed 000, §5: q̇5⁻ from −0.2 to 0.4 rad/s
REST_TOL = 1e-9  # |v_t⁻| ≤ REST_TOL |v_n⁻| counts as rest, as in `frictional_impact_map`
T_END = 0.5  # [s] generous bound on the contact duration (≈ 4 ms at the nominal parameters)
_WALKER = CrutchWalker()  # seed 000, Table 1


def _impulsive(mu, q3_deg, q5dot):
    """Impulsive frictional map (Font-Llagunes et al. 2012, eqs. 8–34) at the pre-impact states of §5, one per entry of the
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
        r = frictional_impact(_WALKER, q, qdot, "Q", friction=Coulomb(mu))
        v_minus = r.jacobian @ qdot
        return dict(Pn=r.normal_impulse, Pt=r.tangential_impulse, Wn=r.normal_work, Wt=r.tangential_work,
                    vnP=r.qdot_plus[1], vtQ=(r.jacobian @ r.qdot_plus)[1], vtQ_minus=v_minus[1],
                    vnQ_minus=v_minus[0], regime=r.regime, mu_c=r.mu_c, ok=r.result._value == 0,
                    impact=r)
    return jax.vmap(one)(mu, q3, q5dot)


@jax.jit
def _compliant(kn_factor, chi_factor, mu, q3, q5dot, t_max):
    """Compliant contact phase of Font-Llagunes et al. 2012 (eqs. 35–38) from the pre-impact state of §5, stopped at its end
    of compression or at ``t_max`` [s] (whichever comes first); ``v_n(P) = q̇2``, ``v_t(Q) = A_t q̇``."""
    q, qdot = _WALKER.pre_impact_state(q3, q5dot)
    tip = seed000_tip_contact(kn_factor, chi_factor, mu)
    r = compliant_impact(_WALKER, q, qdot, tip.point, normal=tip.normal_law, friction=tip.friction_law, t_max=t_max,
                         max_steps=1024, max_phases=8, history=True, throw=False)
    v_minus = _WALKER.contact_jacobian(q, "Q") @ qdot
    return dict(Pn=r.normal_impulse[0], Pt=r.tangential_impulse[0], Wn=r.normal_work[0], Wt=r.tangential_work[0],
                vnP=r.qdot_plus[1], vtQ=_WALKER.contact_jacobian(r.q_plus, "Q")[1] @ r.qdot_plus,
                vtQ_minus=v_minus[1], vnQ_minus=v_minus[0], qdot=r.qdot_plus, qdot_minus=qdot,
                duration=r.duration, peak_Fn=r.peak_normal_force[0], stick_time=r.stick_time[0],
                final_stick=r.final_stick[0], result=r.result._value, t=r.history.t,
                Fn=r.history.normal_force[:, 0], Ft=r.history.tangential_force[:, 0])


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
    """Regime name of a compliant solve (names of Font-Llagunes et al. 2012, Table 2), from its start and end."""
    rest = abs(out["vtQ_minus"]) <= REST_TOL * abs(out["vnQ_minus"])
    if out["final_stick"]:
        return "stick" if rest else "slide-stick"
    if rest:
        return "slide-from-rest"
    return "slide-reversal" if np.sign(out["vtQ"]) != np.sign(out["vtQ_minus"]) else "slide"


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
    ax.set_title("Font-Llagunes et al. 2012, Fig. 3 — critical friction over the leg angle\n(q4 = 10°, q5 = 150°, q̇3⁻ = 1 rad/s; "
                 "dotted red: the μ of §5)", fontsize=10)
    fig.tight_layout()
    return Outcome(rows, {"fig3_mu_c": fig, "model_crutch_walker": _model_figure()}, checks)


def _model_figure():
    """The crutch walker at the reference state of §5 (q3 = 12°, q̇5⁻ = −0.2 rad/s) with its impulse at μ = 0.75
    (Table 3's case), in place of the paper's Fig. 1."""
    q, qdot = _WALKER.pre_impact_state(math.radians(12.0), -0.2)
    r = frictional_impact(_WALKER, q, qdot, "Q", friction=Coulomb(0.75))
    return model_figure(_WALKER, q, "Crutch walker (Font-Llagunes et al. 2012, Table 1) at q3⁻ = 12°, q4 = 10°, q5 = 150°",
                        contacts=("Q",), arrows={"Q": (float(r.tangential_impulse), float(r.normal_impulse))},
                        note="arrow: impulse (P_t, P_n) of the tip Q, impulsive map, μ = 0.75, q̇5⁻ = −0.2 rad/s; "
                             "P feet, H hip, S shoulder, E elbow")


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
                panels, f"Font-Llagunes et al. 2012, Fig. {number} — {what} at μ = {mu:g}, both methods (q4 = 10°, q5 = 150°)",
                "leg absolute angle q3⁻ [deg]", note=note)
    return Outcome(rows, figures, checks)
