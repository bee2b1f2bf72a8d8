"""OpenSim ``.osim`` models (format 4.x) in, read with the standard library's XML parser."""

import xml.etree.ElementTree as ET
from typing import Mapping, NamedTuple

import numpy as np

from .._models.tree_model import TreeModel
from .planar import Base, Link, Site, planar_model, select_sites, unit

_NOT_PLANAR = ("BallJoint", "FreeJoint", "GimbalJoint", "UniversalJoint", "EllipsoidJoint", "ScapulothoracicJoint",
               "SliderJoint")


def _vec(element, tag, default=(0.0, 0.0, 0.0)) -> np.ndarray:
    found = element.find(tag)
    return np.array(default if found is None or not (found.text or "").strip() else found.text.split(), float)


def _rotation(axis, angle) -> np.ndarray:
    """Rotation by `angle` about the unit vector `axis` (Rodrigues)."""
    x, y, z = unit(axis, "a rotation axis")
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def _transform(rotation=np.eye(3), translation=(0.0, 0.0, 0.0)) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = rotation, translation
    return out


def simm_spline(x, y, at: float) -> float:
    """The cubic spline of OpenSim's ``SimmSpline`` at `at`: end conditions matching the third derivatives of
    the cubics through the first and the last four points (Forsythe, Malcolm & Moler 1977, ``spline``), linear
    beyond the ends with the end slopes."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = len(x)
    if n < 4:
        return float(np.interp(at, x, y)) if n < 3 else float(np.polyval(np.polyfit(x, y, 2), at))
    h, slope = np.diff(x), np.diff(y) / np.diff(x)
    A, rhs = np.zeros((n, n)), np.zeros(n)
    for i in range(1, n - 1):  # continuity of the first derivative; unknowns σ_i = s''(x_i) / 6
        A[i, i - 1:i + 2] = h[i - 1], 2 * (h[i - 1] + h[i]), h[i]
        rhs[i] = slope[i] - slope[i - 1]
    third = lambda xs, ys: np.polyfit(xs, ys, 3)[0]  # noqa: E731  (s''' / 6 of the cubic through 4 points)
    A[0, :2], rhs[0] = (-h[0], h[0]), h[0] ** 2 * third(x[:4], y[:4])
    A[-1, -2:], rhs[-1] = (h[-1], -h[-1]), -h[-1] ** 2 * third(x[-4:], y[-4:])
    sigma = np.linalg.solve(A, rhs)
    b = slope - h * (sigma[1:] + 2 * sigma[:-1])
    if at <= x[0] or at >= x[-1]:
        end_slope = b[0] if at <= x[0] else slope[-1] + h[-1] * (sigma[-2] + 2 * sigma[-1])
        k = 0 if at <= x[0] else n - 1
        return float(y[k] + (at - x[k]) * end_slope)
    k = int(np.searchsorted(x, at) - 1)
    dx = at - x[k]
    return float(y[k] + dx * (b[k] + dx * (3 * sigma[k] + dx * (sigma[k + 1] - sigma[k]) / h[k])))


def _function(element, joint: str):
    """An OpenSim function of one coordinate as ``(f, slope)``: ``slope`` is its constant derivative for a linear
    function, ``None`` otherwise."""
    kind = element.tag
    if kind == "Constant":
        value = float(element.findtext("value"))
        return (lambda q: value), 0.0
    if kind == "LinearFunction":
        a, b = map(float, element.findtext("coefficients").split())
        return (lambda q: a * q + b), a
    if kind == "MultiplierFunction":
        inner, slope = _function(element.find("function")[0], joint)
        scale = float(element.findtext("scale", "1"))
        return (lambda q: scale * inner(q)), None if slope is None else scale * slope
    if kind in ("SimmSpline", "NaturalCubicSpline", "PiecewiseLinearFunction"):
        x, y = _vec(element, "x", ()), _vec(element, "y", ())
        if kind == "PiecewiseLinearFunction":
            return (lambda q: float(np.interp(q, x, y))), None
        return (lambda q: simm_spline(x, y, q)), None
    raise ValueError(f"joint {joint!r}: OpenSim function {kind} is not supported.")


class _Axis(NamedTuple):
    rotation: bool
    axis: np.ndarray
    coordinate: str | None
    value: object  # q ↦ angle or displacement
    slope: float | None


def _axes(joint) -> list[_Axis]:
    """The joint's motion as rotations then translations in the parent frame F (a CustomJoint's
    SpatialTransform; a PinJoint turns about F's z; a PlanarJoint turns about z and translates along x, y)."""
    names = [c.get("name") for c in joint.iter("Coordinate")]
    z, x, y = np.eye(3)[2], np.eye(3)[0], np.eye(3)[1]
    identity = (lambda q: q), 1.0
    if joint.tag == "PinJoint":
        return [_Axis(True, z, names[0], *identity)]
    if joint.tag == "PlanarJoint":
        return [_Axis(True, z, names[0], *identity), _Axis(False, x, names[1], *identity),
                _Axis(False, y, names[2], *identity)]
    if joint.tag == "WeldJoint":
        return []
    if joint.tag != "CustomJoint":
        why = "not planar" if joint.tag in _NOT_PLANAR else "not supported"
        raise ValueError(f"joint {joint.get('name')!r} is a {joint.tag}: {why} (a planar tree has pin joints).")
    out = []
    for axis in joint.find("SpatialTransform"):
        coords = (axis.findtext("coordinates") or "").split()
        if len(coords) > 1:
            raise ValueError(f"joint {joint.get('name')!r}: {axis.get('name')} depends on {coords}: coupled.")
        function = [e for e in axis if e.tag not in ("coordinates", "axis")][0]
        f, slope = _function(function[0] if function.tag == "function" else function, joint.get("name"))
        out.append(_Axis(axis.get("name").startswith("rotation"), _vec(axis, "axis"), coords[0] if coords else None,
                         f, slope))
    return out


