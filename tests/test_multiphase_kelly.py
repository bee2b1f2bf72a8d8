"""Kelly's five-link biped and Font & Kövecses's biped with a torso as instances of the multi-phase transcription (a
step in single support, :mod:`difimpact._collocation.stance`: the stance foot as the base, the heel strike and the
relabelling as the transition, the cost and the constraints as objects), which :func:`difimpact.optimal_gait` and
:func:`difimpact.kelly_gait` solve: their optima equal those measured through a joint-variable transcription of
the same problems to 1e-9 relative, the layer's own entry point (:func:`~difimpact._collocation.stance.stance_gait`)
gives the same, and IPOPT's on Kelly's mesh (CasADi, ``benchmarks/_kelly_ipopt.py``) is the same."""

import importlib.util
import pathlib
import sys

import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact._collocation import stance
from difimpact._collocation.stance_terms import (
    AngleLimits,
    PerDistance,
    SwingFootDescending,
    SwingFootRising,
)
from difimpact._nlp import NLPResults
from difimpact._powered.walkers import KELLY_GUESS
from difimpact.papers.font_kovecses_2008 import powered_gait as torso

# Two solves of Kelly's problem and two of the biped's, each compiled once: CI's second stage.
pytestmark = pytest.mark.slow  # by hand (`-m slow`), as the multi-phase layer's other layouts: CI's 30 minutes

TORSO_SEGMENTS = 8
# The optima of `kelly_gait()` and of the experiment's `optimal_gait` at TORSO_SEGMENTS (μ_T = 0.5, 1, 2), measured
# through a joint-variable transcription of the same problems (one column of the step time, no per-point
# duration): a regression anchor.
JOINT_VARIABLE_OPTIMA = {"kelly": 469.54724450411817, 0.5: 254.52953281849182, 1.0: 281.1050949005106,
                         2.0: 292.895948303504}


@pytest.fixture(scope="module")
def kelly():
    """Kelly's problem on his mesh (Hermite–Simpson, 6 segments): ``kelly_gait()`` and the layer's instance of
    the same problem, from his guess."""
    old = di.kelly_gait()
    return old, stance.stance_gait(stance.from_gait_problem(old.problem), jnp.asarray(KELLY_GUESS, float))


def _same_optimum(new, old, cost_rtol=1e-9, atol=1e-8):
    assert new.result == NLPResults.successful and old.result == NLPResults.successful
    assert abs(float(new.cost) / float(old.cost) - 1) <= cost_rtol
    np.testing.assert_allclose(new.q, old.theta, rtol=0, atol=atol)
    np.testing.assert_allclose(new.qdot, old.theta_dot, rtol=0, atol=atol)
    np.testing.assert_allclose(new.u, old.u, rtol=0, atol=atol * 100)  # N m, ~100
    np.testing.assert_allclose(new.t, old.t, rtol=0, atol=atol)
    np.testing.assert_allclose(new.forces, old.ground_force[:, ::-1], rtol=0, atol=atol * 1e3)  # N, ~500
    np.testing.assert_allclose(new.impact.xi_I, old.xi_I, rtol=0, atol=atol)


def test_kelly_equals_kelly_gait(kelly):
    """The same optimum on Kelly's mesh (measured: cost 2.5e-12 relative, angles 2e-12 rad, torques 7e-11 N m),
    in as few interior-point iterations as a few more than ``kelly_gait()``'s."""
    old, new = kelly
    _same_optimum(new, old)
    for gait in (old, new):
        assert abs(float(gait.cost) / JOINT_VARIABLE_OPTIMA["kelly"] - 1) <= 1e-9
    assert float(new.step_time) == pytest.approx(0.7, abs=1e-12)
    assert float(new.step_length) == pytest.approx(0.5, abs=1e-12)
    assert int(new.iterations) <= int(old.iterations) + 5


def test_kelly_equals_ipopt(kelly):
    """IPOPT's optimum of the same transcription (an independent one: its own equations, derived with CasADi) to
    1e-9 relative."""
    pytest.importorskip("casadi")
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "_kelly_ipopt.py"
    spec = importlib.util.spec_from_file_location("_kelly_ipopt", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    reference = module.kelly_problem("hermite-simpson", segments=6).solve()
    assert reference["success"]
    assert abs(float(kelly[1].cost) / reference["cost"] - 1) <= 1e-9


def test_kelly_as_objects(kelly):
    """Kelly's constraints as the layer's objects: knee and absolute-angle limits, rate limits, the swing foot
    rising then descending; the torques bounded by the variables' bounds; 14 variables a point (angles, rates,
    torques: no duration column for his fixed step time, no effort state: the cost is a quadrature)."""
    problem = kelly[1].problem
    kinds = [type(c) for c in problem.inequalities]
    assert kinds == [AngleLimits, AngleLimits, SwingFootRising, SwingFootDescending]
    assert [c.rates for c in problem.inequalities[:2]] == [False, True]
    assert problem.layout.block == 2 * 5 + 4 and problem.size == 13 * 14
    np.testing.assert_allclose(kelly[0].solution.x, kelly[1].solution.x, rtol=0, atol=1e-9)  # kelly_gait solves it


def test_resampled_start(kelly):
    """A start on another mesh from the solved step: states and torques interpolated linearly in phase time, so
    equal to the solution at the points the meshes share and halfway between its neighbours elsewhere."""
    new = kelly[1]
    finer = stance.StanceProblem(**{**{f: getattr(new.problem, f) for f in new.problem.__dataclass_fields__},
                                    "mesh": stance.Mesh("hermite-simpson", (12,), (1.0,))})
    z = np.asarray(stance.start(finer, new)).reshape(25, 14)
    x = np.asarray(new.solution.x).reshape(13, 14)
    np.testing.assert_allclose(z[::2], x, atol=1e-12)
    np.testing.assert_allclose(z[1::2], (x[:-1] + x[1:]) / 2, atol=1e-12)


@pytest.mark.parametrize("mu_T", torso.MU_T)
def test_biped_torso_equals_optimal_gait(mu_T):
    """Font & Kövecses's biped with a torso at the experiment's μ_T (the cost per distance, the swing foot
    descending at heel strike), on a small mesh: the optimum of :func:`~difimpact.optimal_gait` to 1e-9 relative
    (measured: 1.5e-12 at most); one program for the three μ_T (the model's masses are its arguments)."""
    old = torso.optimal_step(mu_T, TORSO_SEGMENTS)
    alpha = float(np.arcsin(torso.STEP_LENGTH / (2 * 0.8)))
    problem = stance.from_gait_problem(old.problem)
    assert isinstance(problem.normalisation, PerDistance)
    new = stance.stance_gait(problem, jnp.array([-alpha, -2 * alpha, -alpha]))
    _same_optimum(new, old)
    for gait in (old, new):
        assert abs(float(gait.cost) / JOINT_VARIABLE_OPTIMA[mu_T] - 1) <= 1e-9
