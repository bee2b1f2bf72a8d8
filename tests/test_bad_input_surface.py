"""Bad input at the edges of the importers, the passive gaits and the push-off: a locked OpenSim coordinate is
welded at its default value (checked against the free model at that value and a WeldJoint model), a gait search
from a guess outside the walker's range says so by name before compiling, ``floquet_multipliers`` of a powered
gait names ``tracking_floquet``, and a push-off impulse given as a Python number is traced (one program for
every value)."""

import math

import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
import difimpact._impact.pushoff as pushoff_module
from difimpact.papers.gait_classics.goswami_1998 import X_3DEG
from difimpact.papers.gait_classics.garcia_1998 import X_LONG, X_SHORT
from difimpact._gait.fixed_point import checked_guess

KNEE = 0.3  # rad, the knee's default value


def _osim(knee_coordinate: str, knee_joint: str = "PinJoint", knee_orientation: str = "0 0 0") -> str:
    """A thigh on a PlanarJoint base (rz, tx, ty) and a shank on a knee joint 0.4 m below the hip, with a marker
    on the shank."""
    return f"""<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000"><Model name="leg"><gravity>0 -9.81 0</gravity>
 <BodySet><objects>
  <Body name="thigh"><mass>2</mass><mass_center>0 -0.2 0</mass_center><inertia>0.1 0.1 0.05 0 0 0</inertia></Body>
  <Body name="shank"><mass>1.5</mass><mass_center>0.01 -0.25 0</mass_center><inertia>0.1 0.1 0.03 0 0 0</inertia>
  </Body>
 </objects></BodySet>
 <JointSet><objects>
  <PlanarJoint name="base"><socket_parent_frame>ground_offset</socket_parent_frame>
   <socket_child_frame>thigh_offset</socket_child_frame>
   <coordinates><Coordinate name="rz"/><Coordinate name="tx"/><Coordinate name="ty"/></coordinates>
   <frames><PhysicalOffsetFrame name="ground_offset"><socket_parent>/ground</socket_parent></PhysicalOffsetFrame>
    <PhysicalOffsetFrame name="thigh_offset"><socket_parent>/bodyset/thigh</socket_parent></PhysicalOffsetFrame>
   </frames></PlanarJoint>
  <{knee_joint} name="knee"><socket_parent_frame>thigh_offset</socket_parent_frame>
   <socket_child_frame>shank_offset</socket_child_frame>
   <coordinates>{knee_coordinate}</coordinates>
   <frames><PhysicalOffsetFrame name="thigh_offset"><socket_parent>/bodyset/thigh</socket_parent>
     <translation>0 -0.4 0</translation><orientation>{knee_orientation}</orientation></PhysicalOffsetFrame>
    <PhysicalOffsetFrame name="shank_offset"><socket_parent>/bodyset/shank</socket_parent></PhysicalOffsetFrame>
   </frames></{knee_joint}>
 </objects></JointSet>
 <MarkerSet><objects><Marker name="foot"><socket_parent_frame>/bodyset/shank</socket_parent_frame>
  <location>0.05 -0.45 0</location></Marker></objects></MarkerSet>
</Model></OpenSimDocument>"""


def _knee(locked: str | None = None, attribute: str = "") -> str:
    lock = "" if locked is None else f"<locked>{locked}</locked>"
    return f'<Coordinate name="knee"{attribute}><default_value>{KNEE}</default_value>{lock}</Coordinate>'


