"""Kelly's five-link biped (:func:`difimpact.kelly_gait`) against independent references: CasADi/IPOPT's optimum of
the same transcription (``benchmarks/_kelly_ipopt.py``: its own equations, derived with CasADi, and IPOPT), Kelly's
published cost (Kelly 2017, §7: 469.5507 on his mesh), and the optimum integrated forward under its interpolated
torques with OptimTraj's generated equations (``tests/_kelly_five_link.py``) by scipy's DOP853 and mapped through
Kelly's heel strike, which must return to the step's first state; and ``difimpact reproduce gait-five-link
--quick``.

The solves are the experiment's jitted ones (:func:`difimpact.papers.gait_classics.kelly_2017.solve`), compiled once
per process, and each optimum is solved once: the quick experiment takes the tests' optima on Kelly's mesh,
12 segments and the 9-segment trapezoid (:func:`tests.helpers.solved_once`)."""

import importlib.util
import pathlib
import sys

import jax
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from difimpact.papers.gait_classics import kelly_2017 as experiment

from . import _kelly_five_link as kelly
from .helpers import reproduce_quick, solved_once

HS, TRAPEZOID = experiment.HS, experiment.TRAPEZOID
KELLY_COST = 469.5507

# Kept out of the README's test command; the tests marked stage2 run in CI's second stage.
pytestmark = pytest.mark.slow


