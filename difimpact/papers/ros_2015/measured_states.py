"""The measured heel strikes through Ros et al. (2015)'s impact map: the pre-impact states of the lab trials
(:mod:`.measured_data`) put in the seven-link human (Dumas-scaled) and in the treadmill subject's OpenSim model, the
impact of each blocking case, one row per state, model and case; and the note that weighs the heel-strike
experiments' ✗ against them. The experiment that reports them is :mod:`.measured_heel_strikes`."""

import functools
import re

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from difimpact import ImpactResults, SevenLinkHuman, checks_as_nan, impact
from difimpact._exported import stored

from . import measured_data as gait_data
from .measured_data import PRE_IMPACT
from .paper import CASES, OMEGA0_REF, OUTCOMES

BATCH = 8  # states per compiled call (padded)
NO_IMPACT = "no impact: the model's heel is not approaching the ground"
LUMBAR = "lumbar_extension"  # blocked in every case of the OpenSim model: its torso and pelvis as one HAT
_JOINTS = tuple(dict.fromkeys(c for case in CASES.values() for c in case))  # the seven-link joints cases block


@functools.cache
def _impacts(joints: tuple[str, ...], heel: str, trailing: str):
    """ξ, T⁻ and the trailing-foot outcome (index into ``OUTCOMES``) for a batch of states of one model, with
    the `joints` blocked where the flags ``active`` say (one program for every blocking case)."""

    def one(model, q, qdot, active):
        with checks_as_nan():  # a program JAX's compilation cache keeps (no host callback)
            sol = impact(model, q, qdot, stick=(heel,), blocked=joints, blocked_active=dict(zip(joints, active)),
                         unilateral=(trailing,), unilateral_tangent="always", throw=False)
        outcome = jnp.where(sol.result == ImpactResults.successful, jnp.where(sol.lifted_off[0], 1, 0),
                            jnp.where(sol.result == ImpactResults.no_consistent_set, 2, 3))
        return sol.xi, sol.T_minus, outcome

    # the closure's choices in the stored program's name: its key holds the call's arguments only
    return stored("ros_measured_impacts-" + "-".join((heel, trailing, *joints)))(
        eqx.filter_jit(eqx.filter_vmap(one, in_axes=(None, 0, 0, None))))


@stored("ros_point_velocities")
@eqx.filter_jit
def _velocities(model, q, qdot, points: tuple[str, ...]):
    """Velocities [m/s] of the named `points` of `model` in a batch of states ``q, q̇``: ``(states, points, 2)``,
    one compiled program per model and set of points (kept by JAX's compilation cache: the checks as NaN)."""
    with checks_as_nan():
        return jax.vmap(lambda a, b: jnp.stack([model.point_velocity(a, b, p) for p in points]))(q, qdot)


def _kinematics(model, states, heel, trailing) -> np.ndarray:
    """The `heel` and `trailing` point velocities in each state, ``(states, 2, 2)`` (NumPy)."""
    if not states:
        return np.zeros((0, 2, 2))
    q, qdot = (jnp.stack([s[k] for s in states]) for k in (0, 1))
    return np.asarray(_velocities(model, q, qdot, (heel, trailing)))


def _run(model, states, velocities, joints, blocked, heel, trailing):
    """ξ, T⁻ and the outcome index of each state with the joints `blocked` (of `joints`, the joints any case
    blocks); a state whose heel is not approaching the ground (no impact there: ``velocities[i, 0, 1] ≥ 0``, the
    heel's of :func:`_kinematics`) gets NaN and outcome ``len(OUTCOMES)`` (:data:`NO_IMPACT`)."""
    colliding = [i for i in range(len(states)) if velocities[i, 0, 1] < 0]
    out = [np.full(len(states), np.nan), np.full(len(states), np.nan), np.full(len(states), len(OUTCOMES))]
    if not colliding:
        return out
    q, qdot = (jnp.stack([states[i][k] for i in colliding]) for k in (0, 1))
    pad = -len(colliding) % BATCH
    q, qdot = (jnp.concatenate([a, jnp.repeat(a[-1:], pad, axis=0)]) for a in (q, qdot))
    active = jnp.asarray([c in blocked for c in joints])
    for target, value in zip(out, _impacts(joints, heel, trailing)(model, q, qdot, active)):
        target[colliding] = np.asarray(value)[:len(colliding)]
    return out


