"""Public model files nobody here wrote (``tests/data``, provenance and licences in its ``PROVENANCE.md``),
imported unmodified: Gymnasium's planar MuJoCo walkers (armature included) against MuJoCo's ``mj_fullM`` and
``qfrc_bias``; FROST's RABBIT URDF with its motor inertia against FROST's mass-matrix definition (rigid bodies by
Pinocchio's CRBA + ``I_m r²`` on the diagonal); Drake's acrobot against Spong's closed form; OpenSim's 2-D gait
model and dynamic walker against the file's numbers; and every built-in model and imported file written out
and read back."""

import math
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di

DATA = Path(__file__).parent / "data"
try:
    import mujoco
except ImportError:
    mujoco = None
try:
    import pinocchio as pin
except ImportError:
    pin = None

needs_mujoco = pytest.mark.skipif(mujoco is None, reason="the `mjcf` extra (mujoco) is not installed")
GYM = ("walker2d", "hopper", "half_cheetah", "inverted_double_pendulum")


def _mass_matrices(model, qs):
    return np.asarray(jax.jit(jax.vmap(model.mass_matrix))(jnp.asarray(qs)))


def _postures(rng, n, k=3):
    return np.concatenate([rng.uniform(-1, 1, (k, 2)), rng.uniform(-np.pi, np.pi, (k, n - 2))], axis=1)


# -- Gymnasium's MuJoCo walkers --------------------------------------------------------------------------------
@needs_mujoco
@pytest.mark.parametrize("name", GYM)
def test_gymnasium_mass_matrix_and_bias_match_mujoco(name, rng):
    """M(q) (armature on the diagonal, MuJoCo's definition) to 1e-12 and c(q, q̇) against ``mj_fullM`` and
    ``qfrc_bias`` at random states; the model's coordinates are MuJoCo's joints (the inverted double pendulum's
    one slide gets the vertical base coordinate ``y`` added, and its gravity's 1e-5 x-component is a slope)."""
    path = str(DATA / f"{name}.xml")
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    model = di.from_mjcf(path)
    joints = [m.joint(j).name for j in range(m.njnt)]
    assert [c for c in model.coordinate_names if c != "y"] == joints
    idx = [model.coordinate_names.index(j) for j in joints]
    armature = {j: float(m.dof_armature[m.joint(j).dofadr[0]]) for j in joints}
    assert any(armature.values()) or name == "inverted_double_pendulum"
    fns = jax.jit(lambda q, v: (model.mass_matrix(q), model.bias(q, v)))
    for _ in range(3):
        q, v = m.qpos0 + rng.uniform(-1, 1, m.nq), rng.normal(size=m.nv)
        d.qpos[:], d.qvel[:] = q, v
        mujoco.mj_forward(m, d)
        full = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, full)
        qq, vv = np.zeros(model.n), np.zeros(model.n)
        qq[idx], vv[idx] = q, v
        mass, bias = (np.asarray(x) for x in fns(jnp.asarray(qq), jnp.asarray(vv)))
        np.testing.assert_allclose(mass[np.ix_(idx, idx)], full, rtol=0, atol=1e-12)
        np.testing.assert_allclose(bias[idx], d.qfrc_bias, rtol=0, atol=1e-11)
    bare = di.from_mjcf(re.sub(r'armature="[^"]*"', 'armature="0"', Path(path).read_text()))
    q = jnp.asarray(np.concatenate([[0.1, 0.2], rng.uniform(-1, 1, model.n - 2)]))
    np.testing.assert_allclose(model.mass_matrix(q) - bare.mass_matrix(q),
                               np.diag([armature.get(c, 0.0) for c in model.coordinate_names]), atol=1e-14)


@needs_mujoco
@pytest.mark.parametrize("name, match", [
    ("ant", "joint 'root' of body 'torso' is a free joint.*not a planar tree"),
    ("swimmer", r"slides \['slider1', 'slider2'\] of body 'torso' are both horizontal.*horizontal plane"),
])
def test_gymnasium_non_planar_is_told_why(name, match):
    """Planarity is checked before armature: the ant and the swimmer are told why they are not planar."""
    with pytest.raises(ValueError, match=match):
        di.from_mjcf(str(DATA / f"{name}.xml"))


