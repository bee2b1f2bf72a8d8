"""Goswami, Thuilot & Espiau (1998): the compass biped's passive gait continued in the slope through its
period-doubling cascade. The walkers here are shared with :mod:`..font_llagunes_2010.round_feet`."""

import jax.numpy as jnp
import numpy as np
from jax.tree_util import Partial

from difimpact import CompassGait, continue_gait

from ..experiment import Outcome, check_that, experiment
from ..references import Reference

GOSWAMI = Reference(("A. Goswami", "B. Thuilot", "B. Espiau"),
                    "A study of the passive gait of a compass-like biped robot: symmetry and chaos",
                    "International Journal of Robotics Research 17(12), 1282–1301", 1998,
                    "10.1177/027836499801701202")
# The 3° gait of the a = b = 0.5 m, m_H/m = 2 walker, found by iterating the stride map from a rough guess.
X_3DEG = np.array([-0.271, 1.092, 0.715])


def _compass(base, varied, p):
    """The walker of both experiments at ``(slope, R) = base`` with the `varied` entry set to ``p``."""
    slope, R = jnp.where(varied, p, base)
    return CompassGait(l=1.0, m=5.0, b=0.5, m_H=10.0, R=R, g=9.81, slope=slope)


# Families in the slope (point feet) and in R (3°): arrays, not constants of the function, so that both
# continuations share one compilation.
SLOPE_WALKER = Partial(_compass, np.array([0.0, 0.0]), np.array([True, False]))


@experiment("gait-compass", "", "period-doubling cascade",
            "Compass biped (a = b = 0.5 m, m = 5 kg, m_H = 10 kg, l = 1 m) on slopes 0.5°…6°: the period-1 gait "
            "continued in slope, its multipliers, the period doubling and the period-2 branch.",
            units="slope_deg [deg], half_angle [rad], step_time [s], step_length [m], speed [m/s], rho [-]",
            reference=GOSWAMI)
def compass(quick, progress):
    lo, hi = np.radians(0.5), np.radians(6.0)
    step, bisections = (0.15, 6) if quick else (0.03, 20)  # arclength in (x, slope)
    up = continue_gait(SLOPE_WALKER, X_3DEG, np.radians(3.0), hi, step=step, max_step=step, bisections=bisections,
                       throw=False)
    down = continue_gait(SLOPE_WALKER, X_3DEG, np.radians(3.0), lo, step=step, max_step=step, bisections=bisections,
                         throw=False)
    points = down[:0:-1] + up
    rows = [dict(slope_deg=float(np.degrees(b.p)), period=b.period, kind=b.kind, half_angle=float(-b.x[0]),
                 step_time=b.step_time, step_length=b.step_length, speed=b.speed, rho=b.rho) for b in points]
    pd = [r for r in rows if r["kind"] == "period-doubling"]
    orbit1 = [r for r in rows if r["kind"] == "orbit" and r["period"] == 1]
    orbit2 = [r for r in rows if r["kind"] == "orbit" and r["period"] == 2]
    checks = [
        check_that("A stable period-1 gait exists at small slopes", "Goswami et al. 1998, §4",
                   f"ρ = {orbit1[0]['rho']:.3f} at {orbit1[0]['slope_deg']:.2f}°", orbit1[0]["rho"] < 1),
        check_that("The period-1 gait loses stability by period doubling as the slope grows", "Goswami et al. 1998, §5",
                   f"period doubling at {pd[0]['slope_deg']:.3f}°" if pd else "none found", bool(pd)),
        check_that("A period-2 gait follows the period doubling", "Goswami et al. 1998, Fig. 8",
                   f"{len(orbit2)} period-2 gaits from {orbit2[0]['slope_deg']:.2f}°" if orbit2 else "none",
                   bool(orbit2)),
    ]
    fig = _diagram(points)
    return Outcome(rows, {"bifurcation_diagram": fig}, checks)


def _diagram(points):
    """Every step's duration against the slope: one value per period-1 gait, two per period-2 gait."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for period, style in ((1, "k."), (2, "r.")):
        b = [b for b in points if b.period == period and b.kind == "orbit"]
        ax.plot([np.degrees(p.p) for p in b for _ in p.step_times], [t for p in b for t in p.step_times], style,
                label=f"period {period} ({'unstable' if period == 1 else 'each step'} beyond the doubling)")
    for b in points:
        if b.kind != "orbit":
            ax.axvline(np.degrees(b.p), color="0.6", lw=0.8, ls="--")
    ax.set_xlabel("slope γ [deg]")
    ax.set_ylabel("step period [s]")
    ax.set_title("Compass gait: period-1 and period-2 branches")
    ax.legend()
    return fig