def _load_ipopt():
    pytest.importorskip("casadi")
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "_kelly_ipopt.py"
    spec = importlib.util.spec_from_file_location("_kelly_ipopt", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module", autouse=True)
def _solve_once():
    # the guess is an optimum held in the memo, so its id stays that optimum's
    with solved_once(experiment, "solve", lambda method, segments, guess=None: (method, segments, id(guess))):
        yield


@pytest.fixture(scope="module")
def ipopt():
    return _load_ipopt()


@pytest.fixture(scope="module")
def hs6():
    return experiment.solve(HS, 6)


@pytest.fixture(scope="module")
def hs12(hs6):
    return experiment.solve(HS, 12, hs6)


@pytest.fixture(scope="module")
def trapezoid9():
    return experiment.solve(TRAPEZOID, 9)


@pytest.fixture(scope="module")
def hs24(hs12):
    return experiment.solve(HS, 24, hs12)


def _kelly_grid(gait):
    """Ours at the grid points in Kelly's terms: states ``(G, 10)`` (his angles and rates) and torques ``(G, 5)``
    (``u1 = 0``; ``u2..u5 = −u``: :meth:`~difimpact.FiveLinkBiped.kelly_to_actuator_torques`)."""
    q, qd = jax.vmap(lambda th, thd: experiment.kelly_state(gait, th, thd))(gait.theta, gait.theta_dot)
    u = np.asarray(gait.u)
    return np.hstack([q, qd]), np.hstack([np.zeros((u.shape[0], 1)), -u])


def _against_ipopt(gait, reference, cost_rtol, grid_atol):
    assert experiment.converged(gait) and reference["success"]
    assert abs(float(gait.cost) / reference["cost"] - 1) <= cost_rtol
    states, controls = _kelly_grid(gait)
    assert states.shape == reference["states"].shape and controls.shape == reference["controls"].shape
    np.testing.assert_allclose(states, reference["states"], rtol=0, atol=grid_atol)
    np.testing.assert_allclose(controls, reference["controls"], rtol=0, atol=grid_atol * 100)  # N m, ~100


@pytest.mark.stage2
def test_kelly_mesh_equals_ipopt(hs6, ipopt):
    """Kelly's mesh from his guess: the cost to 1e-9 (2e-12 measured), grid states to 1e-8 rad, rad/s (6e-11) and
    torques to 1e-6 N m (5e-10); and Kelly's published J to 1e-4 (his fmincon stopped at TolFun 1e-3)."""
    reference = ipopt.kelly_problem(HS, segments=6).solve()
    _against_ipopt(hs6, reference, 1e-9, 1e-8)
    assert abs(float(hs6.cost) / KELLY_COST - 1) <= 1e-4
    assert int(hs6.iterations) <= 3 * reference["iterations"]


@pytest.mark.stage2
def test_trapezoid_equals_ipopt(trapezoid9, ipopt):
    """Trapezoidal collocation, 10 grid points (9 segments), from Kelly's guess: as Kelly's mesh (measured: cost
    2e-14, states 3e-11, torques 2e-10)."""
    reference = ipopt.kelly_problem(TRAPEZOID, n_grid=10).solve()
    _against_ipopt(trapezoid9, reference, 1e-9, 1e-8)


def _hs_torque(gait, t):
    """Hermite–Simpson's quadratic torque through a segment's ends and midpoint (Kelly 2017, eq. 4.10), Kelly's
    ``u1..u5``."""
    T, N, U = float(gait.step_time), gait.problem.segments, np.asarray(gait.u)
    k = min(int(t // (T / N)), N - 1)
    s = t * N / T - k
    u = 2 * (s - 0.5) * (s - 1) * U[2 * k] - 4 * s * (s - 1) * U[2 * k + 1] + 2 * s * (s - 0.5) * U[2 * k + 2]
    return np.concatenate([[0.0], -u])


def closure_error(gait):
    """``max |x⁺ − x_0|``: Kelly's state at the first grid point integrated over ``[0, T]`` with OptimTraj's
    equations under the interpolated torques (DOP853, rtol = atol = 1e-12, restarted at each segment's end where
    the torque has a kink), mapped through OptimTraj's heel strike (``cst_heelStrike.m``)."""
    p = kelly.parameters()
    states, _ = _kelly_grid(gait)
    T, N = float(gait.step_time), gait.problem.segments

    def rhs(t, x):
        return np.concatenate([x[5:], kelly.dynamics(x[:5], x[5:], _hs_torque(gait, t), p)])

    x = states[0]
    for a, b in zip(np.linspace(0, T, N + 1)[:-1], np.linspace(0, T, N + 1)[1:]):
        x = solve_ivp(rhs, (a, b), x, method="DOP853", rtol=1e-12, atol=1e-12).y[:, -1]
    q_plus, dq_plus = kelly.heel_strike(x[:5], x[5:], p)
    return float(np.max(np.abs(np.concatenate([q_plus, dq_plus]) - states[0])))


@pytest.mark.stage2
def test_closure_decreases_with_the_mesh(hs6, hs12):
    """The collocation's error, seen as the integrated gait's failure to close, falls with the mesh at about the
    method's order (a ratio of 7.3 from 6 to 12 segments: order 2.9); the library's own closure (PoweredBiped's
    equations, diffrax's Dopri8) equals this independent one."""
    e6, e12 = closure_error(hs6), closure_error(hs12)
    assert e12 < e6 / 5
    assert abs(float(experiment.closure(hs12)) / e12 - 1) < 1e-6


@pytest.mark.slow
def test_closure_order(hs6, hs12, hs24):
    e = [closure_error(g) for g in (hs6, hs12, hs24)]
    orders = np.log2(np.array(e[:-1]) / np.array(e[1:]))
    assert np.all(orders > 2.5), orders


@pytest.mark.slow
def test_finest_mesh_closes(hs24):
    """Doubled to 192 segments (each warm from the last), where the cost has converged to six digits: the cost
    is IPOPT's to 1e-9 on each mesh, and the gait closes to 1e-5 (7e-5 at 96 segments: the error falls as h⁴)."""
    gait = hs24
    for n in (48, 96, 192):
        gait = experiment.solve(HS, n, gait)
        assert experiment.converged(gait)
        assert abs(float(gait.cost) / experiment.IPOPT[HS, n] - 1) <= 1e-9
    assert closure_error(gait) <= 1e-5


KEYS = {"method", "segments", "cost", "iterations", "impact_loss", *(f"q{i}_minus" for i in range(1, 6)),
        *(f"qd{i}_minus" for i in range(1, 6)), *(f"qd{i}_plus" for i in range(1, 6))}


@pytest.mark.stage2
def test_reproduce_quick(tmp_path, hs6, hs12, trapezoid9, ipopt):
    """The quick run's rows: Kelly's mesh and 12 segments (Hermite–Simpson), 9 segments (trapezoid), each the
    tests' optimum (its cost and iterations in the row); the heel-strike state equal to IPOPT's last grid state
    and its post-impact rates to IPOPT's first, in Kelly's angles."""
    rows = reproduce_quick(tmp_path, "gait-five-link")["gait-five-link"]
    assert [(r["method"], r["segments"]) for r in rows] == [(HS, 6), (HS, 12), (TRAPEZOID, 9)]
    assert all(set(r) == KEYS for r in rows)
    for r, gait in zip(rows, (hs6, hs12, trapezoid9)):
        assert r["cost"] == pytest.approx(float(gait.cost), rel=1e-12) and r["iterations"] == int(gait.iterations)
    reference = ipopt.kelly_problem(HS, segments=6).solve()
    minus = np.array([[rows[0][f"q{i}_minus"] for i in range(1, 6)], [rows[0][f"qd{i}_minus"] for i in range(1, 6)]])
    np.testing.assert_allclose(minus.reshape(-1), reference["states"][-1], atol=1e-8)
    np.testing.assert_allclose([rows[0][f"qd{i}_plus"] for i in range(1, 6)], reference["states"][0, 5:], atol=1e-8)
    assert rows[0]["impact_loss"] > 0
    csv = (tmp_path / "gait-five-link" / "gait-five-link.csv").read_text().splitlines()
    assert len(csv) == len(rows) + 1 and "## `gait-five-link`" in (tmp_path / "report.md").read_text()
    assert len(list((tmp_path / "gait-five-link").glob("*.png"))) == 2
