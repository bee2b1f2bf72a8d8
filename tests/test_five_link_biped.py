"""The five-link biped against Kelly's own model (OptimTraj ``demo/fiveLinkBiped``, transcribed from his
machine-generated MATLAB in ``tests/_kelly_five_link.py``): single-stance accelerations, the heel-strike map, the
step-length constraint, the energies and the points, at random states; then the coordinates (Kelly's angles both
ways, the leg swap), the torques, the URDF round trip, :meth:`FiveLinkBiped.rabbit`, parameter gradients and
bad input."""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di

from . import _kelly_five_link as kelly
from .helpers import central_difference

N = 20  # random states per check
JOINTS = ("stance_knee", "hip", "shoulders", "swing_knee", "swing_foot")  # Kelly's P1..P5


def _parameters(model):
    """Kelly's parameter dict of `model`: his ``c3`` is measured down from the shoulders."""
    return kelly.parameters(c3=float(model.l_torso - model.torso_com))


def _relative(ours, theirs):
    """Largest difference relative to the largest entry of `theirs`."""
    return float(np.max(np.abs(np.asarray(ours) - theirs)) / np.max(np.abs(theirs)))


@eqx.filter_jit
def _single_stance(model, q_kelly, dq_kelly, u_kelly):
    """Ours, over a batch of Kelly's states and torques: his ``ddq`` from the seven-coordinate equations with the
    stance foot held by a multiplier, ``[M, −Jᵀ; J, 0] (q̈, λ) = (τ − c, −J̇ q̇)``; energies; joints and COMs;
    the step length and the swing foot's height."""

    def one(qk, dqk, u):
        q, qdot = model.from_kelly(qk, dqk)
        mass, bias = model.mass_matrix(q), model.bias(q, qdot)
        jac = model.point_jacobian(q, "stance_foot")
        jdot_qdot = jax.jvp(lambda x: model.point_jacobian(x, "stance_foot") @ qdot, (q,), (qdot,))[1]
        kkt = jnp.block([[mass, -jac.T], [jac, jnp.zeros((2, 2))]])
        qddot = jnp.linalg.solve(kkt, jnp.concatenate([model.kelly_torques(u) - bias, -jdot_qdot]))[:7]
        return dict(ddq=model.to_kelly(q, qddot)[1], ke=model.kinetic_energy(q, qdot),
                    pe=model.potential_energy(q), joints=jnp.stack([model.point(q, p) for p in JOINTS]),
                    coms=model.tree().com_positions(q), foot=jnp.stack([model.step_length(q),
                                                                        model.point(q, "swing_foot")[1]]))

    return jax.vmap(one)(q_kelly, dq_kelly, u_kelly)


@eqx.filter_jit
def _heel_strike(model, q_kelly, dq_kelly):
    """Ours, over a batch of pre-impact states in Kelly's angles: the swing foot sticks (the stance foot is free
    to leave), the legs are swapped and the result is read in Kelly's angles."""

    def one(qk, dqk):
        q, qdot = model.from_kelly(qk, dqk)
        hit = di.impact(model, q, qdot, stick=("swing_foot",), ground_tol=1e-9)
        q_plus, qdot_plus = model.swap_legs(q, hit.qdot_plus)
        qk_plus, dqk_plus = model.to_kelly(q_plus, qdot_plus)
        return dict(q=qk_plus, dq=dqk_plus, base=qdot_plus[:2], loss=hit.loss, T=hit.T_minus)

    return jax.vmap(one)(q_kelly, dq_kelly)


@pytest.fixture(scope="module", params=["kelly", "rabbit"])
def model(request):
    return di.FiveLinkBiped() if request.param == "kelly" else di.FiveLinkBiped.rabbit()


@pytest.fixture(scope="module")
def states():
    """Kelly's angles within his bounds (±π/2), rates and torques (his ``u1`` included)."""
    rng = np.random.default_rng(17)
    return rng.uniform(-1.5, 1.5, (N, 5)), rng.normal(0.0, 3.0, (N, 5)), rng.normal(0.0, 40.0, (N, 5))


@pytest.fixture(scope="module")
def single_stance(model, states):
    return {k: np.asarray(v) for k, v in _single_stance(model, *map(jnp.asarray, states)).items()}


