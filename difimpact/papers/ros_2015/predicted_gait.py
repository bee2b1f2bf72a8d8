"""The seven-link human walking (Ros, Font-Llagunes, Plaza & Kövecses 2015's model): the predicted step of least
effort per distance at a given speed (:func:`difimpact._human_gait.human_gait`), its heel strike read off the
dynamically consistent gait, and Ros et al.'s joint blocking evaluated there."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from difimpact import SevenLinkHuman, checks_as_nan, impact
from difimpact._human_gait import gait as hg
from difimpact._human_gait import phases as ph
from difimpact._exported import stored
from difimpact._human_gait.replay import close, diffrax_integrate

from ..experiment import Outcome, check_that, experiment
from . import gait_report as report
from . import paper as published
from .heel_strikes import _active, paper_human
from .measured_states import _measured_rows, _xi

SPEED = 1.3  # m/s: Winter's normal cadence walks at 1.325 m/s
# The coarse mesh finds the optimum from the guess; the fine one, warm-started from it, is one on which the optimal
# torques close into a periodic step (docs/human-gait.md, "Which meshes close").
SEGMENTS, QUICK_SEGMENTS = (8, 6, 4, 3), (3, 2, 4, 3)
STARTS = (0.7, 0.6, 0.8)  # guessed step lengths [m]: the several starts of the full run
CASES = ("none", "ankle", "ankle+knee", "ankle+knee+hip")
KEYS = {"none": "xi_none", "ankle": "xi_ankle", "ankle+knee": "xi_ankle_knee", "ankle+knee+hip": "xi_ankle_knee_hip"}
BALANCE_RTOL = 1e-8
OPTIONS = hg.OPTIONS


def mirrored_strike(gait, q=None, qd=None) -> tuple[jax.Array, jax.Array]:
    """The pre-impact state (the gait's last, or `q`, `qd`: the closed step's) with the legs exchanged, so that
    the right leg leads as in Ros et al.'s figures."""
    q = gait.q[-1] if q is None else jnp.asarray(q)
    qd = gait.qdot[-1] if qd is None else jnp.asarray(qd)
    return ph.swap(q), ph.swap(qd)


@functools.cache
def _blocked_impact():
    human = paper_human()

    def one(q, qd, active):  # heel_strikes._impact, with the collocation's drift of the contacts (< 1 mm) tolerated
        rates = {c: 0.0 for c in published.JOINTS}
        with checks_as_nan():  # a program JAX's compilation cache keeps (no host callback)
            return impact(human, q, qd, stick=("CAL_R",), blocked=rates,
                          blocked_active=dict(zip(published.JOINTS, active)), unilateral=("MH_L",),
                          unilateral_tangent="always", ground_tol=1e-3, throw=False)

    return stored("ros_blocked_impact")(jax.jit(one))


def blocking(gait, q=None, qd=None) -> dict:
    """ξ at the gait's own heel strike per blocking case of Ros et al. (§4, eqs. 10–12: the leading leg's joints
    held at rest after the impact), the trailing foot's outcome (library's unilateral enumeration, eq. 9) and ω0
    (the trailing ankle's pre-impact rate, counter-clockwise as in the paper); at `q`, `qd` (the closed step's
    pre-impact state) if given."""
    q, qd = mirrored_strike(gait, q, qd)
    out = {}
    for case in CASES:
        sol = _blocked_impact()(q, qd, jnp.asarray(_active(published.CASES[case])))
        out[case] = (float(sol.xi), "lifts" if bool(sol.lifted_off[0]) else "stays", float(sol.impulses[-2]))
        if case == "none":
            p = np.asarray(sol.impulses)
            impulses = {"CAL_R": (p[1], p[0]), "MH_L": (p[-1], p[-2])}  # (P_t, P_n) as world (x, y)
    return {"xi": {c: v[0] for c, v in out.items()}, "trailing": {c: v[1] for c, v in out.items()},
            "omega0": float(-qd[8]), "Pn_trailing": {c: v[2] for c, v in out.items()}, "impulses": impulses,
            "q_minus": np.asarray(q), "qdot_minus": np.asarray(qd)}


def solve(segments, speed=SPEED, step_length=0.7, guess=None):
    """The predicted step on `segments` per phase, from the guess at `step_length` or warm-started from the gait
    `guess` (:func:`~difimpact._human_gait.gait.resample`)."""
    human = paper_human()
    problem = hg.make_problem(human, speed, segments=segments, method="hermite-simpson", friction=0.8,
                              torque_max=300.0, duration_bounds=hg.DURATIONS)
    z0 = hg.initial_guess(problem, step_length) if guess is None else hg.resample(guess, problem)
    return hg.human_gait(human, speed, segments=segments, guess=z0, options=OPTIONS, throw=False)


def refined(speed=SPEED, step_length=0.7):
    """The coarse optimum from the guess, then the closing mesh's warm-started from it: ``(coarse, fine)``."""
    coarse = solve(QUICK_SEGMENTS, speed, step_length)
    return coarse, solve(SEGMENTS, speed, guess=coarse)


