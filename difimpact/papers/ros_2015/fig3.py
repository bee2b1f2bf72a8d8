"""Ros et al. 2015, Fig. 3 (§4.1): the energy index ξ over the trailing-ankle push-off ω0 for each joint-blocking
case, the paper's values beside ours, the sensitivity to the posture, and the human at heel strike in place of
the paper's Fig. 1. The heel strikes are those of :mod:`.heel_strikes`."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from difimpact import HeelStrikePosture, checks_as_nan, impact
from difimpact._exported import stored

from ..curves import monotone, require_finite
from ..experiment import Outcome, check_that, experiment
from ..plotting import line_panels, model_figure
from .heel_strikes import (
    _FAST_COMPILE,
    UNITS,
    _active,
    _band,
    _impact,
    _n,
    _pct,
    _rows,
    _sweep,
    _trailing_check,
    _trend,
    paper_human,
)
from .measured_states import measured_note
from .paper import CASES, OMEGA0_RANGE, OMEGA0_REF, PAPER_AT_REF_PCT, PAPER_MAX_PCT, SOURCES, STYLES


@functools.cache
def _posture_xi():
    """ξ at ω0 = −1 rad/s and the step length as functions of the six angles of :class:`HeelStrikePosture`
    (batched) and the blocked joints (flags of :data:`JOINTS`)."""
    human = paper_human()

    @checks_as_nan()  # the program holds no host callback: JAX's compilation cache keeps it
    def one(angles, active):
        q, qdot = human.heel_strike_state(OMEGA0_REF, posture=HeelStrikePosture(*angles))
        return _impact(human, q, qdot, 0.0, active).xi, human.step_length(q)

    return stored("ros_posture_xi", _FAST_COMPILE)(
        jax.jit(jax.vmap(one, in_axes=(0, None))))


def _posture_sensitivity(progress) -> str:
    """Markdown table: ξ and the step with each posture angle moved by ±5° (Ros et al. 2015 prints no posture; at
    ±10° the trailing foot no longer reaches the ground in some of them)."""
    base = np.array(HeelStrikePosture(), float)
    step = np.radians(5.0)
    angles = np.array([base] + [base + sign * step * e for e in np.eye(base.size) for sign in (-1, 1)])
    cases = ("ankle", "ankle+knee+hip")
    out = {k: [np.asarray(a) for a in _posture_xi()(jnp.asarray(angles), jnp.asarray(_active(CASES[k])))]
           for k in progress(cases, desc="posture")}
    xi, length = {k: v[0] for k, v in out.items()}, out[cases[0]][1]
    require_finite("the posture's step length (a heel-strike state of a moved posture)", {"step": length})
    lines = ["Sensitivity to the heel-strike posture (`HeelStrikePosture`; Ros et al. 2015's Fig. 1 is lost): ξ at "
             "ω0 = −1 rad/s and the step length with one angle moved by −5° / +5°, the others kept (so the step "
             "moves away from the sourced 0.79 m: most of the change in ξ goes with the step).", "",
             "| angle | step [m]: −5° / default / +5° | "
             + " | ".join(f"{k} blocked: −5° / default / +5°" for k in cases) + " |",
             "|---|---|---|---|"]
    for i, name in enumerate(HeelStrikePosture._fields):
        trio = lambda v, fmt: " / ".join(fmt(v[j]) for j in (1 + 2 * i, 0, 2 + 2 * i))  # noqa: E731
        cells = [trio(length, lambda v: f"{v:.3f}")] + [trio(xi[k], _pct) for k in cases]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _pushoff_sweeps(quick, progress, sweep=_sweep):
    """Fig. 3's sweeps: ω0 over :data:`OMEGA0_RANGE` at Δθ = 0, every case of :data:`CASES` totally blocked.
    Returns ``(ω0, {case: quantities})``; `sweep` is :func:`_sweep` or one around another state."""
    omega0 = np.linspace(*OMEGA0_RANGE, _n(quick))
    return omega0, {name: sweep(b, omega0, 0.0, 0.0) for name, b in progress(CASES.items(), desc="blocking cases")}


def _pushoff_checks(omega0, res) -> list:
    """Ros et al. 2015, §4.1 (Fig. 3): the statements on the push-off sweep ``res`` of :func:`_pushoff_sweeps`."""
    xi = {k: r["xi"] for k, r in res.items()}
    blocked = [k for k in CASES if k != "none"]
    reg = {k: (xi[k].max() - xi[k].min()) / xi[k].max() for k in blocked}
    T, vn = res["none"]["T_minus"], res["none"]["vn_heel"]
    return [
        _band("Nothing blocked: very low dissipation", 2, xi["none"].max(), 0.5, "§4.1, max over the range"),
        *(_band(f"{k} blocked: dissipation goes up to {PAPER_MAX_PCT[k]} %", PAPER_MAX_PCT[k], xi[k].max(), 2.5,
                f"§4.1 conclusion {i}; values given to 5 %") for i, k in enumerate(blocked, 1)),
        check_that("Spread of ξ over the push-off range, ξ(ω0 = 1) − ξ(ω0 = −1) (tests the assumed range)",
                   "max of §4.1 − value at −1 rad/s of §4.3: " + ", ".join(
                       f"{k} {PAPER_MAX_PCT[k] - PAPER_AT_REF_PCT[k]}" for k in blocked) + " points (± 3, rounding)",
                   ", ".join(f"{k} {100 * (xi[k][-1] - xi[k][0]):.1f}" for k in blocked) + " points",
                   all(abs(100 * (xi[k][-1] - xi[k][0]) - PAPER_MAX_PCT[k] + PAPER_AT_REF_PCT[k]) <= 3
                       for k in blocked)),
        check_that("Push-off regulates up to 50 % of the dissipable energy: (max − min)/max of ξ over the range",
                   "50 % (§4.1 conclusion 4; one significant digit: ± 5 points, largest case)",
                   ", ".join(f"{k} {v:.1%}" for k, v in reg.items()), abs(max(reg.values()) - 0.5) <= 0.05),
        check_that("Each additional blocked joint increases ξ (at every ω0)", "§4.1",
                   f"at ω0 = {omega0[0]:g}: " + " < ".join(_pct(xi[k][0]) for k in CASES),
                   all(np.all(xi[a] < xi[b]) for a, b in zip(CASES, list(CASES)[1:]))),
        check_that("Greater push-off (more negative ω0) lowers T_c⁻ and ξ (blocked cases)", "§4.1",
                   f"ankle: T_c⁻ {res['ankle']['Tc_minus'][0]:.2f} → {res['ankle']['Tc_minus'][-1]:.2f} J from "
                   f"ω0 = {omega0[0]:g} to {omega0[-1]:g} rad/s",
                   all(monotone(res[k]["Tc_minus"]) and monotone(xi[k]) for k in blocked)),
        check_that("…and raises T_a⁻ (blocked cases)", "§4.1",
                   "; ".join(f"{k}: T_a⁻ {_trend(omega0, res[k]['Ta_minus'], 'ω0', 'J')}" for k in blocked),
                   all(monotone(res[k]["Ta_minus"], False) for k in blocked)),
        check_that("Greater push-off increases the total pre-impact energy T⁻", "§4.1",
                   f"T⁻ = {T[0]:.2f} J at ω0 = {omega0[0]:g}, {T[-1]:.2f} J at {omega0[-1]:g} rad/s "
                   f"(minimum {T.min():.2f} J at ω0 = {omega0[np.argmin(T)]:g})", monotone(T, False)),
        check_that("Push-off lowers the normal colliding velocity of the heel", "§4.1",
                   f"v_n(CAL)⁻ = {vn[0]:.3f} m/s at ω0 = {omega0[0]:g}, {vn[-1]:.3f} m/s at {omega0[-1]:g}",
                   monotone(vn, False)),
        _trailing_check(res, CASES),
    ]


@experiment("heelstrike-pushoff", "002", "Fig. 3",
            "Seven-link human: ξ, T_c⁻, T_a⁻ vs trailing-ankle push-off ω0 with the leading ankle / ankle+knee / "
            "ankle+knee+hip blocked (and nothing blocked).",
            units="omega0 [rad/s], " + UNITS)
def heelstrike_pushoff(quick, progress):
    omega0, res = _pushoff_sweeps(quick, progress)
    rows = _rows("omega0", omega0, CASES, res)
    xi = {k: r["xi"] for k, r in res.items()}
    checks = _pushoff_checks(omega0, res)
    names = list(CASES)
    figures = {"fig3_xi": line_panels(
        omega0, [100 * np.stack([xi[k] for k in names]), np.stack([res[k]["Tc_minus"] for k in names]),
                 np.stack([res[k]["Ta_minus"] for k in names])],
        [("nothing" if k == "none" else k) + " blocked" for k in names],
        "pre-impact trailing-ankle rate ω0 = θ̇_A^L⁻ [rad/s] (< 0: push-off)",
        ["energy index ξ [%]", "T_c⁻ (in the SCM) [J]", "T_a⁻ (in the SAM) [J]"],
        "Ros et al. 2015, Fig. 3 — heel strike over the push-off ω0, impulsive map (leading heel CAL_R sticks, "
        "trailing MH_L unilateral; Δθ = 0)",
        styles=dict(enumerate(STYLES[k] for k in names)),
        note="T_c⁻, T_a⁻: pre-impact kinetic energy in the SCM, the space of constrained motion (the velocities the "
             "impact stops), and in the SAM, the space of admissible motion (those it keeps); T⁻ = T_c⁻ + T_a⁻ (eq. "
             "17), ξ = (T⁻ − T⁺)/T⁻ (eq. 23)"),
        "model_seven_link_human": _model_figure()}
    sensitivity = "Posture sensitivity: run without `--quick`." if quick else _posture_sensitivity(progress)
    measured = measured_note(checks, quick)
    return Outcome(rows, figures, checks, SOURCES + "\n\n" + sensitivity + "\n\n" + measured)


def _model_figure():
    """The seven-link human at the heel-strike posture (ω0 = −1 rad/s) with the heel impulse of the ankle-blocked
    case, in place of the paper's Fig. 1."""
    human = paper_human()
    q, qdot = human.heel_strike_state(OMEGA0_REF)
    sol = impact(human, q, qdot, stick=("CAL_R",), blocked=CASES["ankle"], unilateral=("MH_L",),
                 unilateral_tangent="always")
    return model_figure(human, q, "Seven-link human (Ros et al. 2015; Dumas et al. 2007, 75 kg, 1.77 m) at heel strike",
                        contacts=("CAL_R", "MH_L"), arrows={"CAL_R": (float(sol.impulses[1]), float(sol.impulses[0]))},
                        note="HeelStrikePosture (step 0.79 m, Murray et al. 1964); arrow: impulse at the leading heel "
                             "CAL_R, ankle blocked, ω0 = −1 rad/s; MH_L: trailing metatarsal heads")
