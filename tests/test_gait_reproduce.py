"""`difimpact reproduce --quick` for the gait experiments: files, row keys, and rows against independent
references (McGeer's closed form, Garcia et al.'s published fixed point, a solve_ivp + fsolve simplest walker,
the energy balance)."""

import math

import numpy as np
import pytest

from .helpers import reproduce_quick, simplest_walker_gait

KEYS = {
    "gait-rimless-wheel": {"slope", "n_spokes", "omega_plus", "multiplier", "step_time", "energy_loss"},
    "gait-simplest-walker": {"slope", "branch", "kind", "half_angle", "stance_rate", "step_time", "rho"},
    "gait-compass": {"slope_deg", "period", "kind", "half_angle", "step_time", "step_length", "speed", "rho"},
    "gait-round-feet": {"R", "slope_deg", "half_angle", "step_time", "speed", "loss_per_distance", "rho"},
}

# Kept out of the README's test command; the tests marked stage2 run in CI's second stage.
pytestmark = pytest.mark.slow


CONTINUED = ("gait-simplest-walker", "gait-compass", "gait-round-feet")  # one compilation per walker family


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce")
    return out, reproduce_quick(out, *CONTINUED)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce_wheel")
    return out, reproduce_quick(out, "gait-rimless-wheel")


def _files_and_keys(out, rows):
    report = (out / "report.md").read_text()
    for name in rows:
        assert set(rows[name][0]) == KEYS[name]
        csv = (out / name / f"{name}.csv").read_text().splitlines()
        assert len(csv) == len(rows[name]) + 1
        assert f"## `{name}`" in report
        assert list((out / name).glob("*.png"))


@pytest.mark.stage2
def test_files_and_keys(run):
    _files_and_keys(*run)
    assert set(run[1]) == set(CONTINUED)


@pytest.mark.slow
def test_rimless_wheel_rows(wheel):
    _files_and_keys(*wheel)
    a = math.pi / 8
    for r in wheel[1]["gait-rimless-wheel"]:
        omega = 1 / math.tan(2 * a) * math.sqrt(4 * 9.81 * math.sin(a) * math.sin(r["slope"]))
        if math.isnan(r["omega_plus"]):
            assert omega**2 <= 2 * 9.81 * (1 - math.cos(a - r["slope"]))  # cannot pass over the spoke
        else:
            assert abs(r["omega_plus"] / omega - 1) < 1e-9 and abs(r["multiplier"] / math.cos(2 * a) ** 2 - 1) < 1e-9
            assert abs(r["energy_loss"] / (9.81 * 2 * math.sin(a) * math.sin(r["slope"])) - 1) < 1e-9


@pytest.mark.stage2
def test_simplest_walker_rows(run):
    rows = run[1]["gait-simplest-walker"]
    at = next(r for r in rows if r["slope"] == 0.009 and r["branch"] == "long")
    assert abs(at["half_angle"] - 0.20031) < 5e-6 and abs(at["stance_rate"] - 0.19983) < 5e-6
    pd = [r for r in rows if r["kind"] == "period-doubling" and r["branch"] == "long"]
    assert len(pd) == 1 and 0.0145 <= pd[0]["slope"] < 0.0155  # Garcia et al.: stable for 0 < γ < 0.015
    small = [r for r in rows if r["slope"] <= 1e-3 and r["branch"] == "long"]
    slope = np.polyfit(np.log([r["slope"] for r in small]), np.log([r["half_angle"] for r in small]), 1)[0]
    assert abs(slope - 1 / 3) < 0.01
    assert {r["branch"] for r in rows} == {"long", "short", "period-2"} and {r["kind"] for r in rows} <= {
        "orbit", "period-doubling", "fold"}


def _scipy_gait(row):
    """The solve_ivp + fsolve gait from the row's state (``q̇4⁺ = q̇3⁺ (1 − cos 2θ)`` as the third guess)."""
    theta, rate = row["half_angle"], row["stance_rate"]
    return simplest_walker_gait(np.array([-theta, rate, rate * (1 - math.cos(2 * theta))]), row["slope"])


@pytest.mark.stage2
def test_period_two_branch_whatever_the_eigenvector_sign(run, monkeypatch):
    """The period-2 branch is found and is the same whichever sign the eigensolver gives the flip eigenvector
    (rounding can flip it; from one side Newton fails). The experiment's own continuation, programs already
    compiled by `run`."""
    from difimpact.papers.gait_classics import garcia_1998 as gaits
    from difimpact._gait import continuation

    eig, half_angles = np.linalg.eig, []
    for sign in (1.0, -1.0):
        monkeypatch.setattr(continuation.np.linalg, "eig", lambda a, s=sign: (eig(a)[0], s * eig(a)[1]))
        branch = continuation.continue_gait(gaits._simplest, gaits.X_LONG, 0.009, 0.02, step=0.01, max_step=0.01,
                                            bisections=8)
        half_angles.append([-b.x[0] for b in branch if b.period == 2 and b.kind == "orbit"])
    assert len(half_angles[0]) >= 3
    np.testing.assert_allclose(half_angles[1], half_angles[0], rtol=1e-9)


@pytest.mark.stage2
def test_simplest_walker_short_gait_and_period_doubling_scipy(run):
    """The short gait at γ = 0.009 and the first period doubling against an independent solve_ivp + fsolve
    stride map: the fixed point, the largest multiplier (finite differences), a multiplier −1 at our slope."""
    rows = run[1]["gait-simplest-walker"]
    short = next(r for r in rows if r["slope"] == 0.009 and r["branch"] == "short")
    x, J = _scipy_gait(short)
    assert abs(-x[0] - short["half_angle"]) < 1e-8 and abs(x[1] - short["stance_rate"]) < 1e-8
    assert abs(np.max(np.abs(np.linalg.eigvals(J))) - short["rho"]) < 1e-5
    pd = next(r for r in rows if r["kind"] == "period-doubling" and r["branch"] == "long")
    x, J = _scipy_gait(pd)
    assert abs(-x[0] - pd["half_angle"]) < 1e-8
    assert np.min(np.abs(np.linalg.eigvals(J) + 1)) < 1e-4


@pytest.mark.stage2
def test_simplest_walker_no_fold_scipy(run):
    """No fold on either period-one branch: none located, and with the solve_ivp + fsolve map ``det(I − ∂P/∂x)``
    keeps its sign from γ = 0.009 to the end of the range on each branch (long: positive, short: negative)."""
    rows = run[1]["gait-simplest-walker"]
    assert not [r for r in rows if r["kind"] == "fold"]
    for branch, sign in (("long", 1), ("short", -1)):
        ends = [r for r in rows if r["branch"] == branch and r["kind"] == "orbit" and r["slope"] in (0.009, 0.02)]
        assert len(ends) == 2
        for r in ends:
            x, J = _scipy_gait(r)
            assert abs(-x[0] - r["half_angle"]) < 1e-8
            assert np.sign(np.linalg.det(np.eye(3) - J)) == sign


@pytest.mark.stage2
def test_round_feet_energy_balance(run):
    """A passive gait pays its impact loss with the slope: loss per distance ``= M g sin γ`` whatever ``R``."""
    for r in run[1]["gait-round-feet"]:
        assert abs(r["loss_per_distance"] / (20.0 * 9.81 * math.sin(math.radians(r["slope_deg"]))) - 1) < 1e-8
