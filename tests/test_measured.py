"""`difimpact reproduce heelstrike-measured --quick`: the treadmill heel strikes through seed 002's impact map.
The reconstructed pre-impact states are checked against the data they were not built from (the heel marker's
velocity), and ξ against the theorem that blocking more joints loses more energy."""

import numpy as np
import pytest

from .helpers import reproduce_quick


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    return reproduce_quick(tmp_path_factory.mktemp("measured"), "heelstrike-measured")["heelstrike-measured"]


def test_states_move_the_heel_as_the_marker_does(rows):
    """The seven-link state is built from joint angles, joint rates and the hip's velocity; the heel marker's
    velocity (measured separately) is not used, yet the model's heel moves with it one frame before contact."""
    measured = [r for r in rows if r["trial"] == "treadmill" and r["rel_frame"] == -1]
    assert len(measured) == 6  # 3 heel strikes × 2 blocking cases
    for r in measured:
        assert abs(r["cal_vx_model"] - r["heel_vx_lead"]) < 0.05, r


def test_blocking_more_joints_dissipates_more(rows):
    """Adding constraints to an impulsive impact can only increase the kinetic energy lost (seed 003, eq. 21)."""
    by = {}
    for r in rows:
        by.setdefault((r["trial"], r["event"], r["rel_frame"]), {})[r["blocked"]] = r["xi"]
    assert len(by) == 7  # the default state and 3 heel strikes × 2 frames
    for key, xi in by.items():
        assert 0.0 < xi["none"] < xi["ankle+knee+hip"] < 1.0, key
    assert {r["trailing_foot"] for r in rows} <= {"stays", "lifts"}
    assert all(np.isfinite(r["T_minus"]) and r["T_minus"] > 0 for r in rows)
