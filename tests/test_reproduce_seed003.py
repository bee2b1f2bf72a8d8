"""`difimpact reproduce --quick` for seed 003: files, JSON rows and keys, and rows against seed 003's
closed forms (Appendix A mass matrix and Jacobian, eqs. 9–23 through M⁻¹ in NumPy)."""

import math

import numpy as np
import pytest


from .helpers import reproduce_quick
from .test_models import appendix_a_mass_matrix

NAMES = ("biped-step-length", "biped-torso")
KEYS = {"xi_I", "xi_L", "vSn", "Tc", "Ta"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce")
    return out, reproduce_quick(out, *NAMES)


FIGURES = {"biped-step-length": {"fig2_vSn", "fig3_energies", "fig4_indexes", "model_biped_with_torso"},
           "biped-torso": {"fig5_vSn", "fig6_energies", "fig7_indexes"}}


def test_files_and_keys(run):
    out, rows = run
    assert set(rows) == set(NAMES)
    assert set(rows["biped-step-length"][0]) == KEYS | {"mu", "q4_deg"}
    assert set(rows["biped-torso"][0]) == KEYS | {"mu_T", "q5_deg"}
    report = (out / "report.md").read_text()
    for name in NAMES:
        csv = (out / name / f"{name}.csv").read_text().splitlines()
        assert len(csv) == len(rows[name]) + 1
        assert f"## `{name}` — Font & Kövecses 2008, " in report
        figures = {p.stem for p in (out / name).glob("*.png")}
        assert figures == FIGURES[name]
        assert all(f"![{f}]({name}/{f}.png)" in report for f in figures)
    assert "✗" not in report.split("\n", 3)[3]


def _closed_form(mu, mu_T, q4, q5, m_fixed):
    """Seed 003 §4 with the M⁻¹ formulas (eqs. 9–23): v_c = M⁻¹Aᵀ(AM⁻¹Aᵀ)⁻¹A q̇⁻."""
    if m_fixed:  # §4.2: m = 5 kg, m_H + m_T = 20 kg
        m_H = 20.0 / (1 + mu_T)
        p = dict(m=5.0, m_H=m_H, m_T=mu_T * m_H)
    else:  # §4.1: m_T = 10 kg, 2m + m_H = 20 kg
        m_H = 20.0 / (1 + mu)
        p = dict(m=0.5 * mu * m_H, m_H=m_H, m_T=10.0)
    l = 0.8
    q = np.array([0, 0, q4 / 2, q4, q5])
    qd = np.array([0, 0, 1.0, 0, 1.0])
    M = appendix_a_mass_matrix(q, **p, l=l, b=0.4, l_T=0.4)
    A = np.array([[1, 0, l * np.cos(q[2]) - l * np.cos(q4 - q[2]), l * np.cos(q4 - q[2]), 0],
                  [0, 1, -l * np.sin(q[2]) - l * np.sin(q4 - q[2]), l * np.sin(q4 - q[2]), 0]])
    Minv = np.linalg.inv(M)
    vc = Minv @ A.T @ np.linalg.solve(A @ Minv @ A.T, A @ qd)
    T, Tc = 0.5 * qd @ M @ qd, 0.5 * vc @ M @ vc
    return dict(xi_I=Tc / T, xi_L=Tc / (2 * l * np.sin(q4 / 2)), vSn=(qd - vc)[1], Tc=Tc, Ta=T - Tc)


@pytest.mark.parametrize("name", NAMES)
def test_rows_match_closed_form(run, name):
    for r in run[1][name][:: 7]:
        if name == "biped-step-length":
            if r["mu"] == 0:
                continue  # singular M: checked through the limit in tests/test_impact_constrained.py
            ref = _closed_form(r["mu"], None, math.radians(r["q4_deg"]), math.radians(r["q4_deg"]) / 2, False)
        else:
            if r["mu_T"] == 0:
                continue
            ref = _closed_form(None, r["mu_T"], math.radians(30), math.radians(r["q5_deg"]), True)
        for k in KEYS:
            np.testing.assert_allclose(r[k], ref[k], rtol=1e-9, atol=1e-12)


def _limit(closed_form, h=1e-3):
    """``f(0⁺)`` of a function smooth in the mass ratio, from the closed forms at ``h … 4h`` (cubic
    extrapolation: truncation ``O(h⁴)``, rounding ``~15 ε cond(M) ∝ 1/h``; within 2e-10 of an 80-digit
    solve of the limit at q4 = 50°, tests/test_massless_sweep.py)."""
    f = [closed_form(k * h) for k in (1, 2, 3, 4)]
    return {k: 4 * f[0][k] - 6 * f[1][k] + 4 * f[2][k] - f[3][k] for k in f[0]}


def test_massless_rows_are_the_limit(run):
    """μ = 0 and μ_T = 0 rows: the limit of vanishing leg (torso) mass, extrapolated from the closed forms."""
    for r in run[1]["biped-step-length"]:
        if r["mu"] == 0:
            q4 = math.radians(r["q4_deg"])
            ref = _limit(lambda mu, q4=q4: _closed_form(mu, None, q4, q4 / 2, False))
            for k in KEYS:
                np.testing.assert_allclose(r[k], ref[k], rtol=1e-9, err_msg=k)
    for r in run[1]["biped-torso"]:
        if r["mu_T"] == 0:
            q5 = math.radians(r["q5_deg"])
            ref = _limit(lambda mu_T, q5=q5: _closed_form(None, mu_T, math.radians(30), q5, True))
            for k in KEYS:
                np.testing.assert_allclose(r[k], ref[k], rtol=1e-9, err_msg=k)
