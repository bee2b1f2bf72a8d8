"""SevenLinkHuman (seed 002) and the anthropometric tables.

Independent references: the published table numbers typed here, Pinocchio's CRBA on the same chain written
as URDF, finite differences of point positions, and the exact linearity of T in body mass.
"""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import difimpact as di

from .helpers import central_difference

pin = pytest.importorskip("pinocchio")

# Jitted once per module (the point name is static): eager op-by-op evaluation dominates otherwise.
_point = eqx.filter_jit(lambda human, q, name: human.point(q, name))
_jacobian = eqx.filter_jit(lambda human, q, name: human.point_jacobian(q, name))
_mass_matrices = eqx.filter_jit(lambda human, qs: jax.vmap(human.mass_matrix)(qs))


@pytest.fixture(scope="module")
def model():
    return di.SevenLinkHuman()


@pytest.fixture(scope="module")
def postures():
    rng = np.random.default_rng(7)
    q = rng.uniform(-1.2, 1.2, size=(12, 9))
    q[:, :2] = rng.uniform(-1.0, 1.0, size=(12, 2))
    return jnp.asarray(q)


# -- anthropometry ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "table, body_mass, height",
    [(di.DUMAS_2007_MALE, 75.0, 1.77), (di.DUMAS_2007_FEMALE, 61.9, 1.61), (di.WINTER_2009, 82.0, 1.90)],
)
def test_total_mass(table, body_mass, height):
    human = di.SevenLinkHuman(body_mass, height, table)
    assert float(human.masses[0] + 2 * jnp.sum(human.masses[1:])) == pytest.approx(body_mass, rel=1e-14)
    # The mass matrix's translational block is the total mass times the identity.
    m = _mass_matrices(human, jnp.asarray([[0.1, 0.9, 0.2, 0.3, -0.4, 0.1, -0.2, -0.3, 0.2]]))[0]
    np.testing.assert_allclose(np.asarray(m[:2, :2]), body_mass * np.eye(2), rtol=1e-13, atol=1e-12)


def test_dumas_male_reproduces_published_numbers():
    # Dumas et al. (2007), Table 2, males (mean stature 1770 mm): thigh 432 mm, 12.3 %, COM (-4.1, -42.9) %,
    # r_zz 30 %; leg 433 mm, 4.8 %, r_zz 28 %; foot 183 mm (AJC-MH), 1.2 %, r_zz 36 %; pelvis 94 mm.
    s = di.scale_segments(di.DUMAS_2007_MALE, 75.0, 1.77)
    assert float(s.thigh.mass) == pytest.approx(0.123 * 75)
    assert float(s.shank.mass) == pytest.approx(0.048 * 75)
    assert float(s.foot.mass) == pytest.approx(0.012 * 75)
    assert float(s.thigh.length) == pytest.approx(0.432)
    assert float(s.shank.length) == pytest.approx(0.433)
    assert float(jnp.linalg.norm(s.mh)) == pytest.approx(0.183)
    np.testing.assert_allclose(np.asarray(s.thigh.com), [-0.041 * 0.432, -0.429 * 0.432])
    np.testing.assert_allclose(np.asarray(s.hip), [0.0, -0.094])
    assert float(s.thigh.inertia) == pytest.approx(0.123 * 75 * (0.30 * 0.432) ** 2)
    assert float(s.foot.inertia) == pytest.approx(0.012 * 75 * (0.36 * 0.183) ** 2)
    # HAT = head 6.7 + torso 33.3 + pelvis 14.2 + 2 (arm 2.4 + forearm 1.7 + hand 0.6) = 63.6 % published;
    # it takes the remainder 100 - 2 (12.3 + 4.8 + 1.2) = 63.4 %.
    assert float(s.hat.mass) / 75 == pytest.approx(0.634)
    # Lengths scale with height, masses and inertias with mass (and inertia with length squared).
    t = di.scale_segments(di.DUMAS_2007_MALE, 90.0, 1.90)
    assert float(t.thigh.length) == pytest.approx(0.432 * 1.90 / 1.77)
    assert float(t.hat.inertia) == pytest.approx(float(s.hat.inertia) * (90 / 75) * (1.90 / 1.77) ** 2)