def _pre_impact_states(rng, p, n):
    """Kelly's pre-impact states: stance leg behind, swing leg ahead, his swing tibia angle ``q5`` solved from his
    step constraint ``P5_y = l1 cos q1 + l2 cos q2 − l4 cos q4 − l5 cos q5 = 0`` (swing knee bent), rates drawn
    at random with the sign that brings the swing foot down."""
    qs, dqs = [], []
    while len(qs) < n:
        q1, q2, q3, q4 = rng.uniform([-0.7, -0.6, -0.4, 0.1], [0.0, 0.3, 0.4, 0.9])
        ratio = (p["l1"] * np.cos(q1) + p["l2"] * np.cos(q2) - p["l4"] * np.cos(q4)) / p["l5"]
        if abs(ratio) > 0.98:
            continue
        q = np.array([q1, q2, q3, q4, -np.arccos(ratio)])
        dq = rng.normal(0.0, 2.0, 5)
        lever = np.array([-p["l1"] * np.sin(q[0]), -p["l2"] * np.sin(q[1]), 0.0, p["l4"] * np.sin(q[3]),
                          p["l5"] * np.sin(q[4])])  # dP5_y/dq
        if abs(lever @ dq) < 0.05:
            continue
        qs.append(q)
        dqs.append(-np.sign(lever @ dq) * dq)
    return np.stack(qs), np.stack(dqs)


# -- against Kelly's generated model ----------------------------------------------------------------------------
def test_single_stance_accelerations_match_kelly(model, states, single_stance):
    """His ``ddq = MM \\ FF`` (``autoGen_dynSs``, angular momentum balances about each joint) equals ours, with all
    five of his torques (ankle ``u1`` included), at 20 random states."""
    p = _parameters(model)
    theirs = np.stack([kelly.dynamics(q, dq, u, p) for q, dq, u in zip(*states)])
    assert _relative(single_stance["ddq"], theirs) < 1e-12


def test_heel_strike_matches_kelly(model):
    """His impact map (``autoGen_cst_heelStrike``: angular momentum about the new stance foot and about each
    joint of the new chain is conserved, the angles relabelled ``qp = qm([5 4 3 2 1])``) equals
    :func:`difimpact.impact` with the swing foot sticking, followed by :meth:`FiveLinkBiped.swap_legs`. The new
    stance foot is at rest and kinetic energy is lost, never gained."""
    p = _parameters(model)
    qm, dqm = _pre_impact_states(np.random.default_rng(3), p, N)
    ours = {k: np.asarray(v) for k, v in _heel_strike(model, jnp.asarray(qm), jnp.asarray(dqm)).items()}
    qp, dqp = zip(*(kelly.heel_strike(q, dq, p) for q, dq in zip(qm, dqm)))
    np.testing.assert_allclose(ours["q"], np.stack(qp), rtol=0, atol=1e-14)
    assert _relative(ours["dq"], np.stack(dqp)) < 1e-12
    np.testing.assert_allclose(ours["base"], 0.0, atol=1e-12)
    assert np.all(ours["loss"] >= -1e-12 * ours["T"]) and np.all(ours["loss"] > 0)


def test_step_length_energy_and_points_match_kelly(model, states, single_stance):
    """``autoGen_cst_steplength`` (swing foot ``x`` and ``y``), ``autoGen_energy`` (kinetic and potential, his
    zero of potential at the stance foot, as ours) and ``autoGen_getPoints`` (joints ``P1..P5``, COMs
    ``G1..G5``)."""
    p = _parameters(model)
    q_kelly, dq_kelly, _ = states
    np.testing.assert_allclose(single_stance["foot"], np.stack([kelly.swing_foot(q, p)
                                                                for q in q_kelly]), rtol=0, atol=1e-14)
    ke, pe = np.array([kelly.energy(q, dq, p) for q, dq in zip(q_kelly, dq_kelly)]).T
    np.testing.assert_allclose(single_stance["ke"], ke, rtol=1e-12)
    np.testing.assert_allclose(single_stance["pe"], pe, rtol=1e-12, atol=1e-12)
    joints, coms = zip(*(kelly.points(q, p) for q in q_kelly))
    np.testing.assert_allclose(single_stance["joints"], np.stack(joints), rtol=0, atol=1e-14)
    np.testing.assert_allclose(single_stance["coms"], np.stack(coms), rtol=0, atol=1e-14)