@pytest.mark.parametrize("word", ["true", " True ", "1"], ids=["true", "True", "1"])
def test_locked_coordinate_is_welded_at_its_default_value(word):
    """OpenSim holds a locked coordinate at its default value (its boolean read as SimTK reads one): the knee is
    no coordinate, and the model is the free one at knee = 0.3 (M its block, the foot where it is there) and the
    one whose knee is a WeldJoint turned by 0.3 in its parent frame."""
    locked = di.from_osim(_osim(_knee(word)))
    free = di.from_osim(_osim(_knee()))
    welded = di.from_osim(_osim("", "WeldJoint", f"0 0 {KNEE}"))
    assert locked.coordinate_names == welded.coordinate_names == ("tx", "ty", "rz")
    assert free.coordinate_names == ("tx", "ty", "rz", "knee")
    q = jnp.array([0.1, 0.9, 0.2])
    q_free = jnp.append(q, KNEE)
    np.testing.assert_allclose(locked.mass_matrix(q), free.mass_matrix(q_free)[:3, :3], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(locked.mass_matrix(q), welded.mass_matrix(q), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(locked.point(q, "foot"), free.point(q_free, "foot"), atol=1e-12)
    np.testing.assert_allclose(locked.point(q, "foot"), welded.point(q, "foot"), atol=1e-12)
    c, s = math.cos(KNEE), math.sin(KNEE)
    foot = np.array([0.0, -0.4]) + np.array([[c, -s], [s, c]]) @ [0.05, -0.45]  # at q = 0, by hand
    np.testing.assert_allclose(locked.point(jnp.zeros(3), "foot"), foot, atol=1e-12)


@pytest.mark.parametrize("knee, match", [
    (_knee(attribute=' locked="true"'), (r"coordinate 'knee' has the attribute locked='true', which OpenSim does "
                                         r"not read .* write <locked>true</locked>")),
    (_knee("maybe"), r"coordinate 'knee' <locked> must be true or false, got 'maybe'"),
], ids=["attribute", "not-a-boolean"])
def test_locked_that_opensim_would_not_read_is_refused(knee, match):
    with pytest.raises(ValueError, match=match):
        di.from_osim(_osim(knee))


@pytest.mark.parametrize("x0, match", [
    ([1e10, 0.2, 0.016], r"`x0` = .* is outside the walker's range: its stance-leg angle q3 = 1e\+10 rad"),
    ([-math.pi / 2, 0.2, 0.016], r"`x0` = .* is outside the walker's range: .* q3 = -1.5708 rad"),
    ([0.2, math.nan, 0.016], r"`x0` = .* must be finite"),
], ids=["huge", "on-the-ground", "nan"])
def test_gait_guess_outside_the_range_is_named(x0, match):
    """Refused in Python, before anything compiles (a fall on the first stride was the message)."""
    with pytest.raises(ValueError, match=match):
        di.periodic_gait(di.SimplestWalker(0.009), jnp.array(x0))
    with pytest.raises(ValueError, match=match):
        di.continue_gait(di.SimplestWalker, np.array(x0), 0.009, 0.01)


def test_the_library_guesses_pass():
    for walker, x0 in ((di.SimplestWalker(0.009), X_LONG), (di.SimplestWalker(0.009), X_SHORT),
                       (di.CompassGait(slope=math.radians(3.0)), X_3DEG),
                       (di.SimplestWalker(0.009), np.zeros(3)), (di.RimlessWheel(), np.array([1.25]))):
        assert checked_guess(walker, x0) is x0


def test_floquet_multipliers_of_a_powered_gait_names_tracking_floquet():
    powered = object.__new__(di.OptimalGait)  # no solve: the type is all that matters
    with pytest.raises(TypeError, match=r"got OptimalGait.*`tracking_floquet\(gait"):
        di.floquet_multipliers(powered)
    with pytest.raises(TypeError, match=r"must be a PeriodicGait .* got str"):
        di.floquet_multipliers("gait")
    assert callable(di.tracking_floquet)


def test_pushoff_impulse_as_a_python_number_is_traced(monkeypatch):
    """Two Python impulses, one trace: the second call reuses the program (a trace runs the push-off's
    velocity solve once; a compile-time constant would trace and compile again); so do `q` and `qdot_minus` given
    as lists."""
    traces = []
    velocity = pushoff_module._pushoff_velocity
    monkeypatch.setattr(pushoff_module, "_pushoff_velocity", lambda *a: traces.append(1) or velocity(*a))
    w = di.SimplestWalker(0.0)  # Kuo's point-mass walker at heel strike, inter-leg angle 2α
    alpha, v = 0.3, 0.5
    q, qdot = w.stance_configuration(jnp.array([alpha, 2 * alpha])), jnp.array([0.0, 0.0, v, 0.0])
    first = di.pushoff_impact(w, q, qdot, 0.0123, massless="keep")
    before = len(traces)
    second = di.pushoff_impact(w, q, qdot, 0.0456, massless="keep")
    assert len(traces) == before
    as_lists = [di.pushoff_impact(w, [float(x) for x in q], [0.0, 0.0, v, 0.0], P, massless="keep")
                for P in (0.0123, 0.0456)]  # q and q̇ as lists of Python numbers: traced too
    assert len(traces) == before
    np.testing.assert_array_equal(as_lists[1].qdot_plus, second.qdot_plus)
    for P, sol in ((0.0123, first), (0.0456, second)):  # Kuo: v⁺ = v⁻ cos 2α + P sin 2α (unit mass)
        speed = jnp.linalg.norm(w.point_velocity(q, sol.qdot_plus, "H"))
        assert abs(speed - (v * math.cos(2 * alpha) + P * math.sin(2 * alpha))) < 1e-13
    with pytest.raises(ValueError, match="`impulse` must be non-negative, got -1.0"):
        di.pushoff_impact(w, q, qdot, -1.0, massless="keep")