def _offset_frames(joint) -> dict[str, tuple[str, np.ndarray]]:
    """The joint's PhysicalOffsetFrames: name ↦ (body, transform in that body); orientation is a body-fixed
    x-y-z rotation sequence."""
    out = {}
    for frame in joint.iter("PhysicalOffsetFrame"):
        a, b, c = _vec(frame, "orientation")
        rotation = _rotation((1, 0, 0), a) @ _rotation((0, 1, 0), b) @ _rotation((0, 0, 1), c)
        out[frame.get("name")] = (_body_name(frame.findtext("socket_parent")),
                                  _transform(rotation, _vec(frame, "translation")))
    return out


def _body_name(path: str) -> str:
    return path.strip().rstrip("/").split("/")[-1]


def _socket(joint, which: str, frames) -> tuple[str, np.ndarray]:
    name = joint.findtext(f"socket_{which}_frame").strip()
    return frames[name] if name in frames else (_body_name(name), np.eye(4))


class _Joint(NamedTuple):
    name: str
    parent: str
    child: str
    parent_frame: np.ndarray  # F in the parent body
    child_frame: np.ndarray  # M in the child body
    axes: list[_Axis]


def _joints(model) -> list[_Joint]:
    out = []
    for joint in model.find("JointSet/objects"):
        frames = _offset_frames(joint)
        (parent, pf), (child, cf) = _socket(joint, "parent", frames), _socket(joint, "child", frames)
        for c in joint.iter("Coordinate"):
            if (c.findtext("locked") or "").strip() == "true":
                raise ValueError(f"coordinate {c.get('name')!r} of joint {joint.get('name')!r} is locked (a "
                                 "constraint): replace its joint by a WeldJoint.")
        out.append(_Joint(joint.get("name"), parent, child, pf, cf, _axes(joint)))
    return out


def _motion(joint: _Joint, on_ground: bool, moving_centres: Mapping[str, float]):
    """The joint at its reference (every coordinate 0): ``X_FM``, its hinge ``(coordinate, axis in F)`` or
    ``None``, and its slides ``[(coordinate, axis in F)]`` (allowed on the ground joint only, the floating base)."""
    rotation, hinge, translation, slides = np.eye(3), None, np.zeros(3), []
    for ax in joint.axes:
        if ax.rotation and ax.coordinate is not None:
            if hinge is not None or ax.slope not in (1.0, -1.0):
                raise ValueError(f"joint {joint.name!r}: its rotation is not one pin angle ±{ax.coordinate!r} "
                                 "(two rotations, or a nonlinear or scaled one): not planar.")
            hinge = (ax.coordinate, rotation @ (ax.slope * unit(ax.axis, "axis")))
        if ax.rotation:
            rotation = rotation @ _rotation(ax.axis, ax.value(0.0))
        elif ax.coordinate is None:
            translation = translation + ax.value(0.0) * ax.axis
        elif on_ground and ax.slope == 1.0 and (hinge is None or ax.coordinate != hinge[0]):
            slides.append((ax.coordinate, unit(ax.axis, "axis")))
        elif ax.coordinate in moving_centres:
            translation = translation + ax.value(float(moving_centres[ax.coordinate])) * ax.axis
        else:
            raise ValueError(f"joint {joint.name!r}: its centre moves with {ax.coordinate!r} (a coupled "
                             "translation, not a pin joint); pass moving_centres={"
                             f"{ax.coordinate!r}: value}} to hold it where the coordinate has that value.")
    return _transform(rotation, translation), hinge, slides


