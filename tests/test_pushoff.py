"""Pre-emptive push-off before heel strike (Kuo 2002): the zero-impulse limit (``impact`` and Garcia et al.'s
closed form), Kuo's closed form ``v⁺ = v⁻ cos 2α + P sin 2α``, energy balance, massless and massive legs,
gradients in the impulse against finite differences, bad input, and the ``gait-kuo-pushoff`` experiment."""

import contextlib
import io
import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di

from .helpers import central_difference, tree_allclose

ALPHA, V = 0.3, 0.5
KEEP = {"massless": "keep"}


def _walker(alpha=ALPHA, v=V):
    """Kuo's point-mass walker (SimplestWalker's tree: hip mass on massless legs) at heel strike on level ground:
    inter-leg angle ``2α``, hip speed ``v`` normal to the trailing (stance) leg."""
    w = di.SimplestWalker(0.0)
    q = w.stance_configuration(jnp.array([alpha, 2 * alpha]))
    return w, q, jnp.array([0.0, 0.0, v, 0.0])


def _hip_speed(w, q, qdot):
    return jnp.linalg.norm(w.point_velocity(q, qdot, "H"))


def test_zero_impulse_is_impact_and_garcia_closed_form():
    w, q, qd = _walker()
    sol = di.pushoff_impact(w, q, qd, jnp.asarray(0.0), **KEEP)
    ref = di.impact(w, q, qd, stick=("swing_foot",), **KEEP)
    assert tree_allclose(sol.collision, ref, rtol=1e-14, atol=1e-15)
    assert sol.pushoff_work == 0.0 and np.array_equal(sol.qdot_pushoff, qd)
    hs = di.heel_strike(w, q, qd)  # the closed form q̇3⁺ = q̇3⁻ cos 2a: the new stance leg turns at θ̇0 − θ̇1
    assert abs(sol.loss / hs.energy_loss - 1) < 1e-13
    assert abs(_hip_speed(w, q, sol.qdot_plus) - w.l * abs(hs.theta_dot[0] - hs.theta_dot[1])) < 1e-14
    assert sol.result == di.PushoffResults.successful


@pytest.mark.parametrize("alpha", [0.05, 0.3, 0.6])
def test_kuo_closed_form_and_energy_balance(alpha):
    """``v⁺ = v⁻ cos 2α + P sin 2α`` normal to the leading leg; push-off work ``P²/2``; steady at
    ``P = v tan α``, where the push-off's work equals the collision's loss."""
    w, q, qd = _walker(alpha)
    lead = w.point(q, "H") - w.point(q, "swing_foot")
    for P in (0.0, 0.05, V * math.tan(alpha)):
        sol = di.pushoff_impact(w, q, qd, jnp.asarray(P), **KEEP)
        v_plus = w.point_velocity(q, sol.qdot_plus, "H")
        assert abs(jnp.linalg.norm(v_plus) - (V * math.cos(2 * alpha) + P * math.sin(2 * alpha))) < 1e-14
        assert abs(v_plus @ lead) < 1e-14
        dT = w.kinetic_energy(q, sol.qdot_pushoff) - w.kinetic_energy(q, qd)
        assert abs(sol.pushoff_work - 0.5 * P**2) < 1e-15 and abs(sol.pushoff_work - dT) < 1e-15
        assert abs(sol.net_work - (w.kinetic_energy(q, sol.qdot_plus) - w.kinetic_energy(q, qd))) < 1e-15
    assert abs(sol.pushoff_work / sol.loss - 1) < 1e-12 and abs(sol.net_work) < 1e-15
    np.testing.assert_allclose(sol.direction, [math.sin(alpha), math.cos(alpha)], rtol=0, atol=1e-15)