# -- FROST's RABBIT ---------------------------------------------------------------------------------------------
RABBIT = DATA / "five_link_walker.urdf"
RABBIT_JOINTS = ("q1_right", "q2_right", "q1_left", "q2_left")
MOTOR = 0.000332 * 50 ** 2  # the file's <motorInertia> × <mechanicalReduction>², 0.83 kg m²

# FROST's planar base (``get_base_dofs('planar')``): BasePosX along x, BasePosZ along z, BaseRotY about y.
FROST_BASE = """<link name="origin"/><link name="BasePosX"/><link name="BasePosZ"/>
<joint name="BasePosX" type="prismatic"><parent link="origin"/><child link="BasePosX"/><axis xyz="1 0 0"/>
  <limit lower="-10" upper="10" effort="0" velocity="0"/></joint>
<joint name="BasePosZ" type="prismatic"><parent link="BasePosX"/><child link="BasePosZ"/><axis xyz="0 0 1"/>
  <limit lower="-10" upper="10" effort="0" velocity="0"/></joint>
<joint name="BaseRotY" type="continuous"><parent link="BasePosZ"/><child link="torso"/><axis xyz="0 1 0"/></joint>
"""


@pytest.mark.skipif(pin is None, reason="pinocchio (in the `test` extra) is not installed")
def test_rabbit_matches_frost_mass_matrix(rng):
    """FROST's D(q) = Σ_links (m J_vᵀ J_v + J_ωᵀ I J_ω) + diag(I_m r²) (``RobotLinks/configureDynamics.m``:
    ``De_motor(i,i) = actuator.Inertia * actuator.Ratio^2``) in FROST's planar-base coordinates; the rigid part
    by Pinocchio's CRBA on the file with FROST's base joints added."""
    model = di.from_urdf(str(RABBIT), root_hinge="BaseRotY")
    assert model.coordinate_names == ("x", "y", "BaseRotY") + RABBIT_JOINTS
    rigid = di.from_urdf(str(RABBIT), root_hinge="BaseRotY", motor_inertia=False)
    text = RABBIT.read_text()
    with_base = text.replace("<robot name=\"five_link_walker\" xmlns:xacro=\"http://ros.org/wiki/xacro\">",
                             "<robot name=\"five_link_walker\">" + FROST_BASE)
    pmodel = pin.buildModelFromXML(with_base)
    data = pmodel.createData()
    names = ("BasePosX", "BasePosZ", "BaseRotY") + RABBIT_JOINTS
    motor = np.diag([0.0, 0.0, 0.0] + [MOTOR] * 4)
    qs = _postures(rng, 7)
    ours, ours_rigid = _mass_matrices(model, qs), _mass_matrices(rigid, qs)
    for q, mass, mass_rigid in zip(qs, ours, ours_rigid):
        qp = pin.neutral(pmodel)
        for name, value in zip(names, q):
            joint = pmodel.joints[pmodel.getJointId(name)]
            qp[joint.idx_q:joint.idx_q + joint.nq] = [np.cos(value), np.sin(value)] if joint.nq == 2 else [value]
        full = pin.crba(pmodel, data, qp)
        full = np.triu(full) + np.triu(full, 1).T
        vidx = [pmodel.joints[pmodel.getJointId(name)].idx_v for name in names]
        frost = full[np.ix_(vidx, vidx)] + motor
        np.testing.assert_allclose(mass, frost, rtol=0, atol=1e-12)
        np.testing.assert_allclose(mass - mass_rigid, motor, rtol=0, atol=1e-13)
    np.testing.assert_allclose(MOTOR, 0.83, rtol=1e-12)