def test_winter_reproduces_published_numbers():
    # Winter (2009) Table 4.1: thigh 0.100, COM 0.433 from proximal, rho_cg 0.323; leg 0.0465, 0.433, 0.302;
    # HAT 0.678. Fig. 4.1: hip 0.530 H, knee 0.285 H, ankle 0.039 H.
    s = di.scale_segments(di.WINTER_2009, 80.0, 1.80)
    assert float(s.thigh.mass) == pytest.approx(8.0)
    assert float(s.shank.mass) == pytest.approx(0.0465 * 80)
    assert float(s.hat.mass) == pytest.approx(0.678 * 80)
    assert float(s.thigh.length) == pytest.approx(0.245 * 1.80)
    assert float(s.shank.length) == pytest.approx(0.246 * 1.80)
    assert float(s.thigh.com[1]) == pytest.approx(-0.433 * 0.245 * 1.80)
    assert float(s.thigh.inertia) == pytest.approx(8.0 * (0.323 * 0.245 * 1.80) ** 2)
    assert float(-s.mh[1]) == pytest.approx(0.039 * 1.80)


def test_hat_lumping_agrees_with_winter():
    # Two independent data sets: Dumas's lumped HAT centre of mass above the hip against Winter's HAT
    # (0.626 of greater trochanter to glenohumeral joint, 0.288 H). Same subject, 5 % tolerance.
    d = di.scale_segments(di.DUMAS_2007_MALE, 75.0, 1.77)
    dumas_above_hip = float(d.hat.com[1] - d.hip[1])
    assert dumas_above_hip == pytest.approx(0.626 * 0.288 * 1.77, rel=0.05)


def test_standing_geometry_and_inertia_by_hand(model):
    """Upright standing (all angles 0), Dumas 2007 males at 75 kg and 1.77 m (= the table's mean subject,
    so lengths are the published millimetres): joint and landmark positions, the whole-body centre of mass
    height (from V) and the moment of inertia about the LJC (M[θ, θ]), summed by hand from the table."""
    q = jnp.zeros(9)
    pt = lambda name: np.asarray(_point(model, q, name))  # noqa: E731
    np.testing.assert_allclose(pt("H_R"), [0.0, -0.094], atol=1e-15)
    np.testing.assert_allclose(pt("K_L"), [0.0, -0.094 - 0.432], atol=1e-15)
    ankle = np.array([0.0, -0.094 - 0.432 - 0.433])
    np.testing.assert_allclose(pt("A_R"), ankle, atol=1e-15)
    h = 0.039 * 1.77
    np.testing.assert_allclose(pt("CAL_L"), ankle + [-0.030 * 1.77, -h], atol=1e-15)
    np.testing.assert_allclose(pt("MH_R"), ankle + [math.sqrt(0.183**2 - h**2), -h], atol=1e-15)
    # (mass fraction, anterior, superior, r_zz * length) of every part, relative to the LJC [m].
    cjc, elbow, wrist = 0.477, 0.477 - 0.271, 0.477 - 0.271 - 0.283
    hat = [
        (0.067, -0.062 * 0.278, cjc + 0.555 * 0.278, 0.33 * 0.278),  # head & neck
        (0.333, -0.036 * 0.477, cjc - 0.420 * 0.477, 0.28 * 0.477),  # torso
        (0.142, 0.028 * 0.094, -0.280 * 0.094, 0.95 * 0.094),  # pelvis
        (2 * 0.024, 0.017 * 0.271, cjc - 0.452 * 0.271, 0.32 * 0.271),  # arms
        (2 * 0.017, 0.010 * 0.283, elbow - 0.417 * 0.283, 0.27 * 0.283),  # forearms
        (2 * 0.006, 0.035 * 0.080, wrist - 0.357 * 0.080, 0.24 * 0.080),  # hands
    ]
    knee, ank = -0.094 - 0.432, -0.094 - 0.432 - 0.433
    legs = [
        (2 * 0.123, -0.041 * 0.432, -0.094 - 0.429 * 0.432, 0.30 * 0.432),  # thighs
        (2 * 0.048, -0.048 * 0.433, knee - 0.410 * 0.433, 0.28 * 0.433),  # shanks
        (2 * 0.012, 0.382 * 0.183, ank - 0.309 * 0.183, 0.36 * 0.183),  # feet
    ]
    ratio = (1 - sum(p[0] for p in legs)) / sum(p[0] for p in hat)  # the HAT takes the remainder
    parts = [(f * ratio, x, y, r) for f, x, y, r in hat] + legs
    com_height = sum(f * y for f, _, y, _ in parts)
    inertia = 75.0 * sum(f * (r**2 + x**2 + y**2) for f, x, y, r in parts)
    v = float(eqx.filter_jit(lambda m, qq: m.potential_energy(qq))(model, q))
    assert v / (9.81 * 75.0) == pytest.approx(com_height, rel=1e-12)
    assert float(_mass_matrices(model, q[None])[0, 2, 2]) == pytest.approx(inertia, rel=1e-12)


