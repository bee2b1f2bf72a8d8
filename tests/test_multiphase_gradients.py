"""Gradients of the optimum through the multi-phase layer (:mod:`difimpact._collocation`): a model and a gait
layout of one's own — a compass biped with a pelvis and hip torques, built as a planar tree, walking in single
support with its swing foot striking and sticking — and ``∂J*/∂(pelvis mass, leg length, speed)`` by reverse mode
through the solve (the implicit function theorem at the KKT point) against central differences of re-solved
optima (the same compiled program, warm-started from the nominal optimum). Slow: CI's second stage."""

import functools
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact._collocation.solve import make_problem

STEP = di.ContactGait(points=("foot_R", "foot_L"), phases=(di.ContactPhase("single", (("foot_R", (0, 1)),)),),
                      actuated=(3, 4), mirror=(0, 1, 2, 4, 3), strike=(("foot_L", (0, 1)),), touchdowns=(),
                      end_clearance=(), q_bounds=((-1.0, 0.5, -1.0, -1.2, -1.2), (1.0, 1.5, 1.0, 1.2, 1.2)),
                      qd_max=(10.0,) * 5)
KW = dict(segments=8, duration_bounds=(0.2, 1.5), torque_max=100.0)


def compass_biped() -> di.TreeModel:
    """``q = (x, y, pelvis angle, right hip, left hip)``: a pelvis on the floating base, two 1 m legs hanging from
    it (relative hip coordinates, so the legs exchange by permuting ``q``)."""
    leg = lambda side, coord: di.Body(name=f"{side}_leg", parent="pelvis", coord=coord, mass=5.0,
                                      inertia=0.3, com=(0.5, 0.0), offset=math.pi)
    bodies = [di.Body(name="pelvis", parent=None, coord=2, mass=10.0, inertia=0.2, com=(0.1, 0.0)),
              leg("right", 3), leg("left", 4)]
    points = [di.Point(name=f"foot_{s}", body=f"{n}_leg", local=(1.0, 0.0)) for s, n in (("R", "right"),
                                                                                         ("L", "left"))]
    return di.TreeModel(di.PlanarTree.build(5, bodies, points))


def guess(problem) -> np.ndarray:
    """The hip moving straight from behind the stance foot to ahead of it over a 0.5 m step in 0.5 s, the legs
    turning at constant rate, zero torques."""
    s, L = problem.times(), problem.layout
    a = math.asin(0.25)
    x = -0.25 + 0.5 * s
    q = np.stack([x, np.sqrt(1 - x**2), 0 * s, -a + 2 * a * s, a - 2 * a * s], axis=1)
    Z = np.zeros((s.size, L.block))
    Z[:, :5], Z[:, 5:10], Z[:, L.t], Z[:, L.tau] = q, np.gradient(q, 0.5 * s, axis=0), 0.5 * s, 0.5
    return Z.reshape(-1)


def _model(pelvis_mass, leg_length):
    model = compass_biped()
    tree = model.planar_tree
    model = eqx.tree_at(lambda m: m.planar_tree.mass, model, tree.mass.at[0].set(pelvis_mass))
    return eqx.tree_at(lambda m: m.planar_tree.point_local, model, tree.point_local.at[:, 0].set(leg_length))


@functools.cache
def _solver(z0_bytes: bytes):
    z0 = jnp.asarray(np.frombuffer(z0_bytes))

    def cost(pelvis_mass, leg_length, speed):
        gait = di.multiphase_gait(_model(pelvis_mass, leg_length), STEP, speed, z0, **KW)
        return gait.cost, gait.cost

    return jax.jit(jax.jacrev(cost, argnums=(0, 1, 2), has_aux=True))


@pytest.fixture(scope="module")
def nominal():
    model = compass_biped()
    problem = make_problem(model, STEP, 1.0, method="hermite-simpson", grading=1.0, friction=0.8, **KW)
    return di.multiphase_gait(model, STEP, 1.0, guess(problem), **KW)


@pytest.mark.slow
def test_own_model_and_layout_walk(nominal):
    """The compass biped's optimal step: converged, periodic through the strike, the stance foot's normal force
    positive, the swing foot above the ground at every interior point, the step at the asked speed."""
    assert nominal.result == di.NLPResults.successful
    c, d = eqx.filter_jit(lambda p, z: p.constraints(z))(nominal.problem, nominal.solution.x)
    assert float(jnp.max(jnp.abs(c))) < 1e-8 and float(jnp.min(d)) > -1e-8
    assert float(jnp.min(nominal.forces[:, 0])) > 0.0
    np.testing.assert_allclose(float(nominal.speed), 1.0, rtol=1e-9)


@pytest.mark.slow
def test_gradients_of_the_optimum_through_the_layer(nominal):
    solve = _solver(np.asarray(nominal.solution.x).tobytes())
    x = (10.0, 1.0, 1.0)
    grads, value = solve(*x)
    np.testing.assert_allclose(float(value), float(nominal.cost), rtol=1e-8)
    for k in range(3):
        h = 1e-4 * x[k]
        up, down = list(x), list(x)
        up[k] += h
        down[k] -= h
        fd = (float(solve(*up)[1]) - float(solve(*down)[1])) / (2 * h)
        np.testing.assert_allclose(float(grads[k]), fd, rtol=1e-5)
