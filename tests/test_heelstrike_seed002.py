"""Heel strike of the seven-link human (seed 002, §4): ξ bands over the push-off range, the parabola of
eq. 24 in the post-impact ankle rate, and the trailing foot's unilateral outcome (footnote 4).

Independent references: ``W_c = (A M⁻¹ Aᵀ)⁻¹`` and the impulse–momentum solution (eqs. 20–22) recomputed
with numpy from ``M`` and the Jacobians; the energy decomposition ``T = T_c + T_a`` (eq. 17); the paper's bands.
The sweeps go through the experiment's compiled functions (one compilation per blocking case, shared with
``difimpact reproduce``), which call :func:`difimpact.impact`.
"""

import numpy as np
import pytest

from difimpact.papers.ros_2015 import heel_strikes as s2
from difimpact.papers.ros_2015 import paper

N = 9  # the quick batch size: shares the compilations with test_reproduce_seed002.py
OMEGA0 = np.linspace(-1.0, 1.0, N)
ZEROS = np.zeros(N)
BLOCKED = ("ankle", "ankle+knee", "ankle+knee+hip")


@pytest.fixture(scope="module")
def pushoff():
    return {k: s2._sweep(b, OMEGA0, ZEROS, ZEROS) for k, b in paper.CASES.items()}


@pytest.fixture(scope="module")
def reference():
    """Total blocking at ω0 = −1 rad/s (points A, B, C of §4.1–4.3), trailing-leg locking included."""
    cases = {k: paper.CASES[k] for k in BLOCKED} | {"ankle+trailing": (paper.ANKLE,) + paper.TRAILING}
    return {k: (b, s2._sweep(b, np.full(N, -1.0), ZEROS, ZEROS)) for k, b in cases.items()}


def _numpy_impact(r, blocked, stays, rate=0.0):
    """Seed 002 eqs. 20–22 with ``M⁻¹`` (numpy): rows CAL (2), blocked joints, MH normal if it stays, MH
    tangential (eq. 8). Returns (q̇⁺, λ̄, W_c)."""
    M, J = r["M"][0], r["J"][0]
    rows = [J[:2]] + [np.eye(9)[None, paper.CASES_INDEX[c]] for c in blocked] + [J[2:] if stays else J[3:]]
    A = np.concatenate(rows)
    b = np.zeros(len(A))
    b[2] = rate if blocked else 0.0
    W = np.linalg.inv(A @ np.linalg.solve(M, A.T))
    qdot = r["qdot"][0]
    lam = W @ (b - A @ qdot)
    return qdot + np.linalg.solve(M, A.T @ lam), lam, W


def test_energy_decomposition(pushoff):
    # eq. 17: T = T_c + T_a with mass-orthogonal projectors, at every push-off and blocking case.
    for r in pushoff.values():
        np.testing.assert_allclose(r["Tc_minus"] + r["Ta_minus"], r["T_minus"], rtol=1e-12)


def test_nothing_blocked_about_two_percent(pushoff):
    # §4.1: "Simulations with no blocked joints present a very low dissipation (≈ 2 %)"; 2 % rounded: ± 0.5.
    assert 0.015 <= pushoff["none"]["xi"].max() <= 0.025
    assert pushoff["none"]["xi"].min() > 0


# Seed 002's numbers: the maxima over the push-off range (§4.1, multiples of 5 %: ± 2.5 points) and the
# values at ω0 = −1 rad/s, the strongest push-off (§4.3 conclusions 1-3, to the percent: ± 0.5 point).
PAPER_MAX = {"ankle": 0.20, "ankle+knee": 0.30, "ankle+knee+hip": 0.35}
PAPER_AT_REF = {"ankle": 0.12, "ankle+knee": 0.17, "ankle+knee+hip": 0.19}


_SHORT_AT_MAX = pytest.mark.xfail(strict=True, reason=(
    "Seed 002 §4.1 gives up to 20 / 30 / 35 % over the push-off range; ours, with the sourced step length "
    "(HeelStrikePosture) and ω0 ∈ [−1, 1] rad/s, reach 17.0 / 26.7 / 31.8 %: about 3 points short in every case "
    "(see the heelstrike-pushoff report)."))
_SHORT_AT_REF = pytest.mark.xfail(strict=True, reason=(
    "Seed 002 §4.3 gives 12 / 17 / 19 % at ω0 = −1 rad/s; ours are 8.9 / 13.9 / 16.6 %: the same offset of "
    "about 3 points as at the other end of the range, so the gap is in the reference state (posture, foot "
    "geometry), not in the push-off range."))


@pytest.mark.parametrize("case", BLOCKED)
@pytest.mark.parametrize("where, paper, tol", [
    pytest.param("max", PAPER_MAX, 0.025, marks=_SHORT_AT_MAX, id="max"),
    pytest.param("at -1", PAPER_AT_REF, 0.005, marks=_SHORT_AT_REF, id="at-1"),
])
def test_blocked_bands(pushoff, case, where, paper, tol):
    xi = pushoff[case]["xi"]
    assert abs((xi.max() if where == "max" else xi[0]) - paper[case]) <= tol


