"""Ros, Font-Llagunes, Plaza & Kövecses (2015)'s statements on the heel strike (push-off, Fig. 3; torso angle,
Fig. 6; partial ankle blocking, Fig. 8) re-evaluated around any pre-impact state ``(q0, q̇0⁻)`` of the seven-link
human, right leg leading (leading heel ``CAL_R``, trailing ``MH_L``): a gait's own heel strike beside the
paper's posture. The sweeps, impacts and checks are those of :mod:`.heel_strikes`, :mod:`.fig3`, :mod:`.fig6` and
:mod:`.fig8`; only the states differ (:func:`around`), each sweep reducing to the base state at the base's own values:

- push-off: ``q̇⁻(ω0) = q̇0 + (ω0 − ω0,base) ∂q̇/∂ω0`` with ``ω0,base = −q̇0[8]`` (the trailing ankle's rate,
  counter-clockwise as in the paper) and ``∂q̇/∂ω0`` eq. 3's (linear in ω0) at the base posture;
- torso: the Torso-Pelvis rotated by Δθ about the hips, every other absolute segment angle, the hips' height and
  the LJC's ``x`` kept, as :meth:`~difimpact.SevenLinkHuman.heel_strike_posture` moves θ (the legs move along the
  ground with the hips, the feet stay at their heights); the velocity changes as eq. 3's does between the base's
  torso angle and the rotated one (at the base's ``v0 = q̇0[0]`` and ω0);
- partial ankle blocking: at the base state.

At the reference posture with eq. 3's velocities the sweeps are those of the experiments.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from difimpact import HeelStrikePosture, checks_as_nan
from difimpact._exported import stored

from ..curves import require_finite
from ..experiment import Check
from .fig3 import _pushoff_checks, _pushoff_sweeps
from .fig6 import _torso_checks, _torso_sweeps
from .fig8 import _ankle_checks, _ankle_sweeps
from .heel_strikes import _FAST_COMPILE, BATCH, _n, _sweep, paper_human
from .paper import DTHETA_RANGE, OMEGA0_RANGE, OMEGA0_REF

SHORT = 60  # characters of a table cell's value
_LEGS = (3, 6)  # the hips: relative to the torso, so that rotating it keeps the thighs' absolute angles


def posture_of(q) -> HeelStrikePosture:
    """The :class:`HeelStrikePosture` of a configuration ``q`` (counter-clockwise angles, thighs absolute)."""
    return HeelStrikePosture(torso=-q[2], thigh_R=-(q[2] + q[3]), knee_R=-q[4], ankle_R=-q[5],
                             thigh_L=-(q[2] + q[6]), knee_L=-q[7])


def _rotate(human, q0, dtheta):
    """``q0`` with the Torso-Pelvis rotated by Δθ (counter-clockwise, the paper's sense: ``q[2] − Δθ``) about the
    hips: the hips' relative angles take ``+Δθ``, the LJC's height moves so that the hips keep theirs."""
    q = q0.at[2].add(-dtheta).at[jnp.array(_LEGS)].add(dtheta)
    return q.at[1].add(human.point(q0, "H_R")[1] - human.point(q, "H_R")[1])  # exactly zero at Δθ = 0


@functools.cache
def _around():
    """``(ω0, Δθ; q0, q̇0) ↦ (q, q̇⁻)`` batched over ``(ω0, Δθ)`` (module docstring)."""
    human = paper_human()

    @checks_as_nan()  # a program JAX's compilation cache keeps (no host callback); :func:`around` raises on NaN
    def one(omega0, dtheta, q0, qd0):
        pose, base = posture_of(q0), -qd0[8]

        def eq3(w, torso):  # Ros et al. 2015, eq. 3 at the base posture, the base's v0
            return human.heel_strike_state(w, torso, v0=qd0[0], posture=pose)[1]

        slope = jax.jacfwd(eq3)(base, pose.torso + dtheta)
        torso = eq3(base, pose.torso + dtheta) - eq3(base, pose.torso)
        return _rotate(human, q0, dtheta), qd0 + torso + (omega0 - base) * slope

    return stored("ros_states_around", _FAST_COMPILE)(
        jax.jit(jax.vmap(one, in_axes=(0, 0, None, None))))


def around(q0, qd0):
    """The states around the base ``(q0, q̇0⁻)``: a function of batched ``(ω0, Δθ [rad])`` returning ``(q, q̇⁻)``,
    for :func:`.heel_strikes._sweep`'s `states`. At ``ω0 = −q̇0[8]``, ``Δθ = 0`` it returns the base itself."""
    q0, qd0 = jnp.asarray(q0, float), jnp.asarray(qd0, float)
    if q0.shape != (9,) or qd0.shape != (9,):
        raise ValueError(f"`q0`, `qd0`: expected shapes (9,), got {q0.shape} and {qd0.shape}.")

    def states(omega0, dtheta):
        q, qdot = _around()(omega0, dtheta, q0, qd0)
        require_finite("the states around the base (Ros et al. 2015, eq. 3)", {"q": q, "qdot": qdot})
        return q, qdot

    return states


def _quiet(iterable, **_):
    return iterable


@functools.cache
def _heel_vn():
    """The leading heel's normal velocity in a batch of states ``(q, q̇)``."""
    human = paper_human()

    def vn(q, qdot):
        with checks_as_nan():  # a program JAX's compilation cache keeps (no host callback)
            return human.point_velocity(q, qdot, "CAL_R")[1]

    return jax.jit(jax.vmap(vn), compiler_options=_FAST_COMPILE)


def _no_strike(states, omega0, dtheta) -> str:
    """Empty if the leading heel approaches the ground (``v_n⁻ < 0``: a heel strike) in every state of the batch
    ``(ω0, Δθ [rad])``, else where it does not."""
    omega0, dtheta = np.broadcast_arrays(np.atleast_1d(np.asarray(omega0, float)), np.asarray(dtheta, float))
    pad = -omega0.size % BATCH  # batches of the sweeps' size: one compilation of `states`
    batch = [jnp.asarray(np.concatenate([a, np.full(pad, a[-1])]).reshape(-1, BATCH)) for a in (omega0, dtheta)]
    vn = np.concatenate([np.asarray(_heel_vn()(*states(w, d))) for w, d in zip(*batch)])[:omega0.size]
    if np.all(vn < 0):
        return ""
    i = int(np.argmax(vn))
    return (f"not evaluated: no heel strike at ω0 = {omega0[i]:g} rad/s, Δθ = {np.degrees(dtheta[i]):g}° (v_n⁻(CAL_R) "
            f"= {vn[i]:.3g} m/s)")


def _groups(quick, sweep, omega0):
    """Per figure: its checks (a function of nothing) and the ``(ω0, Δθ)`` where its sweeps need a heel strike
    (``v_n⁻`` is linear in ω0: the ends of the push-off range suffice)."""
    dtheta = np.radians(np.linspace(*DTHETA_RANGE, _n(quick)))
    return (("Fig. 3", lambda: _pushoff_checks(*_pushoff_sweeps(quick, _quiet, sweep)), (OMEGA0_RANGE, 0.0)),
            ("Fig. 6", lambda: _torso_checks(*_torso_sweeps(quick, _quiet, sweep, omega0)), (omega0, dtheta)),
            ("Fig. 8", lambda: _ankle_checks(_ankle_sweeps(quick, _quiet, sweep, omega0)), (omega0, 0.0)))


def statements_at(q0, qd0, label: str, quick: bool = False) -> list[Check]:
    """Every check of the experiments ``heelstrike-pushoff``, ``heelstrike-torso`` and
    ``heelstrike-ankle-blocking`` (same statements, same order, same criteria), on sweeps around the heel strike
    ``(q0, q̇0⁻)`` (right leg leading, the model's coordinates) named `label`; the torso and ankle-blocking sweeps
    at the base's own push-off ``ω0 = −q̇0[8]``, the push-off sweep over the paper's range. Each check's
    evidence (``ours``) starts with ``[Fig. N at label, ω0 = …]``. A figure whose sweeps leave the heel strikes
    (the heel not approaching the ground) gets its checks ✗ with ``not evaluated: …`` as evidence; a base that is
    not a heel strike raises ``ValueError``."""
    states = around(q0, qd0)
    omega0 = float(-np.asarray(qd0)[8])
    why = _no_strike(states, omega0, 0.0)
    if why:
        raise ValueError(f"{label}: not a heel strike; " + why.removeprefix("not evaluated: "))
    out = []
    for (fig, run, where), (_, texts, _) in zip(_groups(quick, functools.partial(_sweep, states=states), omega0),
                                                _groups(quick, _sweep, OMEGA0_REF)):
        why = _no_strike(states, *where)
        checks = [Check(c.statement, c.paper, why, False) for c in texts()] if why else run()
        out += [Check(c.statement, c.paper, f"[{fig} at {label}, ω0 = {omega0:.2f} rad/s] {c.ours}", c.ok)
                for c in checks]
    return out


def _split(ours: str) -> tuple[str, str]:
    """The figure and the value of a check's evidence from :func:`statements_at` (figure empty otherwise)."""
    if ours.startswith("[Fig. ") and "] " in ours:
        where, value = ours[1:].split("] ", 1)
        return where.split(" at ")[0], value
    return "", ours


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def _short(value: str) -> str:
    """`value` cut to :data:`SHORT` characters, at a separator where there is one in its second half."""
    if len(value) > SHORT:
        cut = max(value.rfind(sep, 0, SHORT) for sep in (", ", "; ", " ("))
        value = value[:cut if cut > SHORT // 2 else SHORT].rstrip() + " …"
    return _escape(value)


def _cell(check: Check) -> str:
    value = _split(check.ours)[1]
    mark = "—" if value.startswith("not evaluated") else "✓" if check.ok else "✗"
    return f"{mark} {_short(value.removeprefix('not evaluated: '))}"


def table(columns: dict[str, list[Check]]) -> str:
    """Markdown: one row per statement, one column per base (`columns`: label → :func:`statements_at`'s checks,
    all for the same statements in the same order), each cell ✓ or ✗ with the value, cut to :data:`SHORT`
    characters (— where :func:`statements_at` could not evaluate it); a last row counts the ✓ (and the —)."""
    lists = list(columns.values())
    if not lists:
        raise ValueError("`columns`: no base to tabulate.")
    statements = [c.statement for c in lists[0]]
    for name, checks in columns.items():
        if [c.statement for c in checks] != statements:
            raise ValueError(f"`columns[{name!r}]`: not the statements of the first column, in its order.")
    lines = ["| Fig. | statement | " + " | ".join(columns) + " |", "|---|---|" + "---|" * len(columns)]
    for i, statement in enumerate(statements):
        fig = next((f for f in (_split(c[i].ours)[0] for c in lists) if f), "")
        cells = [_cell(c[i]) for c in lists]
        lines.append(f"| {fig} | {_escape(statement)} | " + " | ".join(cells) + " |")
    held = []
    for checks in lists:
        skipped = sum(_split(c.ours)[1].startswith("not evaluated") for c in checks)
        held.append(f"{sum(c.ok for c in checks)}/{len(checks)}" + (f" ({skipped} not evaluated)" if skipped else ""))
    lines.append("| | **statements that hold** | " + " | ".join(held) + " |")
    return "\n".join(lines)