def test_coordinates_are_clockwise(model):
    """CONVENTIONS.md: angles positive toward +x. Rotating a vector (x, y) clockwise by a gives
    (x cos a + y sin a, −x sin a + y cos a): a forward-leaning torso (q[2] > 0) moves the hip (0.094 m below
    the LJC) back, and a positive hip angle swings the thigh (pointing down) back."""
    a, b = 0.3, 0.4
    q = jnp.zeros(9).at[2].set(a)
    np.testing.assert_allclose(np.asarray(_point(model, q, "H_R")), [-0.094 * math.sin(a), -0.094 * math.cos(a)],
                               atol=1e-15)
    q = jnp.zeros(9).at[3].set(b)
    thigh = np.asarray(_point(model, q, "K_R") - _point(model, q, "H_R"))
    np.testing.assert_allclose(thigh, [-0.432 * math.sin(b), -0.432 * math.cos(b)], atol=1e-15)


# -- dynamics -----------------------------------------------------------------------------------------------
def test_mass_matrix_symmetric_positive_definite(model, postures):
    ms = np.asarray(_mass_matrices(model, postures))
    np.testing.assert_allclose(ms, np.swapaxes(ms, 1, 2), atol=1e-13)
    assert np.linalg.eigvalsh(ms).min() > 1e-4


def _urdf(human: di.SevenLinkHuman) -> str:
    """The seven-link chain as URDF: every link frame is parallel to the world in upright standing (x anterior,
    y up), every joint a revolute about −z (clockwise positive, as the model's coordinates), base = prismatic x,
    prismatic y, revolute about −z."""
    m, inertia, com = (np.asarray(a) for a in (human.masses, human.inertias, human.com))
    lengths, hip = np.asarray(human.lengths), np.asarray(human.hip)

    def link(name, k=None):
        if k is None:
            return f'<link name="{name}"/>'
        return (f'<link name="{name}"><inertial><origin xyz="{com[k, 0]:.17g} {com[k, 1]:.17g} 0"/>'
                f'<mass value="{m[k]:.17g}"/><inertia ixx="1" iyy="1" izz="{inertia[k]:.17g}" ixy="0" ixz="0" '
                f'iyz="0"/></inertial></link>')

    def joint(name, kind, parent, child, xyz=(0.0, 0.0), axis="0 0 -1"):
        return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
                f'<origin xyz="{xyz[0]:.17g} {xyz[1]:.17g} 0"/><axis xyz="{axis}"/>'
                f'<limit lower="-100" upper="100" effort="0" velocity="0"/></joint>')

    parts = [link("world"), link("bx"), link("by"), link("hat", 0),
             joint("x", "prismatic", "world", "bx", axis="1 0 0"),
             joint("y", "prismatic", "bx", "by", axis="0 1 0"),
             joint("theta", "revolute", "by", "hat")]
    for s in ("R", "L"):
        parts += [link(f"thigh_{s}", 1), link(f"shank_{s}", 2), link(f"foot_{s}", 3),
                  joint(f"theta_H_{s}", "revolute", "hat", f"thigh_{s}", hip),
                  joint(f"theta_K_{s}", "revolute", f"thigh_{s}", f"shank_{s}", (0.0, -lengths[0])),
                  joint(f"theta_A_{s}", "revolute", f"shank_{s}", f"foot_{s}", (0.0, -lengths[1]))]
    return '<robot name="seven_link">' + "".join(parts) + "</robot>"


@pytest.mark.parametrize("table", [di.DUMAS_2007_MALE, di.WINTER_2009])
def test_mass_matrix_against_pinocchio(table, postures):
    human = di.SevenLinkHuman(70.0, 1.72, table)
    pmodel = pin.buildModelFromXML(_urdf(human))
    data = pmodel.createData()
    idx = [pmodel.idx_qs[pmodel.getJointId(name)] for name in human.coordinate_names]
    assert sorted(idx) == list(range(9))
    ours = np.asarray(_mass_matrices(human, postures))
    for q, m in zip(np.asarray(postures), ours):
        qp = np.zeros(9)
        qp[idx] = q
        ref = pin.crba(pmodel, data, qp)
        ref = np.triu(ref) + np.triu(ref, 1).T
        np.testing.assert_allclose(m, ref[np.ix_(idx, idx)], rtol=0, atol=1e-10)