def test_push_off_spread_matches_the_paper(pushoff):
    # ξ(ω0 = 1) − ξ(ω0 = −1) against the paper's max − value at −1 rad/s (20 − 12, 30 − 17, 35 − 19 points,
    # ± 3 from their rounding): corroborates the assumed range ω0 ∈ [−1, 1] rad/s, whose positive end the
    # paper does not print.
    for case in BLOCKED:
        assert abs(np.ptp(pushoff[case]["xi"]) - (PAPER_MAX[case] - PAPER_AT_REF[case])) <= 0.03


def test_blocking_increments_at_the_reference(pushoff):
    # §4.3: blocking the knee adds 17 − 12 = 5 points at ω0 = −1 rad/s, the hip another 19 − 17 = 2 (± 1 from
    # the rounding to the percent).
    names = list(BLOCKED)
    for a, b in zip(names, names[1:]):
        ours = pushoff[b]["xi"][0] - pushoff[a]["xi"][0]
        assert abs(ours - (PAPER_AT_REF[b] - PAPER_AT_REF[a])) <= 0.01


def test_blocking_and_push_off_order(pushoff):
    # §4.1: each additional blocked joint raises ξ; a stronger push-off (ω0 more negative) lowers it.
    names = list(paper.CASES)
    for a, b in zip(names, names[1:]):
        assert np.all(pushoff[a]["xi"] < pushoff[b]["xi"])
    for r in pushoff.values():
        assert np.all(np.diff(r["xi"]) > 0)
        assert np.all(np.diff(np.abs(r["vn_heel"])) > 0)


@pytest.mark.parametrize("case", BLOCKED)
def test_parabola_in_ankle_rate(reference, case):
    """eq. 24: ξ(θ̇_A^R⁺) = ξ(0) − W_c,aa θ̇²/(2T⁻), maximum at total blocking, W_c from numpy."""
    blocked, r = reference[case]
    stays = not r["lifted"][0]
    W = _numpy_impact(r, blocked, stays)[2]
    r0 = np.sqrt(2 * r["Tc_minus"][0] / W[2, 2])
    rates = np.linspace(-0.3, 0.3, N) * r0  # small enough for the trailing foot to keep its outcome
    out = s2._sweep(blocked, np.full(N, -1.0), ZEROS, rates)
    assert np.all(out["outcome"] == r["outcome"][0])
    a, b, c = np.polyfit(rates, out["xi"], 2)
    assert abs(b / (2 * a)) <= 1e-9 * r0
    assert a == pytest.approx(-W[2, 2] / (2 * r["T_minus"][0]), rel=1e-9)
    assert c == pytest.approx(r["xi"][0], rel=1e-12)
    assert out["xi"].max() <= r["xi"][0] + 1e-15
    # ... and the library's Tc_plus is eq. 24 itself
    np.testing.assert_allclose(out["Tc_plus"], 0.5 * W[2, 2] * rates**2, rtol=1e-9, atol=1e-14)


@pytest.mark.parametrize("case", list(BLOCKED) + ["ankle+trailing"])
def test_trailing_foot_outcome(reference, case):
    """Footnote 4: of the two solutions (MH normal row enforced or not), exactly the reported one is
    consistent — a staying foot has v_n⁺ = 0 and P_n ≥ 0, a lifting one P_n = 0 and v_n⁺ ≥ 0 — checked
    against both candidates recomputed with numpy."""
    blocked, r = reference[case]
    assert paper.OUTCOMES[int(r["outcome"][0])] in ("stays", "lifts")
    lifted = bool(r["lifted"][0])
    J_mh = r["J"][0, 2]
    stay_qdot, stay_lam, _ = _numpy_impact(r, blocked, stays=True)
    lift_qdot, _, _ = _numpy_impact(r, blocked, stays=False)
    stay_ok = stay_lam[-2] >= 0
    lift_ok = J_mh @ lift_qdot >= 0
    assert (lift_ok, stay_ok) == (lifted, not lifted)
    if lifted:
        assert r["Pn_trailing"][0] == 0.0
        assert r["vn_trailing"][0] == pytest.approx(J_mh @ lift_qdot, rel=1e-9)
    else:
        assert r["Pn_trailing"][0] == pytest.approx(stay_lam[-2], rel=1e-8)
        assert abs(r["vn_trailing"][0]) < 1e-12


def test_trailing_leg_locking_lifts_the_foot(reference):
    # Reported, not the paper's expectation (§4.3: locking the trailing leg "does not significantly change"
    # ξ): with the trailing hip, knee and ankle locked the trailing foot lifts off and ξ grows.
    r = reference["ankle+trailing"][1]
    assert paper.OUTCOMES[int(r["outcome"][0])] == "lifts"
    assert r["vn_trailing"][0] > 0
    assert r["xi"][0] > reference["ankle"][1]["xi"][0]
