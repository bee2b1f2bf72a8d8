"""Ros, Font-Llagunes, Plaza & Kövecses, Multibody Syst Dyn (2015): the heel strikes of the seven-link human behind
the figures — energy index ξ (eq. 23) over the trailing-ankle push-off ω0 (:mod:`.fig3`), over the torso angle
(:mod:`.fig6`) and the post-impact rate of a partially blocked leading ankle (:mod:`.fig8`), for the
joint-blocking cases of §4 — and the checks they share.

Every impact is :func:`difimpact.impact` on :class:`difimpact.SevenLinkHuman`: the leading heel ``CAL_R``
collides and sticks (eqs. 6–7), the trailing ``MH_L`` is a unilateral contact that stays or lifts off (eqs.
8–9, footnote 4), the blocked joints of the leading leg get ``q̇_j⁺ = 0`` or a prescribed rate (eqs. 10–12).
The trailing foot keeps its non-sliding row ``v_x(MH)⁺ = 0`` (eq. 8) in both choices, since footnote 4 solves
"with and without" the unilateral constraint (9) only (``unilateral_tangent="always"``). The pre-impact state is
:meth:`SevenLinkHuman.heel_strike_state` (eq. 3). One compiled function serves every blocking case of all three
experiments (fixed batch size; the case is `impact`'s traced ``blocked_active``), compiled without XLA's
backend optimisations: compiling is almost all the cost (a batch runs in milliseconds).

Ranges the paper does not print (its figures are lost): ω0 ∈ [−1, 1] rad/s — −1 rad/s is the strongest
push-off of the analysed range (points A, B, C, §4.1–4.2), the other end is taken symmetric ("in the other
direction", §4.1); the paper's spread of ξ over its range (max of §4.1 minus the value at −1 rad/s of §4.3)
is checked against ours. Δθ ∈ [−20°, 20°], an assumed range of voluntary trunk lean. What is sourced and
what is assumed in the pre-impact state is :data:`~.paper.SOURCES` (printed in the heelstrike-pushoff report).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from difimpact import HeelStrikePosture, ImpactResults, SevenLinkHuman, checks_as_nan, impact
from difimpact._exported import stored

from ..curves import monotone, require_finite, table_rows
from ..experiment import check_that
from .paper import ANKLE, JOINTS, OUTCOMES

BATCH = 16  # points per compiled call
QUANTITIES = ("xi", "T_minus", "Tc_minus", "Ta_minus", "Tc_plus", "vn_heel", "Pn_heel", "Pt_heel", "Pn_trailing",
              "vn_trailing")
UNITS = ("xi [-], T_minus, Tc_minus, Ta_minus, Tc_plus [J] (pre-impact energies, total / constrained / admissible "
         "space; post-impact constrained), vn_heel [m/s] (pre-impact normal velocity of CAL_R), Pn_heel, Pt_heel, "
         "Pn_trailing [N s] (impulses at CAL_R and MH_L), vn_trailing [m/s] (post-impact normal velocity of MH_L), "
         "trailing_foot (stays / lifts / no consistent set)")
_FAST_COMPILE = {"xla_backend_optimization_level": 0}  # see the module docstring


@functools.cache
def paper_human() -> SevenLinkHuman:
    """The human of Ros et al. 2015 (§2.1): :class:`~difimpact.SevenLinkHuman` at its defaults, 75 kg and 1.77 m
    with the segment data of Dumas et al. 2007, in its default heel-strike posture; one instance, so that every
    compiled function of the papers sees the same model."""
    return SevenLinkHuman()


@functools.cache
def _states():
    """``(ω0, Δθ) ↦ (q, q̇⁻)`` batched (Ros et al. 2015, eq. 3), torso angle ``θ = θ_n + Δθ`` (§4.2)."""
    human, theta_n = paper_human(), HeelStrikePosture().torso
    @checks_as_nan()  # the program holds no host callback: JAX's compilation cache keeps it
    def state(omega0, dtheta):
        return human.heel_strike_state(omega0, theta_n + dtheta)

    return stored("ros_heel_strike_states", _FAST_COMPILE)(jax.jit(jax.vmap(state)))


def _active(blocked: tuple[str, ...]) -> np.ndarray:
    """The case `blocked` (joints of :data:`JOINTS`) as one flag per joint."""
    unknown = set(blocked) - set(JOINTS)
    if unknown:
        raise ValueError(f"`blocked`: {sorted(unknown)} are not among the joints {JOINTS}.")
    return np.array([c in blocked for c in JOINTS])


def _impact(human, q, qdot, rate, active):
    """Heel strike with the joints of :data:`JOINTS` blocked where `active`, the ankle at the post-impact rate
    ``rate`` (eq. 10) in Ros et al. 2015's counter-clockwise sense (the model's clockwise coordinate rate is
    ``−rate``)."""
    rates = {c: (-rate if c == ANKLE else 0.0) for c in JOINTS}
    # ground_tol: a gait's heel strike (:mod:`.ros_statements`) holds its contacts to the collocation's drift (< 1 mm);
    # traced inside the papers' own programs with the checks as NaN, so that JAX's compilation cache keeps them
    with checks_as_nan():
        return impact(human, q, qdot, stick=("CAL_R",), blocked=rates, blocked_active=dict(zip(JOINTS, active)),
                      unilateral=("MH_L",), unilateral_tangent="always", ground_tol=1e-3, throw=False)


@functools.cache
def _heel_strike():
    """Batched heel strike of :func:`_impact`. Returns the quantities of :data:`QUANTITIES`, the trailing-foot
    outcome (index into :data:`OUTCOMES`), ``q̇⁻``, ``M`` and the stacked Jacobians of CAL_R and MH_L (for checks
    of eq. 24 by hand)."""
    human = paper_human()

    @checks_as_nan()  # the model's checks too (its Jacobians, its mass matrix), not only the impact's
    def one(q, qdot, rate, active):
        sol = _impact(human, q, qdot, rate, active)
        ok = sol.result == ImpactResults.successful
        lifted = sol.lifted_off[0]
        outcome = jnp.where(ok, jnp.where(lifted, 1, 0),
                            jnp.where(sol.result == ImpactResults.no_consistent_set, 2, 3))
        return dict(
            xi=sol.xi, T_minus=sol.T_minus, Tc_minus=sol.Tc_minus, Ta_minus=sol.Ta_minus, Tc_plus=sol.Tc_plus,
            vn_heel=human.contact_jacobian(q, "CAL_R")[0] @ qdot, Pn_heel=sol.impulses[0], Pt_heel=sol.impulses[1],
            Pn_trailing=sol.impulses[-2], vn_trailing=sol.unilateral_velocity[0], outcome=outcome,
            lifted=lifted, qdot=qdot, M=human.mass_matrix(q),
            J=jnp.concatenate([human.contact_jacobian(q, "CAL_R"), human.contact_jacobian(q, "MH_L")]),
        )

    return stored("ros_heel_strikes", _FAST_COMPILE)(
        jax.jit(jax.vmap(one, in_axes=(0, 0, 0, None))))


def _sweep(blocked, omega0, dtheta, rate, states=None):
    """Heel strikes with the joints `blocked` at the broadcast ``(ω0, Δθ [rad], θ̇_A^R⁺)`` in batches of
    :data:`BATCH` (padded with the last point), so that every sweep of every experiment reuses one compilation.
    `states` maps a batch of ``(ω0, Δθ)`` to ``(q, q̇⁻)``; default :func:`_states` (eq. 3 at the reference
    posture), :func:`.ros_statements.around` for the sweeps around another pre-impact state."""
    states = _states() if states is None else states
    active = jnp.asarray(_active(blocked))
    args = np.broadcast_arrays(*(np.atleast_1d(np.asarray(a, float)) for a in (omega0, dtheta, rate)))
    size = args[0].size
    padded = [np.concatenate([a, np.full(-size % BATCH, a[-1])]) for a in args]
    chunks = []
    for i in range(0, padded[0].size, BATCH):
        q, qdot = states(*(jnp.asarray(a[i:i + BATCH]) for a in padded[:2]))
        require_finite("the pre-impact states (Ros et al. 2015, eq. 3)", {"q": q, "qdot": qdot})
        chunks.append(_heel_strike()(q, qdot, jnp.asarray(padded[2][i:i + BATCH]), active))
    return {k: np.concatenate([np.asarray(c[k]) for c in chunks])[:size] for k in chunks[0]}


def _n(quick: bool) -> int:
    return 9 if quick else 41


def _rows(key, x, cases, res, extra=None):
    """Flat rows, case by case: the blocking case, the abscissa `key` (``x``, or ``x[case]``), the constant
    columns `extra`, :data:`QUANTITIES` and the trailing-foot outcome."""
    rows = []
    for name in cases:
        xs, r = (x[name] if isinstance(x, dict) else x), res[name]
        n = len(xs)
        rows += table_rows({"blocked": [name] * n, key: xs, **{k: [v] * n for k, v in (extra or {}).items()},
                            **{k: r[k] for k in QUANTITIES},
                            "trailing_foot": [OUTCOMES[int(o)] for o in r["outcome"]]})
    return rows


def _pct(a) -> str:
    return f"{100 * float(a):.1f} %"


def _band(statement, paper_pct, ours, half_width_pct, source):
    """``ours`` (a fraction) equals the paper's rounded percentage to its rounding half-width."""
    return check_that(statement, f"≈ {paper_pct:g} % ({source}; rounded: ± {half_width_pct:g} points)",
                      _pct(ours), abs(100 * ours - paper_pct) <= half_width_pct)


