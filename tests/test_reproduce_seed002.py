"""`difimpact reproduce heelstrike-torso --quick --json`: rows, CSV, figure and report section (issue 6)."""

import contextlib
import csv
import io
import json

import numpy as np
import pytest

import _difimpact_cli

KEYS = {"blocked", "dtheta_deg", "omega0", "xi", "T_minus", "Tc_minus", "Ta_minus", "Tc_plus", "vn_heel",
        "Pn_heel", "Pt_heel", "Pn_trailing", "vn_trailing", "trailing_foot"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce")
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = _difimpact_cli.main(["reproduce", "heelstrike-torso", "--quick", "--out", str(out), "--json", "--quiet"])
    assert code == 0
    return out, [json.loads(line) for line in stdout.getvalue().splitlines() if line.strip()]


def test_json_rows(run):
    _, lines = run
    assert [obj["experiment"] for obj in lines] == ["heelstrike-torso"]
    rows = lines[0]["rows"]
    assert {r["blocked"] for r in rows} == {"ankle", "ankle+knee", "ankle+knee+hip"}
    for r in rows:
        assert set(r) == KEYS
        assert r["omega0"] == -1.0 and -20.0 <= r["dtheta_deg"] <= 20.0
        assert r["trailing_foot"] in ("stays", "lifts", "no consistent set")
        # eq. 17 (T = T_c + T_a) and eq. 23 (ξ = (T_c⁻ − T_c⁺)/T⁻) between columns
        assert r["Tc_minus"] + r["Ta_minus"] == pytest.approx(r["T_minus"], rel=1e-12)
        assert r["xi"] == pytest.approx((r["Tc_minus"] - r["Tc_plus"]) / r["T_minus"], rel=1e-10)
        assert r["vn_heel"] < 0 < r["Pn_heel"]


def test_files(run):
    out, lines = run
    folder = out / "heelstrike-torso"
    with open(folder / "heelstrike-torso.csv") as f:
        table = list(csv.DictReader(f))
    rows = lines[0]["rows"]
    assert len(table) == len(rows)
    np.testing.assert_allclose([float(t["xi"]) for t in table], [r["xi"] for r in rows], rtol=1e-15)
    png = (folder / "fig6_xi.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    report = (out / "report.md").read_text()
    assert "## `heelstrike-torso` — Ros et al. 2015, Fig. 6" in report
    assert "_J. Ros, J. M. Font-Llagunes, A. Plaza & J. Kövecses (2015). Dynamic considerations" in report
    assert "![fig6_xi](heelstrike-torso/fig6_xi.png)" in report
    assert report.count("| ✓ |") + report.count("| ✗ |") >= 8
    checks = lines[0]["checks"]  # --json carries the report's checks
    assert [c["ok"] for c in checks].count(True) == report.count("| ✓ |")
    assert len(checks) == report.count("| ✓ |") + report.count("| ✗ |")
    assert set(checks[0]) == {"statement", "paper", "ours", "ok"} and lines[0]["paper"].startswith("J. Ros")
