"""The seven-link human's tracking gait (:mod:`difimpact._human_gait.tracking`): the measured reference against the
packaged files read independently (Winter's cycle and the heel-strike frames extracted from it by another
script), the tracking cost against its closed form, and (``slow``) the solved gait against the measured ±1 SD
and against IPOPT on the same transcription."""

import csv
import importlib.resources
import importlib.util
import pathlib

import jax.numpy as jnp
import numpy as np
import pytest

from difimpact import SevenLinkHuman
from difimpact._human_gait import gait as hg
from difimpact._human_gait import tracking as tr
from difimpact._human_gait.problem import IT, ITAU, S

DATA = importlib.resources.files("difimpact") / "data" / "gait"


def _raw(name):
    with (DATA / name).open() as fh:
        return list(csv.DictReader(ln for ln in fh if not ln.startswith("#")))


def test_reference_is_the_raw_file_resampled():
    """At the file's samples the reference is the file's columns in the model's signs; between them it is smooth
    (within 0.01 rad / 0.03 body weights of the samples' linear interpolant, far below the SDs)."""
    rows = _raw(tr.DATA)
    ref = tr.winter_normal()
    pct = np.array([float(r["pct_cycle"]) for r in rows])
    assert np.allclose(pct, np.arange(50) * 2.0)
    signs = {"hip_flexion": -1, "knee_angle": -1, "ankle_angle": -1, "GRF_x": 1, "GRF_y": 1}
    raw = np.array([[s * float(r[k]) for k, s in signs.items()] for r in rows])
    raw_sd = np.array([[float(r[f"{k}_sd"]) for k in signs] for r in rows])
    mean, sd = (np.asarray(a) for a in ref.at(jnp.asarray(pct)))
    assert np.max(np.abs(mean - raw)) < 1e-12 and np.max(np.abs(sd - raw_sd)) < 1e-12
    mid = pct + 1.0
    lin = np.stack([np.interp(mid, pct, raw[:, j], period=100.0) for j in range(5)], axis=1)
    gap = np.abs(np.asarray(ref.at(jnp.asarray(mid))[0]) - lin)
    assert np.max(gap[:, :3]) < 0.01 and np.max(gap[:, 3:]) < 0.03
    assert float(ref.step_time) == pytest.approx(1.1396 / 2) and float(ref.speed) == pytest.approx(1.325)


def test_reference_matches_the_independent_heel_strike_extraction():
    """``heelstrike_winter_normal.csv`` (extracted from the same .mat file by another script, in degrees with
    OpenSim's knee sign) gives the leading and trailing legs around each heel strike: the reference's right leg at
    its % and the step's left leg (:meth:`~difimpact._human_gait.tracking.MeasuredGait.step`, half a cycle later)
    agree; the SDs at the right heel strike are those the provenance notes state (hip 5.6°, knee 4.2°, ankle
    3.9°; the other leg 8.2°, 5.1°, 5.7°)."""
    ref = tr.winter_normal()
    for r in _raw("heelstrike_winter_normal.csv"):
        if r["event"] != "R_HS@0%":
            continue
        s = (float(r["pct_cycle"]) % 100.0) / 50.0  # fraction of the model's step (beyond 1: the next step)
        mean, _ = ref.step(jnp.asarray(s))
        lead = -np.degrees(np.asarray(mean[:3]))
        trail = -np.degrees(np.asarray(mean[3:6]))
        assert lead == pytest.approx([float(r[f"{k}_lead"]) for k in ("hip_flex", "knee_flex", "ankle_dorsi")]
                                     * np.array([1, -1, 1]), abs=6e-3)
        assert trail == pytest.approx([float(r[f"{k}_trail"]) for k in ("hip_flex", "knee_flex", "ankle_dorsi")]
                                      * np.array([1, -1, 1]), abs=6e-3)
    _, sd = ref.step(jnp.asarray(0.0))
    assert np.degrees(np.asarray(sd[:6])) == pytest.approx([5.6, 4.2, 3.9, 8.2, 5.1, 5.7], abs=0.05 + 1e-9)  # to 0.1°


def _reference_trajectory(problem, ref, stretch=1.0):
    """States and contact forces of a step that is the reference: each point at its phase's share of the measured
    step time (times `stretch`), the joints at the measured means, the measured forces on the heels."""
    G, T = problem.offsets[-1], float(ref.step_time)
    tau = stretch * T * np.array([0.2, 0.1, 0.4, 0.3])
    p = np.repeat(np.arange(4), problem.points)
    s = np.concatenate([np.linspace(0.0, 1.0, g) for g in problem.points])
    t = np.concatenate([[0.0], np.cumsum(tau)])[p] + tau[p] * s
    mean, _ = (np.asarray(a) for a in ref.step(jnp.asarray(t / T)))  # the reference is taken at 50 t / T_m %
    x = np.zeros((G, S))
    x[:, 3:9], x[:, IT], x[:, ITAU] = mean[:, :6], t, tau[p]
    weight = 75.0 * float(problem.model.g)
    lam = np.zeros((G, 8))
    lam[:, [1, 0, 5, 4]] = weight * mean[:, 6:]  # CAL_R (t, n), CAL_L (t, n) = (F_x, F_y) of each foot
    return x, lam, mean


