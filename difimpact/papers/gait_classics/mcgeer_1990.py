"""McGeer (1990), *Passive dynamic walking*: the rimless wheel's gait down a slope, found by Newton on the stride
map with its Floquet multiplier, beside McGeer's closed form."""

import numpy as np

from difimpact import RimlessWheel, StanceTolerances
from difimpact._gait.continuation import branch_point

from ..experiment import Outcome, check_that, experiment
from ..plotting import line_panels
from ..references import Reference

MCGEER = Reference(("T. McGeer",), "Passive dynamic walking", "International Journal of Robotics Research 9(2), "
                   "62–82", 1990, "10.1177/027836499000900206")


# Forward-mode tangents of an adaptive solve are not error-controlled: multipliers to 1e-9 need rtol 1e-13.
TIGHT = StanceTolerances(rtol=1e-13, atol=1e-13)
N_SPOKES, L, M, G = 8, 1.0, 1.0, 9.81


def _wheel(slope):
    return RimlessWheel(N_SPOKES, l=L, m=M, g=G, slope=slope)


@experiment("gait-rimless-wheel", "", "closed-form gait",
            "Rimless wheel (N = 8, l = 1 m, m = 1 kg, g = 9.81) walking down slopes 0.02…0.12 rad: fixed point of "
            "the stride map by Newton from ω = 2 rad/s and its multiplier, beside McGeer's closed form.",
            units="slope [rad], omega_plus [rad/s], multiplier [-], step_time [s], energy_loss [J]",
            reference=MCGEER)
def rimless_wheel(quick, progress):
    n, l, m, g = N_SPOKES, L, M, G
    alpha = np.pi / n
    slopes = np.linspace(0.02, 0.12, 6 if quick else 21)
    rows, closed, ok, err_w, err_m, err_e = [], [], [], 0.0, 0.0, 0.0
    # From the steepest slope down, each Newton solve starts from the gait of the slope above (a far guess
    # sends Newton's iterates to strides that fall back near the lowest walking slopes).
    guess, found = [2.0], {}
    for slope in progress(slopes[::-1]):
        found[slope], _ = branch_point(_wheel, guess, float(slope), options=TIGHT)
        if found[slope] is not None:
            guess = found[slope].x
    for slope in slopes:
        gait = found[slope]
        walks = gait is not None
        omega = 1 / np.tan(2 * alpha) * np.sqrt(4 * g / l * np.sin(alpha) * np.sin(slope))
        multiplier = float(np.real(gait.multipliers[0])) if walks else float("nan")
        rows.append(dict(slope=float(slope), n_spokes=n, omega_plus=float(gait.x[0]) if walks else float("nan"),
                         multiplier=multiplier, step_time=gait.step_time if walks else float("nan"),
                         energy_loss=gait.energy_loss if walks else float("nan")))
        closed.append(omega)
        ok.append(walks)
        if walks:
            err_w = max(err_w, abs(float(gait.x[0]) / omega - 1))
            err_m = max(err_m, abs(multiplier / np.cos(2 * alpha) ** 2 - 1))
            err_e = max(err_e, abs(gait.energy_loss / (m * g * gait.step_length * np.sin(slope)) - 1))
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
    head = "| slope [rad] | ω⁺ ours [rad/s] | ω⁺ McGeer | multiplier ours | cos² 2α |\n|---|---|---|---|---|\n"
    table = head + "".join(
        f"| {r['slope']:.3f} | {r['omega_plus']:.12f} | {c:.12f} | {r['multiplier']:.12f} | "
        f"{np.cos(2 * alpha) ** 2:.12f} |\n"
        for r, c in zip(rows, closed))
    return Outcome(rows, {"rimless_wheel": fig}, checks, table)
