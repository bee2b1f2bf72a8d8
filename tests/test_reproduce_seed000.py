"""`difimpact reproduce --quick` for seed 000's experiments: files, report and JSON rows, checked against
closed forms of seed 000 written out in NumPy (eq. 8 for μ_c; eq. 10 for a sticking end; eq. 22 for sliding
throughout), independent of the library's frictional map."""

import math

import numpy as np
import pytest

import difimpact as di

from .helpers import reproduce_quick

GRID_KEYS = {"method", "mu", "q3_deg", "q5dot", "Pn", "Pt", "Wn", "Wt", "vnP", "vtQ", "regime"}
TABLE3_KEYS = {"kn_factor", "chi_factor", "Pn", "Pt", "Pn_paper", "Pt_paper", "peak_Fn", "duration"}


def _delassus(q3_deg, q5dot):
    """Contact quantities of the pre-impact state in NumPy: ``W = A M⁻¹ Aᵀ`` and ``v⁻ = A q̇⁻``."""
    model = di.CrutchWalker()
    q, qdot = (np.asarray(a) for a in model.pre_impact_state(math.radians(q3_deg), q5dot))
    A = np.asarray(model.contact_jacobian(q, "Q"))
    return A @ np.linalg.inv(np.asarray(model.mass_matrix(q))) @ A.T, A @ qdot


def _files(out, name, figure, rows):
    assert (out / name / f"{figure}.png").stat().st_size > 10_000
    assert len((out / name / f"{name}.csv").read_text().splitlines()) == len(rows) + 1
    report = (out / "report.md").read_text()
    assert f"## `{name}` — Font-Llagunes et al. 2012, " in report and "seed 000" not in report
    assert f"![{figure}]({name}/{figure}.png)" in report
    return report


def test_critical_friction_rows_match_eq8(tmp_path):
    rows = reproduce_quick(tmp_path, "crutch-critical-friction")["crutch-critical-friction"]
    _files(tmp_path, "crutch-critical-friction", "fig3_mu_c", rows)
    assert [r["q3_deg"] for r in rows] == list(range(3, 22, 3))
    for r in rows:
        assert set(r) == {"q3_deg", "mu_c"}
        W, _ = _delassus(r["q3_deg"], 0.0)
        np.testing.assert_allclose(r["mu_c"], abs(W[0, 1]) / W[1, 1], rtol=1e-10)  # seed 000, eq. 8


@pytest.mark.slow
def test_grid_and_table3(tmp_path):
    """Both compliant experiments in one run (one compilation of the compliant solve)."""
    rows = reproduce_quick(tmp_path, "crutch-grid", "crutch-table3")
    grid, table = rows["crutch-grid"], rows["crutch-table3"]
    _files(tmp_path, "crutch-grid", "fig8_impulses_mu0.75", grid)
    report = _files(tmp_path, "crutch-table3", "fig20_forces_kn", table)
    assert "| 1 k_n | 1 χ | 14.409 |" in report  # Table 3 side by side
    assert all(set(r) == GRID_KEYS for r in grid)
    assert {r["mu"] for r in grid} == {0.5, 0.75, 1.0}
    impulsive = [r for r in grid if r["method"] == "impulsive"]
    compliant = {(r["mu"], r["q3_deg"], r["q5dot"]): r for r in grid if r["method"] == "compliant"}
    assert len(impulsive) == len(compliant)
    for r in impulsive:
        W, v = _delassus(r["q3_deg"], r["q5dot"])
        if r["regime"] == "stick":  # eq. 10: both directions blocked, P = −W⁻¹ v⁻
            np.testing.assert_allclose([r["Pn"], r["Pt"]], -np.linalg.solve(W, v), rtol=1e-9)
            assert r["Wt"] == pytest.approx(0.0, abs=1e-12)
        if r["regime"] == "slide":  # eq. 22: P_n = −v_n⁻ / A_n M⁻¹(A_nᵀ − μσA_tᵀ), P_t = −μσP_n
            sigma = np.sign(v[1])
            pn = -v[0] / (W[0, 0] - r["mu"] * sigma * W[0, 1])
            np.testing.assert_allclose([r["Pn"], r["Pt"]], [pn, -r["mu"] * sigma * pn], rtol=1e-9)
        # Same regime for the compliant solve, impulses close (the gap is the finite contact time).
        c = compliant[(r["mu"], r["q3_deg"], r["q5dot"])]
        assert c["regime"] == r["regime"]
        assert c["Pn"] == pytest.approx(r["Pn"], rel=0.1)
    assert all(set(r) == TABLE3_KEYS for r in table)
    for r in table:
        assert r["Pn"] == pytest.approx(r["Pn_paper"], rel=0.01)
        assert r["Pt"] == pytest.approx(r["Pt_paper"], rel=0.01)
        assert r["peak_Fn"] > 0 and 0 < r["duration"] < 0.01
