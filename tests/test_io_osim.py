"""The OpenSim importer: the treadmill subject's scaled gait10dof18musc model (package data) has the file's total
mass and, at several postures, the segment centres of mass of an independent planar forward kinematics written
from the file's numbers; OpenSim's SimmSpline; clear errors for what is not planar."""

import importlib.resources
import xml.etree.ElementTree as ET

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact._io.osim import simm_spline

OSIM = str(importlib.resources.files("difimpact") / "data" / "gait" / "gait10dof18musc_subject01.osim")
KNEE = -0.7  # rad (OpenSim's knee_angle: negative is flexion)


@pytest.fixture(scope="module")
def model():
    return di.from_osim(OSIM, moving_centres={"knee_angle_r": KNEE, "knee_angle_l": 0.0})


@pytest.fixture(scope="module")
def xml():
    return ET.parse(OSIM).getroot().find("Model")


def _numbers(xml, path):
    return np.array(xml.find(path).text.split(), float)


def test_total_mass_and_coordinates(model, xml):
    masses = [float(b.findtext("mass")) for b in xml.find("BodySet/objects")]
    np.testing.assert_allclose(float(jnp.sum(model.tree().mass)), sum(masses), rtol=1e-14)
    np.testing.assert_allclose(sum(masses), 72.6, rtol=1e-9)  # the subject's mass in the scaling setup
    assert model.coordinate_names[:3] == ("pelvis_tx", "pelvis_ty", "pelvis_tilt")
    assert set(model.coordinate_names[3:]) == {f"{j}_{s}" for j in ("hip_flexion", "knee_angle", "ankle_angle")
                                               for s in "rl"} | {"lumbar_extension"}


def _rot(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]])  # OpenSim: counter-clockwise about +z, seen from the right


def _reference_coms(xml, q: dict) -> dict:
    """Pelvis, right femur, right tibia and torso COMs written out from the file's numbers (2-D, x forward,
    y up): joint offsets of the hip, the knee (its translation splines at the knee angle, scaled) and the back."""
    body = lambda name: xml.find(f"BodySet/objects/Body[@name='{name}']")  # noqa: E731
    com = lambda name: _numbers(body(name), "mass_center")[:2]  # noqa: E731
    offset = lambda joint, frame: _numbers(  # noqa: E731
        xml.find(f"JointSet/objects/*[@name='{joint}']"),
        f"frames/PhysicalOffsetFrame[@name='{frame}']/translation")[:2]
    knee = xml.find("JointSet/objects/*[@name='knee_r']/SpatialTransform")
    spline = lambda i: float(knee[3 + i].findtext("MultiplierFunction/scale")) * simm_spline(  # noqa: E731
        _numbers(knee[3 + i], "MultiplierFunction/function/SimmSpline/x"),
        _numbers(knee[3 + i], "MultiplierFunction/function/SimmSpline/y"),
        q["knee_angle_r"])
    pelvis = np.array([q["pelvis_tx"], q["pelvis_ty"]])
    r_pelvis = _rot(q["pelvis_tilt"])
    hip = pelvis + r_pelvis @ offset("hip_r", "pelvis_offset")
    r_femur = r_pelvis @ _rot(q["hip_flexion_r"])
    knee_centre = hip + r_femur @ np.array([spline(0), spline(1)])
    r_tibia = r_femur @ _rot(q["knee_angle_r"])
    back = pelvis + r_pelvis @ offset("back", "pelvis_offset")
    r_torso = r_pelvis @ _rot(q["lumbar_extension"])
    return {"pelvis": pelvis + r_pelvis @ com("pelvis"), "femur_r": hip + r_femur @ com("femur_r"),
            "tibia_r": knee_centre + r_tibia @ com("tibia_r"), "torso": back + r_torso @ com("torso")}


@pytest.mark.parametrize("posture", [
    dict(pelvis_tx=0.0, pelvis_ty=0.0, pelvis_tilt=0.0, hip_flexion_r=0.0, lumbar_extension=0.0),
    dict(pelvis_tx=0.3, pelvis_ty=0.95, pelvis_tilt=0.1, hip_flexion_r=0.5, lumbar_extension=-0.3),
])
def test_segment_centres_of_mass(model, xml, posture):
    q = {name: 0.0 for name in model.coordinate_names} | posture | {"knee_angle_r": KNEE}
    x = jnp.asarray([q[n] for n in model.coordinate_names])
    coms = np.asarray(jax.jit(lambda x: model.tree().com_positions(x))(x))
    expected = _reference_coms(xml, q)
    for name, value in expected.items():
        np.testing.assert_allclose(coms[model.tree().body_names.index(name)], value, rtol=0, atol=1e-12,
                                   err_msg=name)


def test_markers_are_points(model):
    assert {"R.Heel", "L.Heel", "R.Toe.Tip"} <= set(model.point_names)


def test_simm_spline_reproduces_cubics_and_extrapolates_linearly():
    """The Forsythe–Malcolm–Moler end conditions make the spline exact on cubic data."""
    x = np.array([-2.0, -1.3, -0.4, 0.2, 0.9, 1.7, 2.5])
    cubic = np.poly1d([0.3, -0.2, 1.1, -0.5])
    for at in (-1.9, -0.1, 0.5, 2.4):
        np.testing.assert_allclose(simm_spline(x, cubic(x), at), cubic(at), rtol=0, atol=1e-12)
    slope = cubic.deriv()(2.5)
    np.testing.assert_allclose(simm_spline(x, cubic(x), 3.0), cubic(2.5) + 0.5 * slope, atol=1e-12)


def _edited(tmp_path, edits):
    text = open(OSIM).read()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    path = tmp_path / "edited.osim"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("edits, match", [
    ([('<ConstraintSet name="constraintset">\n   <objects />',
       '<ConstraintSet name="constraintset">\n   <objects><CoordinateCouplerConstraint name="patella_r"/></objects>')],
     r"constraints \['patella_r \(CoordinateCouplerConstraint\)'\]"),
    ([('<PinJoint name="ankle_r">', '<BallJoint name="ankle_r">'),
      ('</PinJoint>\n    <WeldJoint name="subtalar_r">', '</BallJoint>\n    <WeldJoint name="subtalar_r">')],
     "'ankle_r' is a BallJoint: not planar"),
    ([], "centre moves with 'knee_angle_r'"),
])
def test_not_planar_is_named(tmp_path, edits, match):
    held = {"knee_angle_r": 0.0, "knee_angle_l": 0.0} if edits else None
    with pytest.raises(ValueError, match=match):
        di.from_osim(_edited(tmp_path, edits), moving_centres=held)
