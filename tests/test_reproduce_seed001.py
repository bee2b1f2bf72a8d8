"""`difimpact reproduce --quick` for seed 001's experiments: files, JSON rows, and the impulsive rows against
seed 001's closed form (eq. 8, through M⁻¹ in NumPy, independent of the library's KKT solve)."""

import math

import numpy as np
import pytest

import difimpact as di

from .helpers import reproduce_quick

NAMES = ("compass-foot-radius", "crutch-hip-angle")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce")
    return out, reproduce_quick(out, *NAMES)


def _eq8(M, A, qdot):
    """Seed 001, eq. 8: q̇⁺ = [I − M⁻¹Aᵀ(A M⁻¹ Aᵀ)⁻¹A] q̇⁻."""
    Minv = np.linalg.inv(M)
    return qdot - Minv @ A.T @ np.linalg.solve(A @ Minv @ A.T, A @ qdot)


def test_files_and_keys(run):
    out, rows = run
    assert set(rows) == set(NAMES)
    assert set(rows["compass-foot-radius"][0]) == {"method", "q3_deg", "R", "energy_loss", "vy_trailing", "v_hip"}
    assert set(rows["crutch-hip-angle"][0]) == {"method", "q3_deg", "q4_deg", "energy_loss", "vy_feet",
                                                "v_shoulder"}
    report = (out / "report.md").read_text()
    for name, fig in zip(NAMES, ("fig3", "fig5")):
        assert (out / name / f"{fig}.png").stat().st_size > 10_000
        csv = (out / name / f"{name}.csv").read_text().splitlines()
        assert len(csv) == len(rows[name]) + 1
        assert f"## `{name}` — Font-Llagunes et al. 2010, " in report
        assert f"![{fig}]({name}/{fig}.png)" in report


def test_compass_rows_match_eq8(run):
    rows = run[1]["compass-foot-radius"]
    assert {r["method"] for r in rows} == {"impulsive"}  # --quick: the compliant side is skipped
    for r in rows:
        model = di.CompassGait(R=r["R"])
        q, qdot = (np.asarray(a) for a in model.pre_impact_state(math.radians(r["q3_deg"])))
        M = np.asarray(model.mass_matrix(q))
        plus = _eq8(M, np.asarray(model.contact_jacobian(q, "swing_foot")), qdot)
        loss = 0.5 * qdot @ M @ qdot - 0.5 * plus @ M @ plus
        hip = np.linalg.norm(np.asarray(model.point_jacobian(q, "H")) @ plus)
        np.testing.assert_allclose([r["energy_loss"], r["vy_trailing"], r["v_hip"]], [loss, plus[1], hip],
                                   rtol=1e-9, atol=1e-12)
    at_l = [r for r in rows if r["R"] == 1.0]
    assert len(at_l) == 1 and abs(at_l[0]["energy_loss"]) < 1e-12  # no collision at R = l (seed 001 §5.1)


def test_crutch_rows_match_eq8(run):
    rows = run[1]["crutch-hip-angle"]
    model = di.CrutchWalker()
    for r in rows:
        q, _ = model.pre_impact_state(math.radians(r["q3_deg"]), 0.0, q4=math.radians(r["q4_deg"]))
        q = np.asarray(q)
        qdot = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])  # seed 001 §5.2: only q̇3⁻ = 1 rad/s
        M = np.asarray(model.mass_matrix(q))
        plus = _eq8(M, np.asarray(model.contact_jacobian(q, "Q")), qdot)
        loss = 0.5 * qdot @ M @ qdot - 0.5 * plus @ M @ plus
        vP = np.asarray(model.point_jacobian(q, "P")) @ plus
        vS = np.asarray(model.point_jacobian(q, "S")) @ plus
        np.testing.assert_allclose([r["energy_loss"], r["vy_feet"], r["v_shoulder"]],
                                   [loss, vP[1], np.linalg.norm(vS)], rtol=1e-9, atol=1e-12)