def test_point_jacobians_match_finite_differences(model, postures):
    q = postures[3]
    for name in ("CAL_R", "MH_L", "K_L", "A_R"):
        fd = central_difference(lambda qq: _point(model, qq, name), q)
        np.testing.assert_allclose(np.asarray(_jacobian(model, q, name)), fd, atol=1e-8)


def test_free_flight_conserves_energy(model, state_fn):
    """Free flight from the heel-strike state for 1 s (scipy DOP853): T + V constant (checks the bias)."""
    q0, qdot0 = state_fn(jnp.asarray(-1.0), jnp.asarray(0.0))
    n = model.n
    rhs = eqx.filter_jit(lambda m, y: jnp.concatenate([y[n:], m.accelerations(y[:n], y[n:])]))
    energy = eqx.filter_jit(lambda m, y: m.energy(y[:n], y[n:]))
    y0 = np.concatenate([q0, qdot0])
    sol = solve_ivp(lambda t, y: np.asarray(rhs(model, jnp.asarray(y))), (0.0, 1.0), y0, method="DOP853",
                    rtol=1e-12, atol=1e-12)
    assert sol.success
    e0, e1 = float(energy(model, jnp.asarray(y0))), float(energy(model, jnp.asarray(sol.y[:, -1])))
    assert abs(e1 - e0) <= 1e-8 * abs(e0)


# -- heel-strike state (seed 002, eq. 3) --------------------------------------------------------------------
@pytest.fixture(scope="module")
def state_fn(model):
    return eqx.filter_jit(lambda w, t: model.heel_strike_state(w, t))


@pytest.mark.parametrize("omega0, dtheta", [(-1.0, 0.0), (0.5, math.radians(-10.0))])
def test_heel_strike_state(model, state_fn, omega0, dtheta):
    q, qdot = state_fn(jnp.asarray(omega0), jnp.asarray(dtheta))
    pos = lambda name: (lambda t: _point(model, q + t * qdot, name))  # noqa: E731
    assert abs(float(model.point(q, "CAL_R")[1])) < 1e-12
    assert abs(float(model.point(q, "MH_L")[1])) < 1e-12
    # Velocities by finite differences of positions along q̇ (not through the Jacobian).
    vel = lambda name: central_difference(pos(name), jnp.asarray(0.0))  # noqa: E731
    np.testing.assert_allclose(vel("MH_L"), [0.0, 0.0], atol=1e-8)
    assert abs(vel("CAL_R")[0]) < 1e-8
    assert vel("CAL_R")[1] < 0  # the heel is falling onto the ground
    assert vel("LJC")[0] == pytest.approx(1.61, abs=1e-8)
    # Seed 002's ω0 and θ are counter-clockwise, the coordinates clockwise: q̇[8] = −ω0, q[2] = −θ.
    np.testing.assert_allclose(np.asarray(qdot)[[3, 4, 5, 7, 8]], [0, 0, 0, 0, -omega0], atol=1e-12)
    # Leading heel ahead of the trailing MH, trailing heel raised.
    assert float(model.point(q, "CAL_R")[0]) > float(model.point(q, "MH_L")[0]) + 0.3
    assert float(model.point(q, "CAL_L")[1]) > 0
    assert float(q[2]) == pytest.approx(-dtheta)


def test_push_off_slows_the_heel(model, state_fn):
    # Seed 002, §4.1: "ankle push-off lowers the normal colliding velocity of the heel", push-off being
    # ω0 < 0 in the paper's sign convention (which `omega0` keeps, whereas q is clockwise).
    speeds = []
    for omega0 in (-2.0, -1.0, 0.0, 1.0):
        q, qdot = state_fn(jnp.asarray(omega0), jnp.asarray(0.0))
        speeds.append(-central_difference(lambda t: _point(model, q + t * qdot, "CAL_R"), jnp.asarray(0.0))[1])
    assert all(0 < a < b for a, b in zip(speeds, speeds[1:]))


def test_torso_angle_moves_only_the_torso(model):
    # The thighs keep their absolute orientation: the hip-to-knee vectors do not change with θ.
    q0 = model.heel_strike_posture(0.0)
    q1 = model.heel_strike_posture(math.radians(-12.0))
    for s in ("R", "L"):
        d0 = model.point(q0, f"K_{s}") - model.point(q0, f"H_{s}")
        d1 = model.point(q1, f"K_{s}") - model.point(q1, f"H_{s}")
        np.testing.assert_allclose(np.asarray(d1), np.asarray(d0), atol=1e-14)


