"""Periodic passive gaits: McGeer's rimless wheel and the simplest walking model of Garcia et al."""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._gait import GaitResults, periodic_gait, StanceTolerances, stride_jacobian
from .._gait.stability import eigenvalues
from .._models import RimlessWheel, SimplestWalker
from .base import Outcome, check_close, check_that, experiment
from .plotting import line_panels
from .references import Reference

MCGEER = Reference(("T. McGeer",), "Passive dynamic walking", "International Journal of Robotics Research 9(2), "
                   "62–82", 1990, "10.1177/027836499000900206")
GARCIA = Reference(("M. Garcia", "A. Chatterjee", "A. Ruina", "M. Coleman"),
                   "The simplest walking model: stability, complexity, and scaling",
                   "Journal of Biomechanical Engineering 120(2), 281–288", 1998, "10.1115/1.2798313")


# Forward-mode tangents of an adaptive solve are not error-controlled: multipliers to 1e-9 need rtol 1e-13.
TIGHT = StanceTolerances(rtol=1e-13, atol=1e-13)


@eqx.filter_jit
def _gait_and_jacobian(walker, x0, options=StanceTolerances()):
    gait = periodic_gait(walker, x0, options=options)
    return gait, stride_jacobian(walker, gait, options=options)


@experiment("gait-rimless-wheel", "", "closed-form gait",
            "Rimless wheel (N = 8, l = 1 m, m = 1 kg, g = 9.81) walking down slopes 0.02…0.12 rad: fixed point of "
            "the stride map by Newton from ω = 2 rad/s and its multiplier, beside McGeer's closed form.",
            units="slope [rad], omega_plus [rad/s], multiplier [-], step_time [s], energy_loss [J]",
            reference=MCGEER)
def rimless_wheel(quick, progress):
    n, l, m, g = 8, 1.0, 1.0, 9.81
    alpha = np.pi / n
    slopes = np.linspace(0.02, 0.12, 6 if quick else 21)
    rows, closed, ok, err_w, err_m, err_e = [], [], [], 0.0, 0.0, 0.0
    for slope in progress(slopes):
        w = RimlessWheel(n, l=l, m=m, g=g, slope=float(slope))
        gait, J = _gait_and_jacobian(w, jnp.array([2.0]), TIGHT)
        walks = bool(gait.result == GaitResults.successful)
        omega = 1 / np.tan(2 * alpha) * np.sqrt(4 * g / l * np.sin(alpha) * np.sin(slope))
        rows.append(dict(slope=float(slope), n_spokes=n,
                         omega_plus=float(gait.x[0]) if walks else float("nan"),
                         multiplier=float(J[0, 0]) if walks else float("nan"),
                         step_time=float(gait.step_time) if walks else float("nan"),
                         energy_loss=float(gait.energy_loss) if walks else float("nan")))
        closed.append(omega)
        ok.append(walks)
        if walks:
            err_w = max(err_w, abs(float(gait.x[0]) / omega - 1))
            err_m = max(err_m, abs(float(J[0, 0]) / np.cos(2 * alpha) ** 2 - 1))
            err_e = max(err_e, abs(float(gait.energy_loss) / (m * g * float(gait.step_length) * np.sin(slope)) - 1))
    ok = np.asarray(ok)
    # The hub must pass over the stance spoke: ω⁺² > 2 (g/l) (1 − cos(α − γ)) (McGeer 1990, §2).
    omega_c = np.asarray(closed)
    passes = omega_c**2 > 2 * g / l * (1 - np.cos(alpha - slopes))
    checks = [
        check_that("ω⁺ = cot 2α √(4 (g/l) sin α sin γ) at every walking slope (to 1e-9)", "McGeer 1990",
                   f"largest relative error {err_w:.1e} over {ok.sum()} slopes", ok.any() and err_w < 1e-9),
        check_that("Multiplier cos² 2α = 0.5 for N = 8 (to 1e-9)", "McGeer 1990",
                   f"largest relative error {err_m:.1e}", ok.any() and err_m < 1e-9),
        check_that("Impact loss per step = m g L sin γ (to 1e-9)", "energy balance",
                   f"largest relative error {err_e:.1e}", ok.any() and err_e < 1e-9),
        check_that("The wheel walks exactly where the fixed point carries the hub over the spoke", "McGeer 1990, §2",
                   f"walks at {ok.sum()} of {len(ok)} slopes; closed-form condition at {passes.sum()}",
                   bool(np.all(ok == passes))),
    ]
    fig = line_panels(slopes, [np.stack([[r["omega_plus"] for r in rows], omega_c])],
                      ["difimpact", "McGeer closed form"], "slope γ [rad]", ["ω⁺ [rad/s]"],
                      "Rimless wheel fixed point", styles={0: "o", 1: "-"})
    table = "| slope [rad] | ω⁺ ours [rad/s] | ω⁺ McGeer | multiplier ours | cos² 2α |\n|---|---|---|---|---|\n" + "".join(
        f"| {r['slope']:.3f} | {r['omega_plus']:.12f} | {c:.12f} | {r['multiplier']:.12f} | {np.cos(2 * alpha) ** 2:.12f} |\n"
        for r, c in zip(rows, closed))
    return Outcome(rows, {"rimless_wheel": fig}, checks, table)


