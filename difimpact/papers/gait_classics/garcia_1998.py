"""Garcia, Chatterjee, Ruina & Coleman (1998), *The simplest walking model*: its long- and short-period gaits
continued in the slope (Figs. 3–5), the ``γ^{1/3}`` scaling and the first period doubling."""

import numpy as np

from difimpact import SimplestWalker, continue_gait

from ..experiment import Outcome, check_close, check_that, experiment
from ..plotting import panel_grid
from ..references import Reference

GARCIA = Reference(("M. Garcia", "A. Chatterjee", "A. Ruina", "M. Coleman"),
                   "The simplest walking model: stability, complexity, and scaling",
                   "Journal of Biomechanical Engineering 120(2), 281–288", 1998, "10.1115/1.2798313")


def _simplest(slope):
    return SimplestWalker(slope)


# Newton guesses at γ = 0.009 (refined by the continuation's first corrector)
X_LONG, X_SHORT = np.array([-0.2, 0.2, 0.016]), np.array([-0.194, 0.204, 0.015])
_KINDS = {"orbit", "period-doubling", "fold"}


def _rows(points, branch):
    return [dict(slope=b.p, branch="period-2" if b.period == 2 else branch, kind=b.kind, half_angle=float(-b.x[0]),
                 stance_rate=float(abs(b.x[1])), step_time=b.step_time, rho=b.rho) for b in points if b.kind in _KINDS]


@experiment("gait-simplest-walker", "", "Figs. 3–5, γ^{1/3} scaling, period doubling",
            "Simplest walking model (g = l = 1), exact limit β → 0: the long- and short-period gaits continued in "
            "slope from γ = 0.009 (pseudo-arclength), their multipliers, the γ^{1/3} scaling at small slopes, the "
            "first period doubling of the long gait and the period-2 branch born there.",
            units="slope [rad], half_angle [rad], stance_rate [1/√(l/g)], step_time [√(l/g)], rho [-]",
            reference=GARCIA)