def test_step_length_from_heel_prints(model):
    # Standing: both feet flat side by side, step 0. With the trailing foot turned flat (absolute foot angle
    # q2 + q6 + q7 + q8 = 0) its heel print is under CAL_L: the step is CAL_R − CAL_L read off the points.
    assert abs(float(model.step_length(jnp.zeros(9)))) < 1e-15
    q = model.heel_strike_posture()
    q = q.at[8].set(-(q[2] + q[6] + q[7]))
    heel_to_heel = _point(model, q, "CAL_R")[0] - _point(model, q, "CAL_L")[0]
    assert float(model.step_length(q)) == pytest.approx(float(heel_to_heel), abs=1e-14)


def test_default_posture_realises_the_sourced_step_and_ankle(model):
    """HeelStrikePosture's thighs were solved so that the step is Murray et al.'s (1964) 0.79 m and the
    trailing ankle 10° dorsiflexed: both read back from point positions (the ankle as 90° minus the angle
    between the shin A→K and the foot CAL→MH, 90° at neutral, smaller as the toes come up)."""
    q = model.heel_strike_posture()
    assert float(model.step_length(q)) == pytest.approx(0.79, abs=1e-3)
    pt = lambda name: np.asarray(_point(model, q, name))  # noqa: E731
    shin, foot = pt("K_L") - pt("A_L"), pt("MH_L") - pt("CAL_L")
    angle = math.degrees(math.acos(shin @ foot / np.linalg.norm(shin) / np.linalg.norm(foot)))
    assert 90.0 - angle == pytest.approx(10.0, abs=0.05)
    assert pt("CAL_L")[1] > 0.05  # heel off (terminal stance)

def test_gradients_with_respect_to_body_mass_and_height(state_fn):
    q, qdot = state_fn(jnp.asarray(-1.0), jnp.asarray(0.0))

    # One compiled function serves the gradient and the finite differences.
    energy = jax.jit(jax.value_and_grad(
        lambda body_mass, height: di.SevenLinkHuman(body_mass, height).kinetic_energy(q, qdot), argnums=(0, 1)))
    m0, h0 = jnp.asarray(75.0), jnp.asarray(1.77)
    t0, (gm, gh) = energy(m0, h0)
    # At fixed (q, q̇) every mass and inertia is proportional to body mass: dT/dm_B = T/m_B exactly.
    assert float(gm) == pytest.approx(float(t0) / 75.0, rel=1e-12)
    fd = central_difference(lambda h: energy(m0, h)[0], h0)
    assert float(gh) == pytest.approx(float(fd), rel=1e-6)


def test_vmap_over_subjects_follows_scaling_law(postures):
    # Masses scale with m_B, lengths with H, inertias with m_B H²: the angular block of M scales with m_B H².
    q = postures[5]
    body_mass, height = jnp.asarray([60.0, 75.0, 90.0]), jnp.asarray([1.60, 1.77, 1.90])
    ms = eqx.filter_jit(jax.vmap(lambda m, h: di.SevenLinkHuman(m, h).mass_matrix(q)))(body_mass, height)
    ref = np.asarray(ms[1, 2:, 2:])
    for m, h, mat in zip(body_mass, height, ms):
        np.testing.assert_allclose(np.asarray(mat[2:, 2:]), ref * float(m / 75.0 * (h / 1.77) ** 2), rtol=1e-12)


# -- bad input ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"body_mass": -75.0}, "body_mass"),
        ({"height": 0.0}, "height"),
        ({"masses": [40.0, -9.0, 3.6, 0.9]}, "masses"),
        ({"lengths": [0.43, 0.0]}, "lengths"),
        ({"com": [0.0, 0.1]}, "com"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        di.SevenLinkHuman(**kwargs)


def test_bad_body_mass_under_jit():
    with pytest.raises(Exception, match="body_mass"):
        eqx.filter_jit(lambda m: di.SevenLinkHuman(m).masses)(jnp.asarray(-1.0))


def test_bad_q_and_point(model):
    with pytest.raises(ValueError, match="shape"):
        model.mass_matrix(jnp.zeros(8))
    with pytest.raises(ValueError, match="unknown point"):
        model.point(jnp.zeros(9), "toe")