def test_tracking_cost_is_zero_on_the_reference_and_quadratic_off_it():
    """``J_track`` is zero on the reference; moving one joint by ``c σ(t)`` along the whole step costs
    ``w_θ c²``, one force by ``c σ_F(t)`` costs ``w_F c²`` (a constant integrand: exact quadrature over the measured
    step time), and the reference followed over a step ``δ`` too long costs ``w_T (δ / σ_T)²`` alone."""
    ref = tr.winter_normal()
    target = tr.tracking_target(ref, angle_weight=2.0, grf_weight=0.3, time_weight=0.7)
    problem = hg.make_problem(SevenLinkHuman(), 1.325, segments=(3, 2, 4, 3), method="hermite-simpson",
                              friction=0.8, torque_max=300.0, duration_bounds=hg.DURATIONS, tracking=target)
    x, lam, _ = _reference_trajectory(problem, ref)
    _, sd = (np.asarray(a) for a in ref.step(jnp.asarray(x[:, IT] / float(ref.step_time))))
    cost = lambda x, lam: float(target.integral(problem, jnp.asarray(x), jnp.asarray(lam)))
    assert abs(cost(x, lam)) < 1e-24
    knee = x.copy()
    knee[:, 7] += 1.5 * sd[:, 4]
    assert cost(knee, lam) == pytest.approx(2.0 * 1.5**2, rel=1e-12)
    push = lam.copy()
    push[:, 0] += 75.0 * float(problem.model.g) * 0.5 * sd[:, 7]
    assert cost(x, push) == pytest.approx(0.3 * 0.5**2, rel=1e-12)
    late, late_lam, _ = _reference_trajectory(problem, ref, stretch=1.02)
    assert cost(late, late_lam) == pytest.approx(0.7 * (0.02 * 1.1396 / 2 / 0.025) ** 2, rel=1e-12)



def test_agreement_of_the_reference_itself():
    """A step that is the reference (right leg and foot over its first half cycle, left over the second) agrees
    with it: all of the cycle within ±1 SD, RMS differences of the linear interpolation between 401 points only."""
    import types

    ref = tr.winter_normal()
    human = SevenLinkHuman()
    t = np.linspace(0.0, 0.6, 401)
    mean, _ = (np.asarray(a) for a in ref.step(jnp.asarray(t / 0.6)))
    q = np.concatenate([np.zeros((t.size, 3)), mean[:, :6]], axis=1)
    grf = 75.0 * float(human.g) * mean[:, 6:].reshape(-1, 2, 2)
    gait = types.SimpleNamespace(t=t, q=q, grf=grf, problem=types.SimpleNamespace(model=human))
    agree = tr.agreement(gait, ref)
    assert all(a["within"] == 1.0 for a in agree.values())
    assert max(agree[j]["rms"] for j in ("hip", "knee", "ankle")) < 0.01  # degrees
    assert max(agree[f]["rms"] for f in ("Fx", "Fy")) < 1e-3  # body weights

def _ipopt(problem, z0, max_iter=300, tol=1e-9):
    """IPOPT (casadi; a test-side reference, never a library dependency) on the same transcription, with the exact
    Hessian of the Lagrangian from JAX (``benchmarks/_human_ipopt.py``). Returns ``(z, stats)``."""
    pytest.importorskip("casadi")
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "_human_ipopt.py"
    spec = importlib.util.spec_from_file_location("_human_ipopt", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.HumanIpopt(problem, max_iter=max_iter, tol=tol).solve(z0)


@pytest.fixture(scope="module")
def experiment():
    from difimpact.papers.ros_2015 import tracked_gait as gait_human_tracking

    return gait_human_tracking


@pytest.fixture(scope="module")
def ipopt_gait(experiment):
    """IPOPT's optimum of the quick mesh from the experiment's guess, as a :class:`~difimpact._human_gait.HumanGait`."""
    import types

    ref = experiment.reference()
    problem = hg.make_problem(SevenLinkHuman(), ref.speed, segments=experiment.QUICK_SEGMENTS,
                              method="hermite-simpson", friction=0.8, torque_max=300.0,
                              duration_bounds=hg.DURATIONS, tracking=tr.tracking_target(ref))
    z, stats = _ipopt(problem, hg.initial_guess(problem, float(ref.step_length)))
    assert stats["success"], stats["return_status"]
    z = jnp.asarray(z)
    sol = types.SimpleNamespace(x=z, value=problem.objective(z), result=None, iterations=stats["iter_count"])
    return hg._gait(problem, sol)


@pytest.mark.slow
def test_ipopt_tracking_within_the_measured_sd(ipopt_gait):
    """The transcription's optimum (IPOPT) has every joint angle within Winter's mean ± 1 SD over ≥ 90 % of the
    cycle (the issue's acceptance), non-negative normal forces, and a step time within the measured SD."""
    agree = tr.agreement(ipopt_gait)
    assert min(agree[j]["within"] for j in ("hip", "knee", "ankle")) >= 0.9
    assert float(jnp.min(ipopt_gait.grf[:, :, 1])) > -1e-6
    assert abs(float(ipopt_gait.step_time) - 1.1396 / 2) < 0.025


@pytest.mark.slow
def test_library_tracking_gait_is_ipopts_optimum(experiment, ipopt_gait):
    """The library's solve from the same guess converges to IPOPT's optimum (cost to 1e-6, variables to 1e-4) and
    so is within the measured ±1 SD (no residual forces: the model has none)."""
    gait = experiment.solve(experiment.QUICK_SEGMENTS)
    assert int(gait.result._value) == 0
    assert float(gait.cost) == pytest.approx(float(ipopt_gait.cost), rel=1e-6)
    assert np.max(np.abs(np.asarray(gait.solution.x) - np.asarray(ipopt_gait.solution.x))) < 1e-4
    assert min(tr.agreement(gait)[j]["within"] for j in ("hip", "knee", "ankle")) >= 0.9