def node_rows(gait) -> list[dict]:
    names = SevenLinkHuman.coordinate_names
    rows = []
    for i in range(gait.t.shape[0]):
        row = {"kind": "node", "phase": ph.PHASES[int(gait.phase[i])].name, "t": float(gait.t[i])}
        row.update({n: float(gait.q[i, j]) for j, n in enumerate(names)})
        row.update({f"{n}_dot": float(gait.qdot[i, j]) for j, n in enumerate(names)})
        row.update({f"u_{n[6:]}": float(gait.u[i, j]) for j, n in enumerate(ph.JOINTS)})
        row.update({"Fx_R": float(gait.grf[i, 0, 0]), "Fy_R": float(gait.grf[i, 0, 1]),
                    "Fx_L": float(gait.grf[i, 1, 0]), "Fy_L": float(gait.grf[i, 1, 1])})
        rows.append(row)
    return rows


def summary_row(gait, ros) -> dict:
    row = {"kind": "summary", "speed": float(gait.speed), "step_length": float(gait.step_length),
           "step_time": float(gait.step_time), "cost_of_transport": float(gait.cost_of_transport),
           "cost": float(gait.cost)}
    row.update({KEYS[c]: ros["xi"][c] for c in CASES})
    row.update({"trailing_foot": ros["trailing"]["none"], "omega0": ros["omega0"]})
    return row


register = experiment("gait-human-predicted", "002", "§4 (ξ at heel strike per blocking case), in a predicted gait",
                      "The seven-link human (75 kg, 1.77 m, Dumas et al. 2007) walking at 1.3 m/s: the symmetric step "
                      "of least (1/L)∫Σu² dt (torques at hips, knees, ankles; free step length and phase durations; "
                      "phases double support, heel rocker, flat foot, forefoot rocker, heel strike through the exact "
                      "impact map), "
                      f"Hermite–Simpson {QUICK_SEGMENTS} segments per phase from a guess, then {SEGMENTS} warm-started "
                      f"(one start "
                      "with --quick, three without); node rows and a "
                      "summary row; Ros et al.'s blocking cases at the gait's own heel strike.",
                      units="t [s], coordinates [m, rad] (clockwise), rates [m/s, rad/s], u_* [N m], F* [N] on the "
                            "feet; speed [m/s], step_length [m], step_time [s], cost_of_transport [J/(kg m)] (positive "
                            "actuator work), cost [N² m s], xi_* [-], omega0 [rad/s] (counter-clockwise, as in the "
                            "paper)")


def gait_human_predicted(quick, progress):
    starts = STARTS[:1] if quick else STARTS
    runs = [refined(SPEED, s) for s in progress(starts, desc="starts")]
    ok = [f for _, f in runs if int(f.result._value) == 0]
    best = min(ok or [f for _, f in runs], key=lambda g: float(g.cost))
    return outcome(best, "predicted gait", quick, _checks_of([g for run in runs for g in run]), "gait_human_predicted")


def outcome(gait, label, quick, solved, figure, extra=None) -> Outcome:
    """The report of a human gait (predicted or tracked): node rows, the summary row (with `extra`), the
    statement rows; its exact closure, energy balance and heel strike (:func:`blocking` at the closed step's
    pre-impact state), the comparison with Winter's cycle and the figures. `solved`: the solve's checks."""
    _, _, rep = close(gait, diffrax_integrate, throw=False)  # the exactly periodic step of the optimal torques
    closed = rep["result"] == "successful"  # else ξ at the collocated heel strike, and the checks say why
    ros = blocking(gait, rep["q_minus"], rep["qdot_minus"]) if closed else blocking(gait)
    meas = report.measures(gait)
    row = summary_row(gait, ros)
    row.update(meas, closure=rep["closure"], orbit_distance=rep["corrections"][0], **(extra or {}))
    st_rows, st_text, _ = report.statements(ros["q_minus"], ros["qdot_minus"], label, quick)
    checks = solved + _closure_checks(rep) + ros_checks(ros)
    figures = {figure: report.versus_measured(gait, label),
               f"{figure}_sticks": report.sticks_and_strike(gait, paper_human(), ros["q_minus"], ros["impulses"],
                                                             f"heel strike of the {label} (right leg leading)")}
    text = _table(gait, ros, meas, label, closed) + "\n\n" + st_text
    return Outcome(node_rows(gait) + [row] + st_rows, figures, checks, text)


def _checks_of(gaits):
    return [check_that("The optimal step is found (interior point converged) from every start", "—",
                       ", ".join(f"{float(g.cost):.1f} ({'ok' if int(g.result._value) == 0 else 'failed'})"
                                 for g in gaits), all(int(g.result._value) == 0 for g in gaits))]


