"""`difimpact reproduce --quick` for the gait experiments: files, row keys, and rows against independent
references (McGeer's closed form, Garcia et al.'s published fixed point, the energy balance)."""

import math

import numpy as np
import pytest

from .helpers import reproduce_quick

KEYS = {
    "gait-rimless-wheel": {"slope", "n_spokes", "omega_plus", "multiplier", "step_time", "energy_loss"},
    "gait-simplest-walker": {"slope", "branch", "kind", "half_angle", "stance_rate", "step_time", "rho"},
    "gait-compass": {"slope_deg", "period", "kind", "half_angle", "step_time", "step_length", "speed", "rho"},
    "gait-round-feet": {"R", "slope_deg", "half_angle", "step_time", "speed", "loss_per_distance", "rho"},
}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce")
    return out, reproduce_quick(out, *KEYS)


@pytest.mark.slow
def test_files_and_keys(run):
    out, rows = run
    report = (out / "report.md").read_text()
    for name, keys in KEYS.items():
        assert set(rows[name][0]) == keys
        csv = (out / name / f"{name}.csv").read_text().splitlines()
        assert len(csv) == len(rows[name]) + 1
        assert f"## `{name}`" in report
        assert list((out / name).glob("*.png"))


@pytest.mark.slow
def test_rimless_wheel_rows(run):
    a = math.pi / 8
    for r in run[1]["gait-rimless-wheel"]:
        omega = 1 / math.tan(2 * a) * math.sqrt(4 * 9.81 * math.sin(a) * math.sin(r["slope"]))
        if math.isnan(r["omega_plus"]):
            assert omega**2 <= 2 * 9.81 * (1 - math.cos(a - r["slope"]))  # cannot pass over the spoke
        else:
            assert abs(r["omega_plus"] / omega - 1) < 1e-9 and abs(r["multiplier"] / math.cos(2 * a) ** 2 - 1) < 1e-9
            assert abs(r["energy_loss"] / (9.81 * 2 * math.sin(a) * math.sin(r["slope"])) - 1) < 1e-9


@pytest.mark.slow
def test_simplest_walker_rows(run):
    rows = run[1]["gait-simplest-walker"]
    at = next(r for r in rows if r["slope"] == 0.009)
    assert abs(at["half_angle"] - 0.20031) < 5e-6 and abs(at["stance_rate"] - 0.19983) < 5e-6
    pd = [r for r in rows if r["kind"] == "period-doubling"]
    assert len(pd) == 1 and 0.0145 <= pd[0]["slope"] < 0.0155  # Garcia et al.: stable for 0 < γ < 0.015
    small = [r for r in rows if r["slope"] <= 1e-3]
    slope = np.polyfit(np.log([r["slope"] for r in small]), np.log([r["half_angle"] for r in small]), 1)[0]
    assert abs(slope - 1 / 3) < 0.01
