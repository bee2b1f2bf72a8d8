"""The seven-link human's tracking gait: the symmetric step at Winter's normal-cadence speed that follows his mean
joint angles and ground reaction forces within their SD (:mod:`difimpact._human_gait.tracking`), with no residual
forces; its heel strike replaces Murray's lost posture of Ros et al. (2015), and their joint blocking is evaluated
there."""

from difimpact import NLPResults
from difimpact._human_gait import gait as hg
from difimpact._human_gait import tracking as tr

from ..experiment import check_that, experiment
from .gait_report import JOINTS, measures, reference, two_peaks
from .predicted_gait import outcome, paper_human

# The coarse mesh as the predicted gait's; the fine one, warm-started from it, resolves this gait's long forefoot
# rocker, so that its torques close into a periodic step (docs/human-gait.md, "Which meshes close").
SEGMENTS, QUICK_SEGMENTS = (6, 2, 6, 12), (3, 2, 4, 3)
WITHIN = 0.9  # the acceptance goal: each joint angle within the measured ±1 SD over this fraction of the cycle
OPTIONS = hg.OPTIONS


def solve(segments, options=OPTIONS, guess=None):
    """The tracking gait on `segments` per phase, from the measured cycle's guess at the measured step length, or
    warm-started from the gait `guess` (:func:`~difimpact._human_gait.gait.resample`)."""
    human, ref = paper_human(), reference()
    target = tr.tracking_target(ref)
    problem = hg.make_problem(human, ref.speed, segments=segments, method="hermite-simpson", friction=0.8,
                              torque_max=300.0, duration_bounds=hg.DURATIONS, tracking=target)
    z0 = hg.initial_guess(problem, float(ref.step_length)) if guess is None else hg.resample(guess, problem)
    return hg.human_gait(human, ref.speed, segments=segments, guess=z0, tracking=target, options=options,
                         throw=False)


register = experiment("gait-human-tracking", "002", "§4 (ξ at heel strike per blocking case), in a tracked gait",
                      "The seven-link human (75 kg, 1.77 m, Dumas et al. 2007) tracking Winter's normal-cadence "
                      "cycle at its 1.325 m/s: the symmetric step of least effort per distance plus the squared errors "
                      "of the six joint angles over their SD, of the ground forces in body weights over their SD and "
                      "of the step time (free step length and phase durations; no residual forces), "
                      f"Hermite–Simpson {QUICK_SEGMENTS} segments per phase from the measured guess, then {SEGMENTS} "
                      "warm-started; node rows, a "
                      "summary row with the tracking measures; Ros et al.'s blocking cases at the gait's own heel "
                      "strike.",
                      units="t [s], coordinates [m, rad] (clockwise), rates [m/s, rad/s], u_* [N m], F* [N] on the "
                            "feet; speed [m/s], step_length [m], step_time [s], cost_of_transport [J/(kg m)] (positive "
                            "actuator work), cost, effort [N² m s], xi_* [-], omega0 [rad/s] (counter-clockwise, as in "
                            "the paper), rms_* [deg; Fx, Fy in body weights], within_* [fraction of the cycle], Fy_* "
                            "[body weights]")


def gait_human_tracking(quick, progress):
    coarse = solve(QUICK_SEGMENTS)
    (gait,) = [solve(s, guess=coarse) for s in progress([SEGMENTS], desc="solve")]
    return outcome(gait, "tracked gait", quick, _checks(gait, measures(gait)), "gait_human_tracking",
                   extra={"effort": float(gait.effort), "iterations": int(gait.iterations)})


def _checks(gait, row):
    worst = min(row[f"within_{j}"] for j in JOINTS)
    return [
        check_that("The tracking step is found (interior point converged)", "—",
                   f"{NLPResults[gait.result] or 'converged'} after {int(gait.iterations)} iterations, cost "
                   f"{float(gait.cost):.1f}",
                   int(gait.result._value) == 0),
        check_that(f"The joint angles lie within the measured mean ± 1 SD over ≥ {100 * WITHIN:.0f} % of the cycle",
                   "the acceptance goal (Winter's inter-subject SD)",
                   ", ".join(f"{j} {100 * row[f'within_{j}']:.1f} % (RMS {row[f'rms_{j}']:.1f}°)" for j in JOINTS),
                   worst >= WITHIN),
        check_that("The vertical ground force has the two peaks of walking (a mid-stance trough below both)",
                   f"measured: {row['Fy_peak1_measured']:.2f} / {row['Fy_trough_measured']:.2f} / "
                   f"{row['Fy_peak2_measured']:.2f} BW",
                   f"{row['Fy_peak1_model']:.2f} / {row['Fy_trough_model']:.2f} / {row['Fy_peak2_model']:.2f} BW",
                   two_peaks(row)),
    ]


gait_human_tracking = register(gait_human_tracking)
