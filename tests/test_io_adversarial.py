"""Importers and exporters fed bad input: each case of ``docs/bad-input.md``'s importer rows ends in a clear error
naming the file, element or argument (never a raw ``KeyError``/``AttributeError``, a parser traceback or a hang),
names that XML must escape survive both writers, and a property-test family feeds mutated real files (an
attribute dropped, a number corrupted, an element deleted) to each importer: the result is a clear error or a
model whose M is right (MJCF: MuJoCo's ``mj_fullM`` of the same mutated text; URDF: Pinocchio's CRBA of it where
Pinocchio reads it too; ``.osim``: finite, symmetric, positive semi-definite)."""

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import difimpact as di

DATA = Path(__file__).parent / "data"
RABBIT = (DATA / "five_link_walker.urdf").read_text()
WALKER = (DATA / "DynamicWalkerModel.osim").read_text()
try:
    import mujoco
except ImportError:
    mujoco = None
try:
    import pinocchio as pin
except ImportError:
    pin = None
needs_mujoco = pytest.mark.skipif(mujoco is None, reason="the `mjcf` extra (mujoco) is not installed")

JOINT_SET_END = "</objects>\n\t\t\t<groups />\n\t\t</JointSet>"
MARKERS = ('<MarkerSet name="markerset"><objects><Marker name="toe"><socket_parent_frame>/bodyset/Ghost'
           '</socket_parent_frame><location>0 0 0</location></Marker></objects></MarkerSet></Model>')


def _file(tmp_path, text, name="model.osim") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _extra_joint(parent: str, child: str) -> str:
    """The dynamic walker with one more joint, a weld ``parent → child``."""
    weld = (f'<WeldJoint name="loop"><socket_parent_frame>/bodyset/{parent}</socket_parent_frame>'
            f'<socket_child_frame>/bodyset/{child}</socket_child_frame></WeldJoint>')
    return WALKER.replace(JOINT_SET_END, weld + JOINT_SET_END)