@functools.cache
def _measured_rows() -> tuple[dict, ...]:
    """The seven-link rows of every trial and blocking case (computed once per process: Ros et al. 2015's experiments
    read them for their notes, :func:`heelstrike_measured` for its rows)."""
    return tuple(_seven_link(tuple(gait_data.TRIALS), tuple(CASES), lambda it, **_: it))


def _seven_link(trials, cases, progress):
    """Rows of the seven-link human in every measured pre-impact state, and in Ros et al. 2015's default state."""
    rows = []
    default = SevenLinkHuman()
    groups = [("default", None, default, [default.heel_strike_state(OMEGA0_REF)])]
    for trial in trials:
        subject = gait_data.subjects()[trial]
        human = SevenLinkHuman(subject.mass, subject.stature)
        frames = [fr for fr in gait_data.frames(trial) if fr.rel_frame in PRE_IMPACT]
        groups.append((trial, frames, human, [gait_data.seven_link_state(human, fr, subject) for fr in frames]))
    for trial, frames, human, states in progress(groups, desc="seven-link states"):
        velocities = _kinematics(human, states, "CAL_R", "MH_L")
        for name in cases:
            xi, t_minus, outcome = _run(human, states, velocities, _JOINTS, CASES[name], "CAL_R", "MH_L")
            for i, (q, qdot) in enumerate(states):
                fr = None if frames is None else frames[i]
                rows.append(_row(trial, fr, "seven-link", name, xi[i], t_minus[i], outcome[i]) | _model_kinematics(
                    velocities[i], q, fr, lambda q: -np.degrees(float(q[8]))))
    return rows


def _model_kinematics(velocity, q, fr, dorsiflexion) -> dict:
    """The model's heel velocity and trailing-MH speed in the state (`velocity`: the rows of
    :func:`_kinematics`), and how far the trailing ankle solved to put the MH on the ground is from the measured
    one (``dorsiflexion(q)`` in degrees)."""
    cal, mh = velocity
    gap = np.nan if fr is None else float(dorsiflexion(q) - fr.values["ankle_dorsi_trail"])
    return {"cal_vx_model": float(cal[0]), "mh_speed_model": float(np.linalg.norm(mh)), "trail_ankle_gap": gap}


def _osim(cases, progress):
    """Rows of the treadmill subject's own model (knee centres held at the trial's mean knee angles)."""
    frames = [fr for fr in gait_data.frames("treadmill") if fr.rel_frame in PRE_IMPACT]
    knee = {s: -np.radians(np.mean([fr.values[f"knee_flex_{'lead' if fr.values['lead'] == s else 'trail'}"]
                                    for fr in frames])) for s in "RL"}
    model = gait_data.osim_model(knee["R"], knee["L"])
    rows = []
    for lead in progress("RL", desc="OpenSim model"):
        subset = [fr for fr in frames if fr.values["lead"] == lead]
        if not subset:
            continue
        s, t = lead.lower(), "l" if lead == "R" else "r"
        states = [gait_data.osim_state(model, fr) for fr in subset]
        osim = {"theta_A_R": f"ankle_angle_{s}", "theta_K_R": f"knee_angle_{s}", "theta_H_R": f"hip_flexion_{s}"}
        joints = tuple(osim[c] for c in _JOINTS) + (LUMBAR,)
        heel, trailing = f"CAL_{lead}", f"MH_{t.upper()}"
        velocities = _kinematics(model, states, heel, trailing)
        ankle = model.coordinate_names.index(f"ankle_angle_{t}")
        for name in cases:
            blocked = tuple(osim[c] for c in CASES[name]) + (LUMBAR,)
            xi, t_minus, outcome = _run(model, states, velocities, joints, blocked, heel, trailing)
            rows += [_row("treadmill", fr, "OpenSim gait10dof18musc", name, xi[i], t_minus[i], outcome[i])
                     | _model_kinematics(velocities[i], states[i][0], fr, lambda q: np.degrees(float(q[ankle])))
                     for i, fr in enumerate(subset)]
    return rows, knee