def test_massive_legs_match_inverse_mass_matrix():
    """Regular ``M`` (seed 003's biped): ``Δq̇ = M⁻¹ J_sᵀ n̂ P``; massless legs (``m = 0``) with a torso: the
    impulse reaches the masses along the leg, ``M Δq̇ = J_sᵀ n̂ P`` and ``ΔT`` is its work."""
    for m in (5.0, 0.0):  # massless="keep" changes nothing where M is regular: one compiled program for both
        model = di.BipedWithTorso(m=m)
        q, qd = model.pre_impact_state(np.radians(30.0))
        sol = di.pushoff_impact(model, q, qd, jnp.asarray(2.0), stance="P_R", toward="H", stick=("P_L",), **KEEP)
        M = np.asarray(model.mass_matrix(q))
        n_hat = np.asarray(model.point(q, "H") - model.point(q, "P_R"))
        g = np.asarray(model.point_jacobian(q, "P_R")).T @ (2.0 * n_hat / np.linalg.norm(n_hat))
        np.testing.assert_allclose(sol.generalized_impulse, g, rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(M @ (sol.qdot_pushoff - qd), g, rtol=1e-12, atol=1e-12)
        if m > 0:
            np.testing.assert_allclose(sol.qdot_pushoff - qd, np.linalg.solve(M, g), rtol=1e-12, atol=1e-13)
        dT = model.kinetic_energy(q, sol.qdot_pushoff) - model.kinetic_energy(q, qd)
        assert abs(sol.pushoff_work / dT - 1) < 1e-12 and sol.pushoff_work > 0


def test_gradient_in_impulse():
    w, q, qd = _walker()

    @jax.jit
    def f(P):
        s = di.pushoff_impact(w, q, qd, P, **KEEP)
        return jnp.stack([s.pushoff_work, s.loss, _hip_speed(w, q, s.qdot_plus)])

    P = jnp.asarray(0.1)
    jac = jax.jacfwd(f)(P)
    np.testing.assert_allclose(jac, central_difference(f, P), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jax.jacrev(f)(P), jac, rtol=1e-12, atol=1e-14)
    assert abs(jac[2] - math.sin(2 * ALPHA)) < 1e-13 and abs(jac[0] - 0.1) < 1e-13  # d(P²/2)/dP = P


def test_bad_input():
    w, q, qd = _walker()
    with pytest.raises(ValueError, match="`impulse` must be non-negative"):
        di.pushoff_impact(w, q, qd, -0.1, **KEEP)
    with pytest.raises(Exception, match="`impulse` must be non-negative"):  # traced: at run time
        di.pushoff_impact(w, q, qd, jnp.asarray(-0.1), **KEEP)
    with pytest.raises(ValueError, match="`impulse` must have shape"):
        di.pushoff_impact(w, q, qd, jnp.ones(2), **KEEP)
    with pytest.raises(ValueError, match="`stance`: unknown point 'heel'"):
        di.pushoff_impact(w, q, qd, 0.1, stance="heel", **KEEP)
    with pytest.raises(ValueError, match="`toward`: unknown point 'hip'"):
        di.pushoff_impact(w, q, qd, 0.1, toward="hip", **KEEP)
    with pytest.raises(TypeError, match="`toward` must be a point name"):
        di.pushoff_impact(w, q, qd, 0.1, toward=1, **KEEP)
    with pytest.raises(ValueError, match="`toward` must differ from `stance`"):
        di.pushoff_impact(w, q, qd, 0.1, toward="stance_foot", **KEEP)
    with pytest.raises(ValueError, match="`stance` point 'stance_foot' pushes off"):
        di.pushoff_impact(w, q, qd, 0.1, unilateral=("stance_foot",), **KEEP)
    with pytest.raises(TypeError, match="`model` must be an instance"):
        di.pushoff_impact(di.SimplestWalker, q, qd, 0.1)
    with pytest.raises(ValueError, match="`massless` must be 'error' or 'keep'"):
        di.pushoff_impact(w, q, qd, 0.1, massless="drop")


@pytest.mark.slow
def test_failed_results():
    """Along the ground rather than along the massless trailing leg nothing resists the impulse; the collision's
    own failures come through (massless legs left free without ``massless="keep"``)."""
    w, q, qd = _walker()
    with pytest.raises(Exception, match="no mass resists"):
        di.pushoff_impact(w, q, qd, jnp.asarray(0.1), toward="swing_foot", **KEEP)
    bad = di.pushoff_impact(w, q, qd, jnp.asarray(0.1), toward="swing_foot", throw=False, **KEEP)
    assert bad.result == di.PushoffResults.pushoff_unresisted
    assert di.pushoff_impact(w, q, qd, jnp.asarray(0.1), throw=False).result == di.PushoffResults.undetermined


def test_unresisted_direction_is_detected():
    """The push-off's solve flags an impulse outside ``range(M)`` (massless leg pushed across its axis)."""
    from difimpact._impact.ground import _unit_masses
    from difimpact._impact.pushoff import _pushoff_velocity

    w, q, _ = _walker()
    M, J, D = w.mass_matrix(q), w.point_jacobian(q, "stance_foot"), _unit_masses(w.tree(), q)
    along = w.point(q, "H") - w.point(q, "stance_foot")
    for direction, unresisted in ((along, False), (jnp.array([1.0, 0.0]), True)):
        dq, flag, undetermined = jax.jit(_pushoff_velocity)(M, J.T @ direction, D)
        assert bool(flag) == unresisted and not bool(undetermined)
        if not unresisted:
            np.testing.assert_allclose(M @ dq, J.T @ direction, atol=1e-14)


def test_experiment_quick(tmp_path):
    from _difimpact_cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["reproduce", "gait-kuo-pushoff", "--quick", "--out", str(tmp_path), "--json", "--quiet",
                     "--no-cache"]) == 0
    (out,) = [json.loads(line) for line in buf.getvalue().splitlines() if line.strip()]
    rows, checks = out["rows"], out["checks"]
    assert set(rows[0]) == {"step_length", "speed", "pushoff_work", "torque_work", "collision_loss", "ratio"}
    assert all(c["ok"] for c in checks) and len(checks) == 6
    for r in rows:
        a = math.asin(r["step_length"] / 2)
        assert abs(r["ratio"] / (4 * math.cos(a) ** 4) - 1) < 1e-9 and r["speed"] == 0.4
        assert abs(r["pushoff_work"] / r["collision_loss"] - 1) < 1e-8
    assert (tmp_path / "gait-kuo-pushoff" / "gait-kuo-pushoff.csv").exists()
    assert list((tmp_path / "gait-kuo-pushoff").glob("*.png"))