def _trend(x, y, name, unit):
    """``y`` from the first to the last ``x``, and where it turns if it is not monotone."""
    text = f"{y[0]:.2f} → {y[-1]:.2f} {unit}"
    if monotone(y) or monotone(y, False):
        return text
    turn = np.argmin(y) if y[0] > y[np.argmin(y)] < y[-1] else np.argmax(y)
    return text + f", turning at {name} = {x[turn]:.2f}"


def _trailing_check(res, cases):
    """Ros et al. 2015, eq. 9: the trailing MH stays (``v(MH)⁺ = 0``, normal impulse ≥ 0), as observed in normal
    gait."""
    parts, ok = [], True
    for name in cases:
        r = res[name]
        out = np.array([OUTCOMES[int(o)] for o in r["outcome"]])
        desc = []
        for kind in dict.fromkeys(out):
            at = out == kind
            v, unit = (r["Pn_trailing"], "P_n") if kind == "stays" else (r["vn_trailing"], "v_n⁺")
            desc.append(f"{kind} at {at.sum()}/{at.size} ({unit} {v[at].min():.2g}…{v[at].max():.2g} "
                        f"{'N s' if kind == 'stays' else 'm/s'})")
        parts.append(f"{name}: " + ", ".join(desc))
        ok &= bool(np.all(out == "stays"))
    return check_that("The trailing foot stays on the ground: v(MH)⁺ = 0 with a non-negative impulse (footnote 4)",
                      "§2.3: observed in normal gait", "; ".join(parts), ok)
