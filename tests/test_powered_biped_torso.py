"""Optimal powered gaits of seed 003's biped with a torso (`difimpact reproduce gait-biped-torso-powered`) against
an independent CasADi + IPOPT transcription of the same problem (``benchmarks/_biped_torso_ipopt.py``: seed 003's
closed-form mass matrix, Lagrange's equations and the heel strike's KKT system in CasADi symbolics, its own
Hermite–Simpson transcription), at the experiment's quick mesh and, in the slow tests, at its full mesh."""

import importlib.util
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact.papers.font_kovecses_2008 import powered_gait as experiment

from .helpers import reproduce_quick, solved_once

ca = pytest.importorskip("casadi")

NAME = "gait-biped-torso-powered"
KEYS = {"mu_T", "cost", "xi_I", "trailing_lift_off_speed", "step_length", "speed"}
RTOL = 1e-6

# Kept out of the README's test command; the tests marked stage2 run in CI's second stage.
pytestmark = pytest.mark.slow


def _reference():
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "_biped_torso_ipopt.py"
    spec = importlib.util.spec_from_file_location("_biped_torso_ipopt", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


ref = _reference()


def _concrete(mu_T, segments):
    return None if isinstance(mu_T, jax.core.Tracer) else (float(mu_T), segments)


@pytest.fixture(scope="module", autouse=True)
def _solve_once():
    with solved_once(experiment, "optimal_step", _concrete):
        yield


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce_biped_torso")
    return out, reproduce_quick(out, NAME)[NAME]


@pytest.fixture(scope="module")
def ipopt():
    """IPOPT's solutions on the quick mesh, one per μ_T."""
    prob = ref.biped_torso_problem(experiment.QUICK_SEGMENTS)
    sols = {mu_T: prob.solve(params={"mu_T": mu_T}) for mu_T in experiment.MU_T}
    assert all(s["success"] and s["max_violation"] < 1e-9 for s in sols.values())
    return sols


def _compare_rows(rows, sols):
    for r in rows:
        s = sols[r["mu_T"]]
        for key, theirs in (("cost", s["cost"]), ("xi_I", s["xi_I"]), ("trailing_lift_off_speed", s["lift_off_speed"]),
                            ("step_length", s["step_length"])):
            np.testing.assert_allclose(r[key], theirs, rtol=RTOL, err_msg=f"{key} at μ_T = {r['mu_T']}")
        np.testing.assert_allclose(r["speed"], experiment.SPEED, rtol=1e-12)


def _compare_gait(gait, sol):
    """Trajectories (angles, rates, torques, with their signs) and the step's energies."""
    x = np.concatenate([np.asarray(gait.theta), np.asarray(gait.theta_dot)], axis=1)
    np.testing.assert_allclose(x, sol["states"], rtol=0, atol=RTOL * np.abs(sol["states"]).max())
    np.testing.assert_allclose(np.asarray(gait.u), sol["controls"], rtol=0, atol=RTOL * np.abs(sol["controls"]).max())
    np.testing.assert_allclose(float(gait.net_work), sol["net_work"], rtol=RTOL)
    np.testing.assert_allclose(float(gait.impact_loss), sol["impact_loss"], rtol=RTOL)


@pytest.mark.stage2
def test_files_and_keys(run):
    out, rows = run
    assert [r["mu_T"] for r in rows] == list(experiment.MU_T)
    assert all(set(r) == KEYS for r in rows)
    csv = (out / NAME / f"{NAME}.csv").read_text().splitlines()
    assert len(csv) == len(rows) + 1 and set(csv[0].split(",")) == KEYS
    assert f"## `{NAME}`" in (out / "report.md").read_text()
    assert list((out / NAME).glob("*.png"))


@pytest.mark.stage2
def test_quick_rows_match_ipopt(run, ipopt):
    """cost, ξ_I, the trailing foot's lift-off speed and the step length of every μ_T against IPOPT on the same
    mesh (40 segments)."""
    _compare_rows(run[1], ipopt)


@pytest.mark.stage2
def test_quick_gait_matches_ipopt(run, ipopt):
    """μ_T = 1: the whole solution (the experiment's, solved by `run`) against IPOPT's; the
    step's net actuator work and impact loss agree, and agree with each other (the energy balance)."""
    gait = experiment.optimal_step(jnp.asarray(1.0), experiment.QUICK_SEGMENTS)
    sol = ipopt[1.0]
    _compare_gait(gait, sol)
    assert abs(sol["net_work"] / sol["impact_loss"] - 1) < experiment.BALANCE_RTOL


@jax.jit
def _library_model(mu_T, x, u):
    walker = di.biped_torso_walker(experiment.biped(mu_T))

    def one(x, u):
        acc, _ = walker.dynamics(x[:3], x[3:], u)
        rates, sol = walker.heel_strike(x[:3], x[3:])
        return acc, rates, sol.xi_I, walker.lift_off_speed(sol), walker.swing_foot_position(x[:3])

    return jax.vmap(one)(x, u)


@pytest.mark.stage2
def test_model_matches_casadi(rng):
    """The library's walker (single stance, heel strike, relabelling, swing foot) against the reference's CasADi
    functions at random states and torques, for each μ_T."""
    p_sym = ca.SX.sym("p", len(ref.PARAM_NAMES))
    f, heel, foot, _, _ = ref._model(p_sym)
    x = rng.uniform(-1.0, 1.0, (16, 6)) * np.array([0.5, 1.0, 0.5, 2.0, 4.0, 2.0])
    u = rng.uniform(-30.0, 30.0, (16, 2))
    for mu_T in experiment.MU_T:
        pv = ref.biped_torso_problem(1, mu_T=mu_T).param_vector()
        acc, rates, xi, lift, pos = (np.asarray(a) for a in _library_model(jnp.asarray(mu_T), x, u))
        for i in range(x.shape[0]):
            np.testing.assert_allclose(acc[i], np.asarray(f(x[i], u[i], pv)).ravel()[3:], rtol=1e-10, atol=1e-10)
            out = heel(x[i], pv)
            np.testing.assert_allclose(rates[i], np.asarray(out[0]).ravel(), rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose([xi[i], lift[i]], [float(out[1]), float(out[2])], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(pos[i], np.asarray(foot(x[i, :3], pv)).ravel(), rtol=0, atol=1e-14)


@pytest.mark.stage2
def test_reference_self_test():
    """The reference's closed-form M (seed 003, eq. 26) equals ``Σ m JᵀJ``, its unpowered dynamics conserve energy,
    the torques' power is ``u·ω`` and its impact loses exactly ``T_c⁻``."""
    assert max(ref._self_test(n_states=20).values()) < 1e-10


@pytest.mark.slow
def test_full_mesh_matches_ipopt_and_is_converged():
    """The experiment's full mesh (80 segments), every μ_T, against IPOPT on that mesh; and IPOPT's rows on it
    against twice as many segments, to the experiment's stated six digits."""
    prob, fine = (ref.biped_torso_problem(n) for n in (experiment.SEGMENTS, 2 * experiment.SEGMENTS))
    for mu_T in experiment.MU_T:
        gait = experiment.optimal_step(jnp.asarray(mu_T), experiment.SEGMENTS)
        sol, sol_fine = prob.solve(params={"mu_T": mu_T}), fine.solve(params={"mu_T": mu_T})
        assert sol["success"] and sol_fine["success"]
        row = {"mu_T": mu_T, "cost": float(gait.cost), "xi_I": float(gait.xi_I),
               "trailing_lift_off_speed": float(gait.lift_off_speed), "step_length": float(gait.step_length),
               "speed": float(gait.speed)}
        _compare_rows([row], {mu_T: sol})
        _compare_gait(gait, sol)
        for key, k in (("cost", "cost"), ("xi_I", "xi_I"), ("trailing_lift_off_speed", "lift_off_speed")):
            assert abs(row[key] / sol_fine[k] - 1) < experiment.MESH_RTOL, (key, mu_T)