PROBES = {
    "osim closed loop (was a hang)": (lambda t: di.from_osim(_file(t, _extra_joint("LeftShank", "Pelvis"))),
                                      ValueError, "joints 'PelvisToPlatform' and 'loop' both attach 'Pelvis': a closed loop"),
    "osim joint into the ground": (lambda t: di.from_osim(_file(t, _extra_joint("Platform", "ground"))),
                                   ValueError, "both attach 'ground'"),
    "urdf closed loop (doubled a mass)": (lambda t: di.from_urdf(RABBIT.replace("</robot>", (
        '<joint name="loop" type="fixed"><parent link="left_shin"/><child link="right_shin"/></joint></robot>')
    )), ValueError, "link 'right_shin' is the child of joints 'q2_right' and 'loop': a closed loop"),
    "urdf cycle (was RecursionError)": (lambda t: di.from_urdf(RABBIT.replace("</robot>", (
        '<link name="a"/><link name="b"/><joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>'
        '<joint name="ba" type="fixed"><parent link="b"/><child link="a"/></joint></robot>'))),
        ValueError, r"links \['a', 'b'\] are not connected to the root 'torso': their joints form a cycle"),
    "urdf undeclared child link": (lambda t: di.from_urdf(RABBIT.replace("</robot>", (
        '<joint name="x" type="fixed"><parent link="torso"/><child link="ghost"/></joint></robot>'))),
        ValueError, "joint 'x' has child link 'ghost', which is not declared"),
    "urdf undeclared parent other than world": (lambda t: di.from_urdf(RABBIT.replace("</robot>", (
        '<link name="a"/><joint name="x" type="fixed"><parent link="ghost"/><child link="a"/></joint></robot>'))),
        ValueError, "joint 'x' has parent link 'ghost', which is not declared"),
    "osim marker on a missing body": (lambda t: di.from_osim(_file(t, WALKER.replace("</Model>", MARKERS))),
                                      ValueError, "marker 'toe' is on 'Ghost', which is not a body"),
    "osim body without mass": (lambda t: di.from_osim(_file(t, WALKER.replace("<mass>1</mass>", "", 2))),
                               ValueError, r"body 'Platform' <mass> is missing"),
    "urdf inertial without mass": (lambda t: di.from_urdf(RABBIT.replace('<mass value="12"/>', "")),
                                   ValueError, r"link 'torso': <inertial> has no <mass"),
    "osim non-numeric mass": (lambda t: di.from_osim(_file(t, WALKER.replace("<mass>1</mass>", "<mass>heavy</mass>"))),
                              ValueError, r"body 'Platform' <mass> must be a number, got 'heavy'"),
    "urdf non-numeric mass": (lambda t: di.from_urdf(RABBIT.replace('<mass value="12"/>', '<mass value="twelve"/>')),
                              ValueError, r"link 'torso' <mass value> must be a number, got 'twelve'"),
    "urdf negative mass": (lambda t: di.from_urdf(RABBIT.replace('<mass value="12"/>', '<mass value="-12"/>')),
                           ValueError, r"link 'torso' <mass value> must be non-negative"),
    "urdf NaN inertia": (lambda t: di.from_urdf(RABBIT.replace('iyy="1.33"', 'iyy="nan"')),
                         ValueError, r"link 'torso' <inertia iyy> must be finite"),
    "urdf bad motor inertia": (lambda t: di.from_urdf(RABBIT.replace("<motorInertia>0.000332", "<motorInertia>x", 1)),
                               ValueError, r"transmission 'q1_right_trans' <motorInertia> must be a number"),
    "osim Version abc": (lambda t: di.from_osim(_file(t, WALKER.replace('Version="40000"', 'Version="abc"'))),
                         ValueError, "has Version='abc', not a number"),
    "osim without Model": (lambda t: di.from_osim('<OpenSimDocument Version="40000"></OpenSimDocument>'),
                           ValueError, "has no <Model>"),
    "MJCF passed to from_urdf": (lambda t: di.from_urdf(str(DATA / "hopper.xml")), ValueError,
                                 "is a <mujoco> document, not URDF .*read it with `from_mjcf`"),
    "URDF passed to from_osim": (lambda t: di.from_osim(str(DATA / "Acrobot.urdf")), ValueError,
                                 "is a <robot> document, not OpenSim .*read it with `from_urdf`"),
    "directory to from_urdf": (lambda t: di.from_urdf(str(t)), ValueError, "is a directory, not a URDF file"),
    "directory to from_osim": (lambda t: di.from_osim(str(t)), ValueError, "is a directory, not an OpenSim"),
    "missing file": (lambda t: di.from_osim(str(t / "nope.osim")), ValueError, "no OpenSim .osim file"),
    "source of a wrong type": (lambda t: di.from_urdf(3), TypeError, "`source` must be a path to a URDF file"),
    "malformed URDF": (lambda t: di.from_urdf("<robot><link name='a'></robot>"), ValueError,
                       "the URDF text is not well-formed XML"),
    "malformed osim": (lambda t: di.from_osim(_file(t, WALKER[:5000])), ValueError, "is not well-formed XML"),
    "2-vector point offset": (lambda t: di.from_urdf(RABBIT, points={"toe": ("right_shin", (0.0, 0.4))}),
                              ValueError, r"points\['toe'\]: the offset must be three finite numbers"),
    "points not a mapping": (lambda t: di.from_urdf(RABBIT, points=["toe"]), TypeError, "`points` must be a mapping"),
    "root_hinge naming a joint": (lambda t: di.from_urdf(RABBIT, root_hinge="q1_left"), ValueError,
                                  "`root_hinge` must be a new coordinate name"),
    "to_urdf given the class": (lambda t: di.to_urdf(di.CrutchWalker), TypeError,
                                "got the class CrutchWalker itself: pass an instance"),
    "to_mjcf given the class": (lambda t: di.to_mjcf(di.CrutchWalker), TypeError, "got the class CrutchWalker"),
}


@pytest.mark.parametrize("case", list(PROBES))
def test_probe_gives_clear_error(case, tmp_path):
    probe, kind, match = PROBES[case]
    with pytest.raises(kind, match=match):
        probe(tmp_path)