def test_rabbit_without_root_hinge_translates_only():
    """Without `root_hinge` the torso is welded to the floating base: x and y stay free coordinates (M's first
    2×2 block is the total mass), the torso does not turn."""
    model = di.from_urdf(str(RABBIT))
    assert model.coordinate_names == ("x", "y") + RABBIT_JOINTS
    mass = model.mass_matrix(jnp.zeros(model.n))
    np.testing.assert_allclose(mass[:2, :2], 32.0 * np.eye(2), atol=1e-12)  # 12 + 2 × (6.8 + 3.2) kg
    np.testing.assert_allclose(np.diag(mass)[2:] - np.diag(di.from_urdf(str(RABBIT), motor_inertia=False)
                                                           .mass_matrix(jnp.zeros(model.n)))[2:], MOTOR, atol=1e-13)


# -- Drake's acrobot --------------------------------------------------------------------------------------------
def test_acrobot_undeclared_world_and_spong_closed_form(rng):
    """Drake's ``Acrobot.urdf`` welds its base to a ``world`` link it never declares. Its M over (shoulder,
    elbow) is Spong's: ``M11 = I1 + I2 + m1 lc1² + m2 (l1² + lc2² + 2 l1 lc2 cos q2)``, ``M12 = I2 + m2 (lc2² +
    l1 lc2 cos q2)``, ``M22 = I2 + m2 lc2²`` (m = 1, l1 = 1, lc1 = 0.5, lc2 = 1, I1 = 0.083, I2 = 0.33 from the
    file); Drake's ``<frame name="hand">`` is a point."""
    model = di.from_urdf(str(DATA / "Acrobot.urdf"))
    assert model.coordinate_names == ("x", "y", "shoulder", "elbow") and model.point_names == ("hand",)
    qs = _postures(rng, 4)
    for q, mass in zip(qs, _mass_matrices(model, qs)):
        c2 = math.cos(q[3])
        spong = [[0.083 + 0.33 + 0.25 + 1 + 1 + 2 * c2, 0.33 + 1 + c2], [0.33 + 1 + c2, 0.33 + 1]]
        np.testing.assert_allclose(mass[2:, 2:], spong, rtol=0, atol=1e-12)
        np.testing.assert_allclose(mass[:2, :2], 2 * np.eye(2), atol=1e-12)  # x, y stay free coordinates
    np.testing.assert_allclose(model.point(jnp.zeros(4), "hand"), [0.0, -3.1], atol=1e-12)


# -- OpenSim ----------------------------------------------------------------------------------------------------
DYNAMIC_WALKER = DATA / "DynamicWalkerModel.osim"


def test_dynamic_walker_planar_joint_on_locked_platform():
    """OpenSim's dynamic walker (OpenSim 4 ``HuntCrossleyForce::ContactParameters`` tags): a PlanarJoint base on a
    platform pinned to the ground with its coordinate locked at −10°. The platform is ground, the PlanarJoint's
    translations are the floating base (no advice to hold them), and gravity along the tilted platform is a
    10° slope; the bodies are the file's."""
    model = di.from_osim(str(DYNAMIC_WALKER))
    assert model.coordinate_names == ("Pelvis_tx", "Pelvis_ty", "Pelvis_rz", "RHip_rz", "RKnee_rz", "LHip_rz",
                                      "LKnee_rz")
    tree = model.tree()
    np.testing.assert_allclose(float(tree.slope), math.radians(10.0), rtol=1e-14)
    np.testing.assert_allclose(float(tree.g), 9.80665, rtol=1e-15)
    assert tree.body_names == ("Pelvis", "RightThigh", "RightShank", "LeftThigh", "LeftShank")
    np.testing.assert_allclose(model.mass_matrix(jnp.zeros(model.n))[0, 0], 4.1, rtol=1e-15)  # platform excluded


def test_dynamic_walker_on_a_welded_platform_gets_no_advice(tmp_path):
    """The same walker with its platform welded to the ground (OpenSim's ``WalkerModel`` layout): the PlanarJoint
    base imports, level."""
    text = DYNAMIC_WALKER.read_text()
    start = text.index('<PinJoint name="PlatformToGround">')
    end = text.index("</PinJoint>", start) + len("</PinJoint>")
    welded = text[start:end].replace("<PinJoint", "<WeldJoint").replace("</PinJoint>", "</WeldJoint>")
    path = tmp_path / "welded.osim"
    path.write_text(text[:start] + welded + text[end:])
    model = di.from_osim(str(path))
    assert model.coordinate_names[:3] == ("Pelvis_tx", "Pelvis_ty", "Pelvis_rz")
    assert float(model.tree().slope) == 0.0