def _follow(slopes, x0):
    """Fixed points of the simplest walker along `slopes`, each Newton solve started from the previous one."""
    out, x = [], jnp.asarray(x0)
    for slope in slopes:
        gait, J = _gait_and_jacobian(SimplestWalker(float(slope)), x)
        ok = bool(gait.result == GaitResults.successful)
        lam = np.asarray(eigenvalues(J))
        out.append((float(slope), ok, np.asarray(gait.x), float(gait.step_time), lam))
        if ok:
            x = gait.x
    return out


@experiment("gait-simplest-walker", "", "Figs. 3–5, γ^{1/3} scaling, period doubling",
            "Simplest walking model (g = l = 1), exact limit β → 0: the long-period gait followed in slope from "
            "γ = 0.009, its multipliers, the γ^{1/3} scaling at small slopes and the first period doubling.",
            units="slope [rad], half_angle [rad], stance_rate [1/√(l/g)], step_time [√(l/g)], rho [-]",
            reference=GARCIA)
def simplest_walker(quick, progress):
    up = np.linspace(0.009, 0.019, 6 if quick else 21)
    down = np.geomspace(0.009, 1e-4 if quick else 1e-5, 6 if quick else 16)[1:]
    start = jnp.array([-0.2, 0.2, 0.016])
    branch = sorted(_follow(progress(up), start) + _follow(progress(down), start), key=lambda r: r[0])
    rows = [dict(slope=s, branch="long", kind="orbit", half_angle=float(-x[0]), stance_rate=float(abs(x[1])),
                 step_time=t, rho=float(np.max(np.abs(lam)))) for s, ok, x, t, lam in branch if ok]
    # period doubling: a real multiplier through −1, located by bisection between the bracketing slopes
    neg = [(r, np.min(np.where(np.abs(lam.imag) < 1e-12, lam.real, 0.0))) for r, lam in
           [(b, b[4]) for b in branch if b[1]]]
    pd = None
    for (a, la), (b, lb) in zip(neg[:-1], neg[1:]):
        if la > -1 >= lb:
            lo, hi, x = a[0], b[0], jnp.asarray(a[2])
            for _ in range(30 if not quick else 18):
                mid = 0.5 * (lo + hi)
                (_, _, xm, t, lam), = _follow([mid], x)
                m = np.min(np.where(np.abs(lam.imag) < 1e-12, lam.real, 0.0))
                lo, hi = (mid, hi) if m > -1 else (lo, mid)
            pd = (0.5 * (lo + hi), xm, t)
            rows.append(dict(slope=pd[0], branch="long", kind="period-doubling", half_angle=float(-xm[0]),
                             stance_rate=float(abs(xm[1])), step_time=t, rho=1.0))
            break
    at = next(r for r in rows if abs(r["slope"] - 0.009) < 1e-12)
    small = [r for r in rows if r["slope"] <= 1e-3 and r["kind"] == "orbit"]
    exponent = np.polyfit(np.log([r["slope"] for r in small]), np.log([r["half_angle"] for r in small]), 1)[0]
    checks = [
        check_close("θ* of the long gait at γ = 0.009", 0.20031, at["half_angle"], 2.5e-5, "rad"),
        check_close("θ̇* of the long gait at γ = 0.009", 0.19983, at["stance_rate"], 2.5e-5, ""),
        check_close("θ* ∝ γ^{1/3} at small slopes (fitted exponent)", 1 / 3, float(exponent), 0.02),
        # Garcia et al.'s abstract: the long gait "is stable when 0 < γ < 0.015 rad" (two digits given)
        check_close("First period doubling of the long gait (stable for 0 < γ < 0.015)", 0.015,
                    pd[0] if pd else float("nan"), 0.034, "rad"),
        check_that("The long gait is stable below the period doubling (ρ < 1)", "Garcia et al. 1998, Fig. 4",
                   f"max ρ = {max(r['rho'] for r in rows if r['kind'] == 'orbit' and (pd is None or r['slope'] < pd[0])):.3f}",
                   all(r["rho"] < 1 for r in rows if r["kind"] == "orbit" and (pd is None or r["slope"] < pd[0]))),
    ]
    orbit = [r for r in rows if r["kind"] == "orbit"]
    fig = line_panels(np.array([r["slope"] for r in orbit]),
                      [np.array([r["half_angle"] for r in orbit]), np.array([r["rho"] for r in orbit])],
                      ["long gait"], "slope γ [rad]", ["θ* [rad]", "ρ (largest |multiplier|)"],
                      "Simplest walker, long-period gait")
    return Outcome(rows, {"simplest_walker": fig}, checks)