@needs_mujoco
@pytest.mark.parametrize("source, match", [
    ("<mujoco><worldbody></mujoco>", "the MJCF text is not well-formed XML"),
    (str(DATA / "Acrobot.urdf"), "is a <robot> document, not MJCF"),
    (str(DATA), "is a directory, not an MJCF file"),
    ('<mujoco><worldbody><body><joint type="hinge" axis="0 1 0" range="1"/></body></worldbody></mujoco>',
     "MuJoCo cannot compile the MJCF text"),
])
def test_mjcf_probe_gives_clear_error(source, match):
    with pytest.raises(ValueError, match=match):
        di.from_mjcf(source)


def _odd_names_model(world: str):
    names = ['a&b', 'c<d>', world]
    bodies = [di.Body(names[0], None, 2, 1.0, 0.1, (0.5, 0.0)),
              di.Body(names[1], names[0], 3, 2.0, 0.2, (0.3, 0.0), (1.0, 0.0)),
              di.Body(names[2], names[1], 4, 1.0, 0.1, (0.2, 0.0), (0.6, 0.0))]
    points = [di.Point('p&"<>', names[2], (0.4, 0.0)), di.Point("q", names[0], (1.0, 0.0))]
    return di.TreeModel(di.PlanarTree.build(5, bodies, points), ("x", "y", "h&1", "h<2>", 'h"3'))


@needs_mujoco
def test_writers_escape_names_and_take_a_body_named_world():
    """Names with ``& < > "`` survive both writers; a body named ``world`` survives URDF (the writer's own root
    link is renamed) and is refused by name for MJCF, where ``world`` is MuJoCo's world body."""
    q = jnp.array([0.1, 0.2, 0.3, -0.4, 0.5])
    for world, fmt in (("world", "urdf"), ("wrist", "urdf"), ("wrist", "mjcf")):
        model = _odd_names_model(world)
        back = di.from_urdf(di.to_urdf(model)) if fmt == "urdf" else di.from_mjcf(di.to_mjcf(model))
        assert back.coordinate_names == model.coordinate_names and back.point_names == model.point_names
        assert back.tree().body_names == model.tree().body_names
        np.testing.assert_allclose(back.mass_matrix(q), model.mass_matrix(q), atol=1e-13)
    with pytest.raises(ValueError, match="a body is named 'world', MuJoCo's name for its world body"):
        di.to_mjcf(_odd_names_model("world"))


# -- mutated real files -----------------------------------------------------------------------------------------
_CORRUPT = ("abc", "nan", "inf", "-1", "1e308", "", "0")
_NAMES = re.compile(r"'[^']*'|<\w|`")


@st.composite
def _mutation(draw, text: str):
    root = ET.fromstring(text)
    elements = list(root.iter())[1:]
    element = elements[draw(st.integers(0, len(elements) - 1))]
    op = draw(st.sampled_from(("drop attribute", "corrupt number", "delete element")))
    if op == "delete element":
        parent = next(p for p in root.iter() if element in list(p))
        parent.remove(element)
    elif op == "drop attribute" and element.attrib:
        del element.attrib[draw(st.sampled_from(sorted(element.attrib)))]
    elif op == "corrupt number":
        fields = [k for k, v in element.attrib.items() if re.search(r"\d", v)]
        bad = draw(st.sampled_from(_CORRUPT))
        if fields:
            key = draw(st.sampled_from(fields))
            element.set(key, re.sub(r"-?[\d.]+(e-?\d+)?", bad, element.get(key), count=1))
        elif element.text and re.search(r"\d", element.text):
            element.text = re.sub(r"-?[\d.]+(e-?\d+)?", bad, element.text, count=1)
    return f"{op} in <{element.tag}>", ET.tostring(root, encoding="unicode")


def _clear_or_model(read, text):
    """``read(text)``: a clear error (``ValueError``/``TypeError`` naming something), or the model."""
    try:
        return read(text)
    except (ValueError, TypeError) as error:
        assert _NAMES.search(str(error)), f"an error that names nothing: {error}"
        return None


