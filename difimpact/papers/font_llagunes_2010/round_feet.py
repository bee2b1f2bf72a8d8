"""Round feet in a passive gait: Font-Llagunes et al. 2010's compass walker with foot radius ``R``, its passive
gait continued in ``R`` on a fixed slope from Goswami et al.'s point-footed gait (:mod:`..gait_classics.goswami_1998`):
the impact loss per distance is the slope's work, whatever ``R``."""

import numpy as np
from jax.tree_util import Partial

from difimpact import continue_gait

from ..experiment import Outcome, check_close, check_that, experiment
from ..gait_classics.goswami_1998 import X_3DEG, _compass
from ..plotting import line_panels

RADIUS_WALKER = Partial(_compass, np.array([np.radians(3.0), 0.0]), np.array([False, True]))


@experiment("gait-round-feet", "001", "round feet in a passive gait",
            "Font-Llagunes et al. 2010's compass walker (l = 1 m, m = 5 kg, b = 0.5 m, m_H = 10 kg) with foot radius R "
            "from 0 toward l on a 3° slope: the passive gait continued in R, its speed, impact loss per distance and "
            "stability.",
            units="R [m], slope_deg [deg], half_angle [rad], step_time [s], speed [m/s], loss_per_distance [J/m], rho "
                  "[-]")
def round_feet(quick, progress):
    branch = continue_gait(RADIUS_WALKER, X_3DEG, 0.0, 0.95, step=0.2 if quick else 0.05, switch=False,
                           throw=False)
    rows = [dict(R=b.p, slope_deg=3.0, half_angle=float(-b.x[0]), step_time=b.step_time, speed=b.speed,
                 loss_per_distance=b.energy_loss / b.step_length, rho=b.rho) for b in branch if b.kind == "orbit"]
    balance = max(abs(b.energy_loss / (20.0 * 9.81 * b.step_length * np.sin(np.radians(3.0))) - 1) for b in branch)
    checks = [
        check_close("Loss per distance of a passive gait = M g sin γ, whatever R (Font-Llagunes et al. 2010's impact "
                    "loss is paid by "
                    "the slope)", 20.0 * 9.81 * np.sin(np.radians(3.0)), rows[-1]["loss_per_distance"], 1e-8, "J/m"),
        check_that("Energy balance on every gait of the branch (1e-9)", "M g L sin γ",
                   f"largest relative error {balance:.1e}", balance < 1e-9),
    ]
    R = np.array([r["R"] for r in rows])
    fig = line_panels(R, [np.array([r["speed"] for r in rows]), np.array([r["rho"] for r in rows])], ["3° slope"],
                      "foot radius R [m]", ["speed [m/s]", "ρ (largest |multiplier|)"], "Round-footed passive gait")
    return Outcome(rows, {"round_feet": fig}, checks)