# -- coordinates, leg swap, torques -----------------------------------------------------------------------------
def test_kelly_angles_both_ways(states):
    """:meth:`from_kelly` and :meth:`to_kelly` are inverses, under ``jit`` and ``vmap``; ``q[2:] = 0`` is Kelly's
    zero: upright, both legs straight below the hip, both feet at the origin."""
    model = di.FiveLinkBiped()
    q_kelly, dq_kelly, _ = map(jnp.asarray, states)
    q, qdot = jax.jit(jax.vmap(model.from_kelly))(q_kelly, dq_kelly)
    np.testing.assert_allclose(q[:, :2], 0.0)
    np.testing.assert_allclose(qdot[:, :2], 0.0)
    back = jax.jit(jax.vmap(model.to_kelly))(q, qdot)
    np.testing.assert_allclose(back[0], q_kelly, rtol=0, atol=1e-15)
    np.testing.assert_allclose(back[1], dq_kelly, rtol=0, atol=1e-14)
    zero = jnp.zeros(7)
    np.testing.assert_allclose(model.to_kelly(zero, zero)[0], 0.0)
    np.testing.assert_allclose(model.point(zero, "swing_foot"), [0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(model.point(zero, "shoulders"), [0.0, 1.425], atol=1e-15)


def test_swap_legs_is_the_same_state(states):
    """Swapping the legs moves no point and no velocity (the pairs of :attr:`mirror` exchange places) and twice
    is the identity."""
    model = di.FiveLinkBiped()
    rng = np.random.default_rng(5)
    q = jnp.asarray(np.concatenate([rng.normal(size=2), states[0][0]]))
    qdot = jnp.asarray(rng.normal(size=7))
    q2, qdot2 = model.swap_legs(q, qdot)
    pairs = {"stance_foot": "swing_foot", "stance_knee": "swing_knee", "hip": "hip", "shoulders": "shoulders"}
    for a, b in {**pairs, **{v: k for k, v in pairs.items()}}.items():
        np.testing.assert_allclose(model.point(q2, a), model.point(q, b), atol=1e-14)
        np.testing.assert_allclose(model.point_velocity(q2, qdot2, a), model.point_velocity(q, qdot, b), atol=1e-13)
    np.testing.assert_allclose(model.kinetic_energy(q2, qdot2), model.kinetic_energy(q, qdot), rtol=1e-13)
    back = model.swap_legs(q2, qdot2)
    np.testing.assert_allclose(back[0][2:], q[2:], atol=1e-14)
    np.testing.assert_allclose(back[1][2:], qdot[2:], atol=1e-14)
    names = model.tree().body_names
    mirror = dict(model.mirror) | {b: a for a, b in model.mirror}
    assert sorted(mirror) == sorted(names)


def test_actuators_give_kellys_torques():
    """The generalised force of :attr:`actuators`, ``Σ (∂θ_a/∂q − ∂θ_b/∂q)ᵀ u``, with
    :meth:`kelly_to_actuator_torques`, equals :meth:`kelly_torques` when his ankle torque ``u1`` is zero; in these
    coordinates ``τ = (0, 0, −u1, u2, −u3, u4, −u5)``."""
    model = di.FiveLinkBiped()
    u = jnp.asarray(np.random.default_rng(7).normal(0.0, 30.0, 5))
    rows = dict(zip(model.tree().body_names, np.asarray(model.tree().angle_jacobian())))
    torques = model.kelly_to_actuator_torques(u)
    force = sum(t * (rows[a] - rows[b]) for t, (a, b) in zip(torques, model.actuators))
    np.testing.assert_allclose(force, model.kelly_torques(u.at[0].set(0.0)), rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.kelly_torques(u), [0, 0, -u[0], u[1], -u[2], u[3], -u[4]], atol=1e-12)


def test_pre_impact_guess():
    """Kelly's end-of-step guess with the swing foot on the ground, ahead, coming down: a valid heel strike."""
    model = di.FiveLinkBiped()
    q, qdot = model.pre_impact_guess()
    np.testing.assert_allclose(model.to_kelly(q, qdot)[0][:4], [-0.6, -0.5, 0.0, 0.7], atol=1e-15)
    assert abs(float(model.point(q, "swing_foot")[1])) < 1e-12 and 0.5 < float(model.step_length(q)) < 0.6
    assert float(model.point_velocity(q, qdot, "swing_foot")[1]) < 0
    assert float(di.impact(model, q, qdot, stick=("swing_foot",)).loss) > 0


# -- export, parameters -----------------------------------------------------------------------------------------
def test_urdf_round_trip(tmp_path):
    """Written as URDF and read back, the model has the same coordinates (the URDF joints are named after them and
    turn the same way), points, mass matrix and bias."""
    model = di.FiveLinkBiped.rabbit()
    path = tmp_path / "five_link_biped.urdf"
    path.write_text(di.to_urdf(model, name="five_link_biped"))
    back = di.from_urdf(str(path))
    assert back.coordinate_names == model.coordinate_names and back.point_names == model.point_names
    rng = np.random.default_rng(11)
    qs = jnp.asarray(np.concatenate([rng.uniform(-1, 1, (8, 2)), rng.uniform(-np.pi, np.pi, (8, 5))], axis=1))
    vs = jnp.asarray(rng.normal(size=(8, 7)))
    both = eqx.filter_jit(jax.vmap(lambda m, q, v: (m.mass_matrix(q), m.bias(q, v)), in_axes=(None, 0, 0)))
    (mass, bias), (mass_back, bias_back) = both(model, qs, vs), both(back, qs, vs)
    np.testing.assert_allclose(mass_back, mass, rtol=0, atol=1e-12)
    np.testing.assert_allclose(bias_back, bias, rtol=0, atol=1e-12 * float(np.max(np.abs(bias))))


def test_rabbit_differs_only_in_torso_com():
    kelly_, rabbit = di.FiveLinkBiped(), di.FiveLinkBiped.rabbit()
    differ = [f.name for f in dataclasses.fields(kelly_)
              if not np.array_equal(getattr(kelly_, f.name), getattr(rabbit, f.name))]
    assert differ == ["torso_com"]
    assert float(kelly_.torso_com) == 0.425 and float(rabbit.torso_com) == 0.2
    assert float(di.FiveLinkBiped.rabbit(m_torso=12.0).m_torso) == 12.0


def test_mass_matrix_gradient_matches_central_differences():
    """``∂M/∂(m_torso, torso_com)`` by forward and reverse mode against central differences."""
    q = jnp.asarray([0.3, -0.2, 0.4, 0.3, -0.5, 0.6, 0.9])

    @jax.jit
    def mass(x):
        return di.FiveLinkBiped(m_torso=x[0], torso_com=x[1]).mass_matrix(q)

    x = np.array([20.0, 0.425])
    expected = central_difference(mass, x)
    np.testing.assert_allclose(jax.jit(jax.jacfwd(mass))(jnp.asarray(x)), expected, rtol=1e-8, atol=1e-9)
    weights = jnp.asarray(np.random.default_rng(2).normal(size=(7, 7)))
    grad = eqx.filter_jit(eqx.filter_grad(lambda m: jnp.sum(weights * m.mass_matrix(q))))(di.FiveLinkBiped())
    np.testing.assert_allclose([grad.m_torso, grad.torso_com], np.einsum("ij,ijk->k", weights, expected),
                               rtol=1e-8)


@pytest.mark.parametrize("make, match", [
    (lambda: di.FiveLinkBiped(m_torso=-1.0), "`m_torso`"),
    (lambda: di.FiveLinkBiped(l_tibia=0.0), "`l_tibia`"),
    (lambda: di.FiveLinkBiped(torso_com=float("nan")), "`torso_com`"),
    (lambda: di.FiveLinkBiped.rabbit(I_femur=-0.1), "`I_femur`"),
    (lambda: di.FiveLinkBiped().from_kelly(jnp.zeros(4), jnp.zeros(5)), "`q_kelly`"),
    (lambda: di.FiveLinkBiped().kelly_torques(jnp.zeros(7)), "`u_kelly`"),
])
def test_bad_input_is_named(make, match):
    with pytest.raises(ValueError, match=match):
        make()
