"""Ros et al. 2015, Fig. 8 (§4.3): regulating the heel-strike dissipation with partial blocking of the leading
ankle (the rheonomic constraint of eq. 10, ξ a parabola in the prescribed rate, eq. 24); the heel strikes and
shared checks are those of :mod:`.heel_strikes`."""

import numpy as np

from ..curves import monotone
from ..experiment import Outcome, check_that, experiment
from ..plotting import line_panels
from .heel_strikes import UNITS, _band, _n, _pct, _rows, _sweep, _trailing_check
from .measured_states import measured_note
from .paper import ANKLE, CASES, CASES_INDEX, OMEGA0_REF, OUTCOMES, PAPER_AT_REF_PCT, STYLES, TRAILING


def _eq24(r, blocked):
    """``W_c = (A M⁻¹ Aᵀ)⁻¹`` of the active set (Ros et al. 2015, eqs. 20, 24) with numpy, from ``M`` and the contact
    Jacobians at the first state of a sweep: rows CAL (2), blocked joints, MH normal (if it stays), MH
    tangential (eq. 8). Returns ``W_c[a, a]`` of the ankle row (row 2)."""
    n = r["M"].shape[-1]
    rows = [r["J"][0, :2]] + [np.eye(n)[None, CASES_INDEX[c]] for c in blocked]
    rows += [r["J"][0, 3:]] if r["lifted"][0] else [r["J"][0, 2:]]
    A = np.concatenate(rows)
    return float(np.linalg.inv(A @ np.linalg.solve(r["M"][0], A.T))[2, 2])


def _ankle_sweeps(quick, progress, sweep=_sweep, omega0=OMEGA0_REF) -> dict:
    """Fig. 8's sweeps at `omega0`: total blocking (``ref``) and the leading ankle's prescribed post-impact rate
    over ``rate`` (``res``) per case, with ``W_c,aa`` (eq. 24), the roots ``r0`` of ξ and where ξ ≥ 0 (``valid``)."""
    cases = {k: v for k, v in CASES.items() if k != "none"}
    cases["ankle+trailing"] = (ANKLE,) + TRAILING  # §4.3, last paragraph: trailing hip, knee, ankle locked
    ref = {name: sweep(b, omega0, 0.0, 0.0) for name, b in progress(cases.items(), desc="total blocking")}
    w_aa = {k: _eq24(ref[k], b) for k, b in cases.items()}
    # ξ > 0 (the paper's plotted range) for |θ̇_A^R⁺| < r0 = √(2 T_c⁻ / W_aa) (eq. 24); ±r0 are grid points
    r0 = {k: float(np.sqrt(2 * ref[k]["Tc_minus"][0] / w_aa[k])) for k in cases}
    big = max(r0.values())
    rate = np.unique(np.concatenate([np.linspace(-big, big, 2 * _n(quick) - 1), [-v for v in r0.values()],
                                     list(r0.values())]))
    res = {name: sweep(b, omega0, 0.0, rate) for name, b in progress(cases.items(), desc="partial blocking")}
    valid = {k: res[k]["xi"] >= -1e-12 for k in cases}  # ξ(±r0) = 0 to rounding
    return {"cases": cases, "ref": ref, "w_aa": w_aa, "r0": r0, "rate": rate, "res": res, "valid": valid}


def _parabola_check(k, s):
    """Eq. 24 for case `k` of the sweeps `s` of :func:`_ankle_sweeps`: ξ is a parabola in the ankle rate."""
    ref, res, rate, valid = s["ref"][k], s["res"][k], s["rate"], s["valid"][k]
    # eq. 24 holds for one set of constraints: fit where the trailing foot does what it does at θ̇_A^R⁺ = 0
    same = valid & (res["outcome"] == ref["outcome"][0])
    x, y = rate[same], res["xi"][same]
    a, b, c = np.polyfit(x, y, 2)
    vertex, resid = -b / (2 * a), float(np.max(np.abs(np.polyval((a, b, c), x) - y)))
    expect = -s["w_aa"][k] / (2 * ref["T_minus"][0])
    other = int(valid.sum() - same.sum())
    switch = (f"; trailing foot {OUTCOMES[int(ref['outcome'][0])]} at 0 but not at {other} of "
              f"{int(valid.sum())} rates (|θ̇_A^R⁺| ≥ {np.abs(rate[valid & ~same]).min():.1f} rad/s): "
              "another parabola there") if other else ""
    return check_that(
        f"{k}: ξ is a parabola in θ̇_A^R⁺ with its maximum at total blocking (eq. 24)",
        "vertex at 0, curvature −W_c,aa/(2T⁻) (eq. 24; to 1e-8, float64 least squares)",
        f"vertex {vertex:.1e} rad/s, fit residual {resid:.1e}, curvature {a:.6e} vs {expect:.6e} ({len(x)} points, "
        f"|θ̇_A^R⁺| ≤ {max(abs(x)):.2f} rad/s){switch}",
        abs(vertex) <= 1e-8 * max(abs(x)) and resid <= 1e-8 * y.max() and abs(a / expect - 1) <= 1e-8)