def _base(slides, up) -> tuple[Base, np.ndarray | None]:
    if not slides:
        return Base(), None
    vertical = [abs(axis @ up) > 1 - 1e-9 for _, axis in slides]
    if len(slides) != 2 or sum(vertical) != 1:
        raise ValueError(f"the ground joint translates along {[c for c, _ in slides]}: a planar floating base "
                         "has one horizontal and one vertical translation.")
    (cx, ax), (cy, ay) = slides if vertical[1] else slides[::-1]
    if ay @ up < 0:
        raise ValueError(f"translation {cy!r} points down; the base's vertical translation must point up.")
    return Base((cx, cy)), ax


def from_osim(source, *, points=None, moving_centres: Mapping[str, float] | None = None) -> TreeModel:
    """Import a planar OpenSim model (``.osim``, format 4.x) as a :class:`~difimpact.TreeModel`.

    Read with the standard library's XML parser at the reference configuration (every coordinate 0). The
    ground joint's two translations (e.g. ``pelvis_tx``, ``pelvis_ty``) are the floating base; every other
    coordinate is a pin angle about the common axis normal to the plane (the ground's ``z`` in OpenSim's
    models), in a PinJoint, a PlanarJoint or a CustomJoint whose rotation is ``±q``; WeldJoints weld. Up is
    against the model's gravity. Coordinates keep the file's names and values (``q[i]`` in radians and metres,
    OpenSim's sign), e.g. ``gait10dof18musc`` gives ``(pelvis_tx, pelvis_ty, pelvis_tilt, hip_flexion_r, …)``.

    **Arguments:**

    - `source`: path to the ``.osim`` file.
    - `points`: named contact points, ``{name: marker name}`` or ``{name: (body name, (x, y, z) in that body's
      frame)}``; by default every marker.
    - `moving_centres`: ``{coordinate: value}`` holding a joint centre that moves with a coordinate (a knee
      whose translation is a spline of the knee angle) where the coordinate has that value; by default such a
      joint raises.

    **Returns:** a :class:`~difimpact.TreeModel`.

    Raises ``ValueError`` naming what is not planar: a ball, gimbal, universal or free joint, a rotation about
    another axis, a coupled translation (unless held), a locked coordinate, any constraint (a coordinate
    coupler such as a patella, a closed loop).
    """
    document = ET.parse(source).getroot()
    if int(document.get("Version", "0")) < 40000:
        raise ValueError(f"`source`: .osim format {document.get('Version')} is older than 4.0 (40000); open and "
                         "save it with OpenSim 4 first.")
    model = document.find("Model")
    constraints = model.find("ConstraintSet/objects")
    if constraints is not None and len(constraints):
        found = [f"{c.get('name')} ({c.tag})" for c in constraints]
        raise ValueError(f"the model has constraints {found}: a planar tree has no coupled coordinates or closed "
                         "loops.")
    gravity = _vec(model, "gravity", (0.0, -9.80665, 0.0))
    up = -gravity if np.any(gravity) else np.array([0.0, 1.0, 0.0])
    bodies = {b.get("name"): b for b in model.find("BodySet/objects")}
    joints = _joints(model)
    ground = model.find("Ground").get("name", "ground")
    links, index, world, base, forward = [], {}, {ground: np.eye(4)}, Base(), None
    pending = [j for j in joints if j.parent == ground]
    if len(pending) != 1:
        raise ValueError(f"expected one joint to the ground, found {[j.name for j in pending]}.")
    while pending:
        joint = pending.pop(0)
        on_ground = joint.parent == ground
        motion, hinge, slides = _motion(joint, on_ground, moving_centres or {})
        if on_ground:
            base, forward = _base([(c, a) for c, a in slides], unit(up, "up"))
        outer = world[joint.parent] @ joint.parent_frame
        world[joint.child] = outer @ motion @ np.linalg.inv(joint.child_frame)
        frame, body = world[joint.child], bodies[joint.child]
        rot = frame[:3, :3]
        xx, yy, zz, xy, xz, yz = _vec(body, "inertia", (0.0,) * 6)
        inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        index[joint.child] = len(links)
        links.append(Link(joint.child, index.get(joint.parent, -1), hinge and hinge[0],
                          None if hinge is None else outer[:3, :3] @ hinge[1], (outer @ motion)[:3, 3].copy(), 0.0,
                          float(body.findtext("mass")), (frame @ np.append(_vec(body, "mass_center"), 1.0))[:3],
                          rot @ inertia @ rot.T, frame))
        pending = [j for j in joints if j.parent == joint.child] + pending
    sites = [Site(m.get("name"), index[_body_name(m.findtext("socket_parent_frame"))],
                  (world[_body_name(m.findtext("socket_parent_frame"))] @ np.append(_vec(m, "location"), 1.0))[:3])
             for m in model.iterfind("MarkerSet/objects/Marker")]
    return planar_model(links, select_sites(sites, links, points), up=up, g=float(np.linalg.norm(gravity)),
                        base=base, forward=forward)
