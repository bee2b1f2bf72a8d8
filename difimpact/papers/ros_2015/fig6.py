"""Ros et al. 2015, Fig. 6 (§4.2): regulating the heel-strike dissipation with the torso angle; the heel strikes
and shared checks are those of :mod:`.heel_strikes`."""

import numpy as np

from ..experiment import Outcome, check_that, experiment
from ..plotting import line_panels
from .heel_strikes import UNITS, _band, _n, _pct, _rows, _sweep, _trailing_check
from .measured_states import measured_note
from .paper import CASES, DTHETA_RANGE, OMEGA0_REF, STYLES


def _below(statement, bound_pct, ours, source):
    """``ours`` (a fraction) exceeds the paper's lower bound (a percentage rounded to the percent)."""
    return check_that(statement, f"> {bound_pct:g} % ({source})", _pct(ours), 100 * ours >= bound_pct - 0.5)


def _ratio_check(statement, lo_pct, hi_pct, xi, source):
    """min/max of ξ over the range against the paper's ``lo/hi``, with the interval their rounding to the
    percent allows."""
    lo, hi = (lo_pct - 0.5) / (hi_pct + 0.5), (lo_pct + 0.5) / (hi_pct - 0.5)
    ours = float(xi.min() / xi.max())
    return check_that(statement, f"{lo_pct:g}/{hi_pct:g} % → min/max ∈ [{lo:.2f}, {hi:.2f}] ({source})",
                      f"{_pct(xi.min())}/{_pct(xi.max())} → {ours:.2f}", lo <= ours <= hi)


def _torso_sweeps(quick, progress, sweep=_sweep, omega0=OMEGA0_REF):
    """Fig. 6's sweeps: Δθ [deg] over :data:`DTHETA_RANGE` at `omega0`, the blocked cases of :data:`CASES`.
    Returns ``(Δθ, {case: quantities})``; `sweep` is :func:`._sweep` or one around another state."""
    cases = {k: v for k, v in CASES.items() if k != "none"}
    dtheta = np.linspace(*DTHETA_RANGE, _n(quick))
    return dtheta, {name: sweep(b, omega0, np.radians(dtheta), 0.0)
                    for name, b in progress(cases.items(), desc="blocking cases")}


def _torso_checks(dtheta, res) -> list:
    """Ros et al. 2015, §4.2 (Fig. 6): the statements on the torso sweep ``res`` of :func:`_torso_sweeps`."""
    xi = {k: r["xi"] for k, r in res.items()}
    qdot = res["ankle"]["qdot"]
    ref = qdot[np.argmin(abs(dtheta))]
    dq = float(np.max(np.linalg.norm(qdot - ref, axis=1)) / np.linalg.norm(ref))
    akh, ak = xi["ankle+knee+hip"], xi["ankle+knee"]
    return [
        _below("Ankle blocked: the dissipation can be greater than 13 %", 13, xi["ankle"].max(), "§4.2 conclusion 1"),
        _band("Ankle blocked: the torso regulates it down to 10 %", 10, xi["ankle"].min(), 0.5, "§4.2 conclusion 1"),
        _ratio_check("Ankle blocked: the torso angle regulates ξ modestly (min/max over the range)", 10, 13,
                     xi["ankle"], "§4.2 conclusion 1"),
        _below("Ankle and knee blocked: greater than 19 %", 19, ak.max(), "§4.2 conclusion 2"),
        _band("Ankle and knee blocked: down to 14 %", 14, ak.min(), 0.5, "§4.2 conclusion 2"),
        _ratio_check("Ankle and knee blocked: modest regulation (min/max over the range)", 14, 19, ak,
                     "§4.2 conclusion 2"),
        _band("Ankle, knee and hip blocked: the dissipation is 19 %", 19, akh.mean(), 0.5,
              "§4.2 conclusion 3; ours: mean over the range"),
        check_that("Ankle, knee and hip blocked: the torso angle has no appreciable effect", "§4.2 conclusion 3 "
                   "(taken as a spread below 1 point, the paper's resolution)",
                   f"spread {100 * np.ptp(akh):.2f} points (ankle+knee: {100 * np.ptp(ak):.2f})",
                   100 * np.ptp(akh) < 1.0),
        check_that("…and equals the maximum of the ankle+knee case", "§4.2 conclusion 3 (to 1 point)",
                   f"{_pct(akh.mean())} vs max {_pct(ak.max())}", abs(100 * (akh.mean() - ak.max())) <= 1.0),
        check_that("The torso angle does not change the pre-impact velocity", "§4.2 (to 1 %, the figures' "
                   "resolution)", f"q̇⁻ changes by {dq:.2%} over Δθ (eq. 3 re-solved at each θ)", dq <= 0.01),
        _trailing_check(res, list(res)),
    ]


@experiment("heelstrike-torso", "002", "Fig. 6",
            "Seven-link human: ξ vs Torso-Pelvis angle deviation Δθ at ω0 = −1 rad/s, leading ankle / ankle+knee / "
            "ankle+knee+hip blocked.",
            units="dtheta_deg [deg] (Δθ = θ − θ_n, > 0 leaning backward), omega0 [rad/s], " + UNITS)
def heelstrike_torso(quick, progress):
    dtheta, res = _torso_sweeps(quick, progress)
    cases = list(res)
    rows = _rows("dtheta_deg", dtheta, cases, res, {"omega0": OMEGA0_REF})
    xi = {k: r["xi"] for k, r in res.items()}
    checks = _torso_checks(dtheta, res)
    figures = {"fig6_xi": line_panels(
        dtheta, [100 * np.stack([xi[k] for k in cases])], [f"{k} blocked" for k in cases],
        "torso-pelvis angle deviation Δθ = θ − θ_n [deg] (< 0: forward lean)", ["energy index ξ [%]"],
        f"Ros et al. 2015, Fig. 6 — heel strike over the torso angle, impulsive map, ω0 = {OMEGA0_REF:g} rad/s",
        note="θ_n: the torso angle of the reference posture (upright); ξ = (T⁻ − T⁺)/T⁻ (eq. 23)",
        styles=dict(enumerate(STYLES[k] for k in cases)))}
    return Outcome(rows, figures, checks, measured_note(checks, quick))
