"""Font-Llagunes et al. 2012, Fig. 3: the critical friction coefficient ``μ_c`` (eq. 8) over the leg angle ``q3``,
and the crutch walker at the reference state of §5 in place of the paper's Fig. 1."""

import math

import matplotlib.pyplot as plt
import numpy as np

from difimpact import Coulomb, frictional_impact

from ..experiment import Outcome, check_that, experiment
from ..plotting import model_figure
from .impacts import MUS, Q3_DEG, WALKER, _impulsive


@experiment("crutch-critical-friction", "000", "Fig. 3",
            "Crutch walker: critical friction coefficient μ_c (eq. 8) over the leg angle q3 for the seven postures of "
            "§5, with the friction coefficients μ = 0.5, 0.75, 1 chosen from it.",
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
    ax.set_title("Font-Llagunes et al. 2012, Fig. 3 — critical friction over the leg angle\n(q4 = 10°, q5 = 150°, q̇3⁻ "
                 "= 1 rad/s; "
                 "dotted red: the μ of §5)", fontsize=10)
    fig.tight_layout()
    return Outcome(rows, {"fig3_mu_c": fig, "model_crutch_walker": _model_figure()}, checks)


def _model_figure():
    """The crutch walker at the reference state of §5 (q3 = 12°, q̇5⁻ = −0.2 rad/s) with its impulse at μ = 0.75
    (Table 3's case), in place of the paper's Fig. 1."""
    q, qdot = WALKER.pre_impact_state(math.radians(12.0), -0.2)
    r = frictional_impact(WALKER, q, qdot, "Q", friction=Coulomb(0.75))
    return model_figure(WALKER, q, "Crutch walker (Font-Llagunes et al. 2012, Table 1) at q3⁻ = 12°, q4 = 10°, q5 = "
                                    "150°",
                        contacts=("Q",), arrows={"Q": (float(r.tangential_impulse), float(r.normal_impulse))},
                        note="arrow: impulse (P_t, P_n) of the tip Q, impulsive map, μ = 0.75, q̇5⁻ = −0.2 rad/s; P "
                             "feet, H hip, S shoulder, E elbow")