def test_2d_gait_total_mass_and_pelvis():
    """OpenSim Moco's ``2D_gait.osim``: coordinates in the file's order, the file's total mass in M, and the
    pelvis' centre of mass at the reference the file's ``mass_center``."""
    import xml.etree.ElementTree as ET

    path = str(DATA / "2D_gait.osim")
    model = di.from_osim(path)
    assert model.coordinate_names[:3] == ("pelvis_tx", "pelvis_ty", "pelvis_tilt")
    xml = ET.parse(path).getroot().find("Model")
    total = sum(float(b.findtext("mass")) for b in xml.find("BodySet/objects"))
    np.testing.assert_allclose(model.mass_matrix(jnp.zeros(model.n))[:2, :2], total * np.eye(2), rtol=1e-14)
    pelvis = np.array(xml.find("BodySet/objects/Body[@name='pelvis']/mass_center").text.split(), float)
    np.testing.assert_allclose(model.tree().com_positions(jnp.zeros(model.n))[0], pelvis[:2], atol=1e-15)


# -- out and back -----------------------------------------------------------------------------------------------
def _built_in():
    return {"BipedWithTorso": di.BipedWithTorso(), "CompassGait(R=0)": di.CompassGait(R=0.0),
            "CrutchWalker": di.CrutchWalker(), "FiveLinkBiped": di.FiveLinkBiped(),
            "RimlessWheel": di.RimlessWheel(), "SevenLinkHuman": di.SevenLinkHuman(),
            "SimplestWalker": di.SimplestWalker()}


def _imported():
    cheetah_points = {"ffoot_tip": ("ffoot", (0.05, 0.0, -0.1)), "bfoot_tip": ("bfoot", (0.0, 0.0, -0.15))}
    return {"half_cheetah+points": di.from_mjcf(str(DATA / "half_cheetah.xml"), points=cheetah_points),
            **{name: di.from_mjcf(str(DATA / f"{name}.xml")) for name in GYM},
            "rabbit": di.from_urdf(str(RABBIT), root_hinge="BaseRotY"),
            "acrobot": di.from_urdf(str(DATA / "Acrobot.urdf")),
            "dynamic_walker": di.from_osim(str(DYNAMIC_WALKER)), "2D_gait": di.from_osim(str(DATA / "2D_gait.osim"))}


@pytest.fixture(scope="module")
def every_model():
    return {**_built_in(), **_imported()}


@needs_mujoco
@pytest.mark.parametrize("fmt", ["mjcf", "urdf"])
def test_round_trip_every_model(every_model, fmt, rng):
    """``from_mjcf(to_mjcf(m))`` and ``from_urdf(to_urdf(m))``: the same coordinates, points in the same order and
    the same M to 1e-12, for every built-in model (massless legs and point masses at MuJoCo's minimum, read back
    as zero) and every imported file (armature as MJCF armature / a URDF transmission); MuJoCo compiles every
    MJCF text. The MJCF text keeps a slope in its gravity."""
    for name, model in every_model.items():
        text = di.to_mjcf(model) if fmt == "mjcf" else di.to_urdf(model)
        if fmt == "mjcf":
            mujoco.MjModel.from_xml_string(text)
            back = di.from_mjcf(text)
            np.testing.assert_allclose(float(back.tree().slope), float(model.tree().slope), atol=1e-15)
        else:
            back = di.from_urdf(text, g=float(model.tree().g))
        assert back.coordinate_names == model.coordinate_names, name
        assert back.point_names == model.point_names, name
        qs = _postures(rng, model.n, 2)
        np.testing.assert_allclose(_mass_matrices(back, qs), _mass_matrices(model, qs), rtol=0, atol=1e-12,
                                   err_msg=name)
        np.testing.assert_array_equal(back.tree().mass == 0, model.tree().mass == 0, err_msg=name)