def _row(trial, fr, model, blocked, xi, t_minus, outcome) -> dict:
    v = {} if fr is None else fr.values
    return {"trial": trial, "event": "Ros et al. 2015 default, ω0 = −1 rad/s" if fr is None else fr.event,
            "rel_frame": 0 if fr is None else fr.rel_frame, "model": model, "blocked": blocked, "xi": float(xi),
            "T_minus": float(t_minus), "trailing_foot": (OUTCOMES + (NO_IMPACT,))[int(outcome)],
            **{k: float(v.get(c, np.nan)) for k, c in (
                ("knee_rate_trail", "d_knee_flex_trail"), ("heel_vx_lead", "heel_vx_lead_rel_ground_mps"),
                ("mth_vx_trail", "mth_vx_trail_rel_ground_mps"), ("mth_vy_trail", "mth_vy_trail_mps"))}}


def _xi(rows, model, case):
    """The finite ξ of the measured states (a state without an impact has none)."""
    xi = np.array([r["xi"] for r in rows if r["model"] == model and r["blocked"] == case and r["trial"] != "default"])
    return xi[np.isfinite(xi)]


_CASE_WORDS = (("ankle+knee+hip", ("ankle+knee+hip", "Ankle, knee and hip")),
               ("ankle+knee", ("ankle+knee", "Ankle and knee")), ("ankle", ("ankle", "Ankle")),
               ("none", ("Nothing blocked",)))


def measured_note(checks, quick: bool) -> str:
    """For Ros et al. 2015's experiments: for each ✗, whether the measured pre-impact states (seven-link human,
    Dumas-scaled, frames −2 and −1 of every trial) move our value toward the paper's. A level (a percentage in
    both the paper's and our column) is compared with the measured states' median ξ of its blocking case; the
    trailing foot with the measured outcomes; other statements are not tested by single measured states."""
    failed = [c for c in checks if not c.ok]
    if not failed:
        return ""
    if quick:
        return "Measured postures: run without `--quick` for their effect on each ✗ (`heelstrike-measured`)."
    rows = [r for r in _measured_rows() if r["trial"] != "default"]
    lines = ["**Each ✗ against the measured heel strikes** (`heelstrike-measured`; the seven-link human in the "
             "measured pre-impact states of a treadmill and an overground trial and Winter's curves):", ""]
    for c in failed:
        lines.append(f"- {c.statement}: " + _note(c, rows))
    return "\n".join(lines)


def _note(check, rows) -> str:
    if "trailing foot" in check.statement:
        outs = [r["trailing_foot"] for r in rows]
        return "measured states: " + ", ".join(f"{o} {outs.count(o)}/{len(outs)}" for o in dict.fromkeys(outs))
    case = next((k for k, words in _CASE_WORDS if check.statement.startswith(words)), None)
    paper, ours = (re.search(r"(\d+(?:\.\d+)?) %", text) for text in (check.paper, check.ours))
    if case is None or paper is None or ours is None or "/" in check.paper:
        return "not a level of ξ; single measured states (one push-off each) do not test it."
    xi = 100 * _xi(rows, "seven-link", case)
    median, p, o = float(np.median(xi)), float(paper.group(1)), float(ours.group(1))
    if (median - o) * (p - o) <= 0:
        move = "away from the paper's"
    elif abs(median - p) < abs(o - p):
        move = "toward the paper's, closer to it"
    else:
        move = "toward the paper's and past it"
    return f"measured ξ ({case} blocked) median {median:.1f} % ({xi.min():.1f} … {xi.max():.1f}) against our " \
           f"{o:g} % and the paper's {p:g} %: the measured postures move the value {move}."