def _closure_checks(rep):
    balance = abs(rep["work"] + rep["contact_work"] - rep["energy_change"]) / abs(rep["work"])
    periodic = abs(rep["work"] + rep["contact_work"] - rep["impact_loss"]) / abs(rep["work"])
    return [
        check_that("Integrated in one shot under its torques from the start found by multiple shooting, the step "
                   "closes through the heel strike (max-norm of the state)", "a periodic gait, within 1e-5",
                   f"{rep['result']}: {rep['closure']:.1e} (Newton residual {rep['newton'][-1]:.0e}); the exact "
                   f"orbit is {rep['corrections'][0]:.2g} (max-norm, rad/s) from the collocated points, durations "
                   f"{rep['corrections'][1]:.1e} s: the mesh's error",
                   rep["result"] == "successful" and rep["closure"] < 1e-5),
        check_that("Energy balance of the integrated step: actuator + contact work = change of T + V "
                   f"(to {BALANCE_RTOL:g})", "work–energy theorem", f"{balance:.1e}; contact work "
                   f"{rep['contact_work']:.2e} J, actuator work {rep['work']:.3f} J, impact loss "
                   f"{rep['impact_loss']:.3f} J", balance < BALANCE_RTOL),
        check_that("Over the periodic step the actuators' work equals the heel strike's loss (to 1e-6)",
                   "Ros et al. 2015, eq. 23; T + V returns to its start only as closely as the state (closure "
                   "above): the balance itself is the check before", f"relative difference {periodic:.1e}",
                   periodic < 1e-6),
    ]


def ros_checks(ros) -> list:
    """Ros et al.'s blocking order and the trailing foot's behaviour at a gait's heel strike (`ros`: from
    :func:`blocking`), as checks; shared by the predicted and the tracked gait."""
    xi, paper = ros["xi"], published.PAPER_AT_REF_PCT
    return [
        check_that("Blocking more joints of the leading leg raises ξ at heel strike (ankle < ankle+knee < "
                   "ankle+knee+hip)", f"Ros et al. §4.3: {paper['ankle']}/{paper['ankle+knee']}/"
                   f"{paper['ankle+knee+hip']} % at ω0 = −1 rad/s",
                   " / ".join(f"{100 * xi[c]:.1f} %" for c in CASES[1:]) + f" at the gait's ω0 = "
                   f"{ros['omega0']:+.2f} rad/s (none: {100 * xi['none']:.1f} %)",
                   xi["ankle"] < xi["ankle+knee"] < xi["ankle+knee+hip"]),
        check_that("The trailing foot stays on the ground at heel strike (no blocking)", "Ros et al. eq. 9, "
                   "observed in normal gait", f"{ros['trailing']['none']} (its normal impulse "
                   f"{ros['Pn_trailing']['none']:.3f} N s by the unilateral enumeration)",
                   ros["trailing"]["none"] == "stays"),
    ]


def _table(gait, ros, meas, label, closed):
    paper, rows = published.PAPER_AT_REF_PCT, _measured_rows()
    measured = {c: 100 * _xi(rows, "seven-link", c) for c in CASES}
    head = (f"| case | ξ ({label}) | Ros et al. (ω0 = −1 rad/s) | measured heel strikes: median (range) | trailing "
            "foot | P_n trailing [N s] |\n|---|---|---|---|---|---|\n")
    lines = [f"| {c} | {100 * ros['xi'][c]:.2f} % | {f'{paper[c]} %' if c in paper else '—'} | "
             f"{np.median(measured[c]):.1f} % ({measured[c].min():.1f} … {measured[c].max():.1f}) | "
             f"{ros['trailing'][c]} | {ros['Pn_trailing'][c]:.3f} |\n" for c in CASES]
    d = np.asarray(gait.durations)
    where = "closed step's" if closed else "collocated step's (the step did not close: see the checks)"
    text = (f"\n\nξ at the {where} heel strike, ω0 = {ros['omega0']:+.2f} rad/s; ξ at measured heel-strike "
            "states: `heelstrike-measured` (seven-link model, OpenSim trials and Winter). Step "
            f"{float(gait.step_length):.3f} m in {float(gait.step_time):.3f} s; phases double, heel, flat, toe: "
            f"{', '.join(f'{x:.3f}' for x in d)} s; cost {float(gait.cost):.1f}; cost of transport "
            f"{float(gait.cost_of_transport):.3f} J/(kg m); iterations {int(gait.iterations)}.\n\n"
            "Against Winter's normal cadence (mean ± SD): RMS " + ", ".join(
                f"{j} {meas[f'rms_{j}']:.1f}° ({100 * meas[f'within_{j}']:.0f} % of the cycle within ±1 SD)"
                for j in report.JOINTS) + f"; vertical force {meas['Fy_peak1_model']:.2f} / "
            f"{meas['Fy_trough_model']:.2f} / {meas['Fy_peak2_model']:.2f} BW (peak, trough, peak; measured "
            f"{meas['Fy_peak1_measured']:.2f} / {meas['Fy_trough_measured']:.2f} / {meas['Fy_peak2_measured']:.2f}).\n")
    return head + "".join(lines) + text


gait_human_predicted = register(gait_human_predicted)