def _sane(model, rng):
    q = jnp.asarray(np.concatenate([[0.1, -0.2], rng.uniform(-1, 1, model.n - 2)]))
    mass = np.asarray(model.mass_matrix(q))
    assert np.all(np.isfinite(mass)) and np.allclose(mass, mass.T, rtol=0, atol=1e-12 * np.max(np.abs(mass)))
    assert np.min(np.linalg.eigvalsh(mass)) >= -1e-10 * np.max(np.abs(mass))
    return q, mass


_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@needs_mujoco
@_SETTINGS
@given(data=st.data())
def test_mutated_mjcf_is_clear_error_or_mujocos_mass_matrix(data):
    text = (DATA / data.draw(st.sampled_from(("hopper.xml", "inverted_double_pendulum.xml")))).read_text()
    what, mutated = data.draw(_mutation(text))
    model = _clear_or_model(di.from_mjcf, mutated)
    if model is None:
        return
    m = mujoco.MjModel.from_xml_string(mutated)
    d = mujoco.MjData(m)
    q, mass = _sane(model, np.random.default_rng(0))
    joints = [m.joint(j).name or f"joint{j}" for j in range(m.njnt)]
    idx = [model.coordinate_names.index(j) for j in joints]
    d.qpos[:] = np.asarray(q)[idx]
    mujoco.mj_forward(m, d)
    full = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, full)
    np.testing.assert_allclose(mass[np.ix_(idx, idx)], full, rtol=1e-12, atol=1e-12 * np.max(np.abs(full)),
                               err_msg=what)


@pytest.mark.skipif(pin is None, reason="pinocchio (in the `test` extra) is not installed")
@_SETTINGS
@given(data=st.data())
def test_mutated_urdf_is_clear_error_or_pinocchios_mass_matrix(data):
    what, mutated = data.draw(_mutation(RABBIT))
    model = _clear_or_model(lambda t: di.from_urdf(t, motor_inertia=False), mutated)
    if model is None:
        return
    q, mass = _sane(model, np.random.default_rng(1))
    if "1e308" in mutated:  # Pinocchio's 3-D algebra overflows next to a huge out-of-plane inertia; ours projects it
        return
    try:
        pmodel = pin.buildModelFromXML(mutated)
    except Exception:  # noqa: BLE001 - Pinocchio refuses some files this importer reads; nothing to compare
        return
    joints = [name for name in model.coordinate_names[2:] if pmodel.existJointName(name)]
    if len(joints) != model.n - 2:
        return
    qp = pin.neutral(pmodel)
    for name, value in zip(joints, np.asarray(q)[2:]):
        joint = pmodel.joints[pmodel.getJointId(name)]
        qp[joint.idx_q:joint.idx_q + joint.nq] = [np.cos(value), np.sin(value)] if joint.nq == 2 else [value]
    full = pin.crba(pmodel, pmodel.createData(), qp)
    full = np.triu(full) + np.triu(full, 1).T
    vidx = [pmodel.joints[pmodel.getJointId(name)].idx_v for name in joints]
    np.testing.assert_allclose(mass[2:, 2:], full[np.ix_(vidx, vidx)], rtol=0, atol=1e-12, err_msg=what)


@_SETTINGS
@given(data=st.data())
def test_mutated_osim_is_clear_error_or_a_sane_model(data):
    text = WALKER.replace("HuntCrossleyForce::", "HuntCrossleyForce__")
    _, mutated = data.draw(_mutation(text))
    model = _clear_or_model(di.from_osim, mutated)
    if model is not None:
        _sane(model, np.random.default_rng(2))


def test_mutation_strategy_reaches_the_reader():
    """The property tests above are not vacuous: unmutated, each file imports."""
    assert di.from_osim(WALKER).n == 7 and di.from_urdf(RABBIT).n == 6
    jax.block_until_ready(di.from_urdf(RABBIT).mass_matrix(jnp.zeros(6)))