def simplest_walker(quick, progress):
    lo, hi = (1e-4, 0.02) if quick else (1e-5, 0.02)
    step, bisections = (0.02, 8) if quick else (0.005, 20)
    branches = {}
    for name, x0 in progress([("long", X_LONG), ("short", X_SHORT)]):
        down = continue_gait(_simplest, x0, 0.009, lo, step=step, max_step=step, bisections=bisections, throw=False)
        up = continue_gait(_simplest, x0, 0.009, hi, step=step / 2, max_step=step / 2, bisections=bisections,
                           throw=False)
        branches[name] = down[:0:-1] + up
    rows = _rows(branches["long"], "long") + _rows(branches["short"], "short")
    at = {name: next(r for r in rows if r["slope"] == 0.009 and r["branch"] == name) for name in branches}
    pd = next((r for r in rows if r["kind"] == "period-doubling" and r["branch"] == "long"), None)
    folds = [r for r in rows if r["kind"] == "fold"]
    small = [r for r in rows if r["slope"] <= 1e-3 and r["branch"] == "long" and r["kind"] == "orbit"]
    exponent = np.polyfit(np.log([r["slope"] for r in small]), np.log([r["half_angle"] for r in small]), 1)[0]
    stable = [r["rho"] for r in rows
              if r["branch"] == "long" and r["kind"] == "orbit" and pd and r["slope"] < pd["slope"]]
    doubled = [r for r in rows if r["branch"] == "period-2" and r["kind"] == "orbit"]
    ends = {name: next(r["half_angle"] for r in rows[::-1] if r["branch"] == name and r["kind"] == "orbit")
            for name in branches}
    checks = [
        check_close("θ* of the long gait at γ = 0.009", 0.20031, at["long"]["half_angle"], 2.5e-5, "rad"),
        check_close("θ̇* of the long gait at γ = 0.009", 0.19983, at["long"]["stance_rate"], 2.5e-5, ""),
        check_close("θ* ∝ γ^{1/3} at small slopes (fitted exponent)", 1 / 3, float(exponent), 0.02),
        # Garcia et al.'s abstract: the long gait "is stable when 0 < γ < 0.015 rad" (two digits given)
        check_close("First period doubling of the long gait (stable for 0 < γ < 0.015)", 0.015,
                    pd["slope"] if pd else float("nan"), 0.034, "rad"),
        check_that("The long gait is stable below the period doubling (ρ < 1)", "Garcia et al. 1998, Fig. 4",
                   f"max ρ = {max(stable):.3f} over {len(stable)} gaits" if stable else "no period doubling",
                   bool(stable) and max(stable) < 1),
        check_that("Two period-one gaits at γ = 0.009; the short-period one is unstable",
                   "Garcia et al. 1998, abstract",
                   f"short gait θ* = {at['short']['half_angle']:.5f}, θ̇* = −{at['short']['stance_rate']:.5f}, "
                   f"T = {at['short']['step_time']:.4f} < {at['long']['step_time']:.4f}, ρ = {at['short']['rho']:.3f}",
                   at["short"]["rho"] > 1 and at["short"]["step_time"] < at["long"]["step_time"]),
        check_that("Stable period-2 gaits follow the period doubling", "Garcia et al. 1998, abstract",
                   f"{len(doubled)} period-2 gaits, ρ = {doubled[0]['rho']:.3f} at γ = {doubled[0]['slope']:.5f}"
                   if doubled else "none", bool(doubled) and doubled[0]["rho"] < 1),
        check_that(f"The long and short gaits do not meet in a fold for {lo:g} ≤ γ ≤ {hi:g}",
                   "Garcia et al. 1998: two period-one gaits", f"{len(folds)} folds on the period-one branches; "
                   f"at γ = {hi:g}: θ* = {ends['long']:.5f} (long), {ends['short']:.5f} (short)", not folds),
    ]
    return Outcome(rows, {"simplest_walker": _diagram(branches)}, checks)


def _diagram(branches):
    """θ* against γ: the long (solid) and short (dashed) gaits, both steps of the period-2 gaits, bifurcations
    marked; log-log over the whole range and linear near the period doubling."""
    curves = []
    for name, style in (("long", dict(color="k", ls="-")), ("short", dict(color="b", ls="--"))):
        orbit = [b for b in branches[name] if b.period == 1 and b.kind == "orbit"]
        curves.append((np.array([b.p for b in orbit]), np.array([-b.x[0] for b in orbit]), f"{name}-period gait",
                       style))
    # the period-2 branch from the period doubling where it is born
    doubled = [b for b in branches["long"] if b.period == 1 and b.kind == "period-doubling"][:1]
    doubled = [(b.p, b.x, b.x) for b in doubled] + [(b.p, *b.states) for b in branches["long"]
                                                    if b.period == 2 and b.kind == "orbit"]
    for step in (1, 2):
        curves.append((np.array([d[0] for d in doubled]), np.array([-d[step][0] for d in doubled]),
                       "period-2 gait (both steps)" if step == 1 else None, dict(color="r", ls="-")))
    for kind, marker in (("period-doubling", "o"), ("fold", "s")):
        marked = [b for name in branches for b in branches[name] if b.kind == kind]
        if marked:
            curves.append((np.array([b.p for b in marked]), np.array([-b.x[0] for b in marked]), kind,
                           dict(color="k", ls="none", marker=marker)))
    fig = panel_grid([("θ* [rad]", curves), ("θ* [rad]", curves)], "Simplest walker: period-one and period-2 gaits",
                     "slope γ [rad]")
    fig.axes[0].set_xscale("log")
    fig.axes[0].set_yscale("log")
    fig.axes[1].set_xlim(0.008, max(b.p for b in branches["long"]))
    fig.axes[1].set_ylim(0.18, 0.3)
    return fig