def _ankle_checks(s) -> list:
    """Ros et al. 2015, §4.3 (Fig. 8): the statements on the sweeps `s` of :func:`_ankle_sweeps`."""
    ref, res, r0 = s["ref"], s["res"], s["r0"]
    main = [k for k in s["cases"] if k in CASES]
    at_r0 = {k: res[k]["xi"][np.flatnonzero(s["rate"] == r0[k])[0]] for k in main}
    at_zero = {k: float(ref[k]["xi"][0]) for k in s["cases"]}
    ends = {k: float(at_r0[k] / at_zero[k]) for k in main}
    steps = list(zip(main, main[1:]))
    return [
        *(_parabola_check(k, s) for k in main),
        *(_band(f"{k}: partial blocking regulates up to T_c⁻ = {PAPER_AT_REF_PCT[k]} % of T⁻", PAPER_AT_REF_PCT[k],
                at_zero[k], 0.5, f"§4.3 conclusion {i}") for i, k in enumerate(main, 1)),
        check_that("What blocking the knee, then the hip, adds to ξ at ω0 = −1 rad/s",
                   ", ".join(f"{b} − {a}: {PAPER_AT_REF_PCT[b] - PAPER_AT_REF_PCT[a]}" for a, b in steps)
                   + " points (§4.3 conclusions 1–3; ± 1, rounding)",
                   ", ".join(f"{100 * (at_zero[b] - at_zero[a]):.1f}" for a, b in steps) + " points",
                   all(abs(100 * (at_zero[b] - at_zero[a]) - PAPER_AT_REF_PCT[b] + PAPER_AT_REF_PCT[a]) <= 1
                       for a, b in steps)),
        check_that("Partial blocking regulates from ≈ 0 % up to 100 % of T_c⁻",
                   "§4.3 conclusion 1 (≈ 0: taken as below 1 % of ξ(0))",
                   "ξ/ξ(0) at θ̇_A^R⁺ = r0 = √(2T_c⁻/W_c,aa): "
                   + ", ".join(f"{k} {v:.1e} (r0 = {r0[k]:.2f} rad/s)" for k, v in ends.items()),
                   all(abs(v) <= 0.01 for v in ends.values())),
        check_that("Blocking the knee, then the hip, raises the maximum", "§4.3 conclusions 1–3",
                   " < ".join(_pct(at_zero[k]) for k in main), monotone([at_zero[k] for k in main])),
        check_that("Locking the trailing-leg joints does not significantly change ξ (ankle case, total blocking)",
                   "§4.3 (taken as: within 1 point)",
                   f"{_pct(at_zero['ankle'])} → {_pct(at_zero['ankle+trailing'])}, trailing foot "
                   f"{OUTCOMES[int(ref['ankle+trailing']['outcome'][0])]}",
                   abs(100 * (at_zero["ankle+trailing"] - at_zero["ankle"])) <= 1.0),
        _trailing_check(ref, main),
    ]


@experiment("heelstrike-ankle-blocking", "002", "Fig. 8",
            "Seven-link human: ξ vs prescribed post-impact leading-ankle rate θ̇_A^R⁺ (partial blocking, eq. 10) at ω0 "
            "= −1 rad/s, alone and with the knee / knee+hip blocked; parabola of eq. 24.",
            units="ankle_rate [rad/s] (θ̇_A^R⁺ in Ros et al. 2015's counter-clockwise sense: minus the model's "
                  "clockwise "
                  "coordinate rate), omega0 [rad/s], " + UNITS)
def heelstrike_ankle_blocking(quick, progress):
    s = _ankle_sweeps(quick, progress)
    cases, rate, res, valid = s["cases"], s["rate"], s["res"], s["valid"]
    rows = []
    for k in cases:
        part = {q: v[valid[k]] for q, v in res[k].items() if v.ndim == 1}
        rows += _rows("ankle_rate", {k: rate[valid[k]]}, [k], {k: part}, {"omega0": OMEGA0_REF})
    checks = _ankle_checks(s)
    names = list(cases)
    styles = {**STYLES, "ankle+trailing": "m:"}
    labels = {"ankle": "ankle partially blocked", "ankle+knee": "ankle partially, knee blocked",
              "ankle+knee+hip": "ankle partially, knee and hip blocked",
              "ankle+trailing": "ankle partially blocked, trailing leg locked"}
    curves = np.stack([np.where(valid[k], 100 * res[k]["xi"], np.nan) for k in names])
    figures = {"fig8_xi": line_panels(
        rate, [curves], [labels[k] for k in names],
        "post-impact leading-ankle rate θ̇_A^R⁺ [rad/s] (Ros et al. 2015's sense; 0: total blocking)",
        ["energy index ξ [%]"], f"Ros et al. 2015, Fig. 8 — partial blocking of the leading ankle, impulsive map, "
        f"ω0 = {OMEGA0_REF:g} rad/s",
        note="each curve is drawn where ξ ≥ 0 and ends at its roots ±√(2T_c⁻/W_c,aa) (eq. 24); "
             "the leading ankle's post-impact rate is prescribed (eq. 10)",
        styles=dict(enumerate(styles[k] for k in names)))}
    return Outcome(rows, figures, checks, measured_note(checks, quick))
