"""Heel strikes measured in the lab, run through the analysis of Ros et al. (2015): the energy index ξ
(eq. 23) with nothing, the ankle, ankle+knee, ankle+knee+hip of the leading leg blocked, and the trailing foot's
lift-off, for the seven-link human (Dumas et al. 2007, scaled to each subject) put in each measured pre-impact
state, and for the treadmill subject's own OpenSim model imported with :func:`~difimpact.from_osim`; beside the
paper's values and the library's default posture; and Ros et al. 2015's kinematic assumptions (eq. 3) tested against
the data. The impact is Ros et al. 2015's (see :mod:`.heel_strikes`): the leading heel sticks, the trailing MH is
unilateral and does not slide. The states and their impacts are computed in :mod:`.measured_states`.
"""

import numpy as np

from ..experiment import Outcome, check_that, experiment
from . import measured_data as gait_data
from .measured_report import figure_assumptions, figure_xi, markdown
from .measured_states import NO_IMPACT, _measured_rows, _osim, _seven_link, _xi
from .paper import CASES, PAPER_AT_REF_PCT

UNITS = ("rel_frame [frames before the 20 N crossing: 60 Hz treadmill, 10 ms overground, 2 % of the cycle Winter], xi "
         "[-], T_minus [J], knee_rate_trail [deg/s], heel_vx_lead, mth_vx_trail, mth_vy_trail, cal_vx_model, "
         "mh_speed_model [m/s], trail_ankle_gap [deg] (solved − measured trailing dorsiflexion)")


def _assumption_checks(trials) -> list:
    """Ros et al. 2015's eq. 3 against the frames −2…0 of every measured heel strike."""
    frames = [fr for t in trials for fr in gait_data.frames(t) if fr.rel_frame in (-2, -1, 0)]
    col = lambda c: np.array([fr.values[c] for fr in frames])  # noqa: E731
    knee, heel = col("d_knee_flex_trail"), col("heel_vx_lead_rel_ground_mps")
    mh = np.hypot(col("mth_vx_trail_rel_ground_mps"), col("mth_vy_trail_mps"))
    span = lambda a, fmt: f"{np.nanmin(a):{fmt}} … {np.nanmax(a):{fmt}}"  # noqa: E731
    where = f"frames −2…0 of {len({(fr.trial, fr.event) for fr in frames})} heel strikes"
    return [
        check_that("Trailing knee rate θ̇_K^L⁻ = 0 (Ros et al. 2015, eq. 3)", "0 °/s (taken as met within ± 10 °/s)",
                   f"{span(knee, '.0f')} °/s ({where}; flexing)", np.nanmax(np.abs(knee)) <= 10.0),
        check_that("Leading heel at rest horizontally, v_x(CAL^R)⁻ = 0 (eq. 3)",
                   "0 m/s (taken as met within ± 0.05 m/s)",
                   f"heel marker {span(heel, '.2f')} m/s relative to the ground ({where} with markers)",
                   np.nanmax(np.abs(heel)) <= 0.05),
        check_that("Trailing metatarsal heads at rest, v(MH^L)⁻ = 0 (eq. 3)", "0 m/s (within ± 0.05 m/s)",
                   f"toe-marker speed {span(mh, '.3f')} m/s ({where} with markers)", np.nanmax(mh) <= 0.05),
    ]


def _paper_checks(rows, cases) -> list:
    """Per blocked case: the paper's ξ at ω0 = −1 rad/s (§4.3) beside the measured states' and the default's,
    and whether the measured postures move our value toward the paper's."""
    checks = []
    for case in (c for c in cases if c in PAPER_AT_REF_PCT):
        paper = PAPER_AT_REF_PCT[case]
        default = 100 * next(r["xi"] for r in rows if r["trial"] == "default" and r["blocked"] == case)
        measured = 100 * _xi(rows, "seven-link", case)
        median = np.median(measured)
        if (median - default) * (paper - default) <= 0:
            move = "away from the paper's value"
        elif abs(median - paper) < abs(default - paper):
            move = "toward the paper's value, closer to it than the default"
        else:
            move = f"toward the paper's value and past it ({abs(median - paper):.1f} points beyond)"
        checks.append(check_that(
            f"{case} blocked: ξ at heel strike, measured pre-impact states (seven-link, Dumas-scaled)",
            f"≈ {paper} % at ω0 = −1 rad/s (§4.3; ± 0.5, rounding; compared with the median)",
            f"measured {measured.min():.1f} … {measured.max():.1f} % (median {median:.1f} %); default posture "
            f"{default:.1f} % ({'✓' if abs(default - paper) <= 0.5 else '✗'}): the measured states move ξ {move}",
            abs(median - paper) <= 0.5))
    outs = [r["trailing_foot"] for r in rows if r["trial"] != "default"]
    default = [r["blocked"] for r in rows if r["trial"] == "default" and r["trailing_foot"] != "stays"]
    checks.append(check_that("The trailing foot stays on the ground (footnote 4)", "§2.3: stays",
                             ", ".join(f"{o}: {outs.count(o)}/{len(outs)}" for o in dict.fromkeys(outs))
                             + f" (default posture: lifts with {', '.join(default) or 'no case'} blocked)",
                             all(o in ("stays", NO_IMPACT) for o in outs)))
    return checks


@experiment("heelstrike-measured", "002", "§4.3 values, eq. 3",
            "Measured heel strikes (treadmill, overground, Winter) through Ros et al. 2015's analysis: ξ with nothing "
            "/ ankle / ankle+knee / ankle+knee+hip blocked, trailing-foot lift-off; eq. 3 tested against the data.",
            units=UNITS)
def heelstrike_measured(quick, progress):
    trials = ("treadmill",) if quick else tuple(gait_data.TRIALS)
    cases = ("none", "ankle+knee+hip") if quick else tuple(CASES)
    rows = _seven_link(trials, cases, progress) if quick else [dict(r) for r in _measured_rows()]
    knee = None
    if not quick:
        osim_rows, knee = _osim(cases, progress)
        rows += osim_rows
    checks = _assumption_checks(trials) + _paper_checks(rows, cases)
    figures = {"xi": figure_xi(rows, cases), "assumptions": figure_assumptions(trials)}
    return Outcome(rows, figures, checks, markdown(rows, trials, cases, knee))
