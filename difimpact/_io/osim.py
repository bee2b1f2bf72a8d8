"""OpenSim ``.osim`` models (format 4.x) in, read with the standard library's XML parser."""

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from .._models.tree_model import TreeModel
from .osim_functions import function as _function
from .osim_functions import simm_spline as simm_spline
from .planar import Link, Site, base_from_slides, planar_model, select_sites, unit
from .source import floats, parse, scalar

_NOT_PLANAR = ("BallJoint", "FreeJoint", "GimbalJoint", "UniversalJoint", "EllipsoidJoint", "ScapulothoracicJoint",
               "SliderJoint")


def _vec(element, tag, default=(0.0, 0.0, 0.0), where: str = "") -> np.ndarray:
    found = element.find(tag)
    count = len(default) if len(default) else None
    return floats(None if found is None else found.text, count, f"{where} <{tag}>".strip(), default=default)


def _rotation(axis, angle) -> np.ndarray:
    """Rotation by `angle` about the unit vector `axis` (Rodrigues)."""
    x, y, z = unit(axis, "a rotation axis")
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def _transform(rotation=np.eye(3), translation=(0.0, 0.0, 0.0)) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3], out[:3, 3] = rotation, translation
    return out


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
    needs = {"PinJoint": 1, "PlanarJoint": 3}.get(joint.tag, 0)
    if len(names) < needs:
        raise ValueError(f"joint {joint.get('name')!r} is a {joint.tag} with {len(names)} coordinates; it has "
                         f"{needs}.")
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
    transform = joint.find("SpatialTransform")
    if transform is None:
        raise ValueError(f"CustomJoint {joint.get('name')!r} has no <SpatialTransform>.")
    out = []
    for axis in transform:
        coords = (axis.findtext("coordinates") or "").split()
        if len(coords) > 1:
            raise ValueError(f"joint {joint.get('name')!r}: {axis.get('name')} depends on {coords}: coupled.")
        function = [e for e in axis if e.tag not in ("coordinates", "axis")]
        if not function or (function[0].tag == "function" and not len(function[0])):
            raise ValueError(f"joint {joint.get('name')!r}: {axis.get('name')} has no function.")
        function = function[0]
        f, slope = _function(function[0] if function.tag == "function" else function, joint.get("name"))
        out.append(_Axis((axis.get("name") or "").startswith("rotation"),
                         _vec(axis, "axis", where=f"joint {joint.get('name')!r} {axis.get('name')}"),
                         coords[0] if coords else None, f, slope))
    return out


def _offset_frames(joint) -> dict[str, tuple[str, np.ndarray]]:
    """The joint's PhysicalOffsetFrames: name ↦ (body, transform in that body); orientation is a body-fixed
    x-y-z rotation sequence."""
    out = {}
    for frame in joint.iter("PhysicalOffsetFrame"):
        where = f"joint {joint.get('name')!r}: frame {frame.get('name')!r}"
        a, b, c = _vec(frame, "orientation", where=where)
        rotation = _rotation((1, 0, 0), a) @ _rotation((0, 1, 0), b) @ _rotation((0, 0, 1), c)
        out[frame.get("name")] = (_body_name(frame.findtext("socket_parent") or ""),
                                  _transform(rotation, _vec(frame, "translation", where=where)))
    return out


def _body_name(path: str) -> str:
    return path.strip().rstrip("/").split("/")[-1]


def _socket(joint, which: str, frames) -> tuple[str, np.ndarray]:
    name = (joint.findtext(f"socket_{which}_frame") or "").strip()
    if not name:
        raise ValueError(f"joint {joint.get('name')!r} has no <socket_{which}_frame>.")
    return frames[name] if name in frames else (_body_name(name), np.eye(4))


class _Joint(NamedTuple):
    name: str
    parent: str
    child: str
    parent_frame: np.ndarray  # F in the parent body
    child_frame: np.ndarray  # M in the child body
    axes: list[_Axis]
    held: dict  # locked coordinates: name ↦ default value


def _locked(coordinate) -> bool:
    """Whether OpenSim holds `coordinate` at its ``<default_value>``: its ``<locked>`` read as OpenSim reads a
    boolean (``true`` or ``false`` in any case, ``1`` or ``0``; absent: free). A ``locked`` attribute, which
    OpenSim ignores (the coordinate stays free there), is refused rather than guessed at."""
    where = f"coordinate {coordinate.get('name')!r}"
    if coordinate.get("locked") is not None:
        raise ValueError(f"{where} has the attribute locked={coordinate.get('locked')!r}, which OpenSim does not "
                         "read (the coordinate would be free): to hold it at its <default_value>, write "
                         "<locked>true</locked> inside the <Coordinate>; to keep it free, remove the attribute.")
    text = coordinate.findtext("locked")
    word = (text or "").strip().lower()
    if word in ("true", "1"):
        return True
    if word in ("", "false", "0"):
        return False
    raise ValueError(f"{where} <locked> must be true or false, got {text!r}.")


def _joints(model, known) -> list[_Joint]:
    objects = model.find("JointSet/objects")
    if objects is None:
        raise ValueError("the model has no <JointSet><objects>.")
    out = []
    for joint in objects:
        frames = _offset_frames(joint)
        (parent, pf), (child, cf) = _socket(joint, "parent", frames), _socket(joint, "child", frames)
        for end, body in (("parent", parent), ("child", child)):
            if body not in known:
                raise ValueError(f"joint {joint.get('name')!r}: its {end} frame is on {body!r}, which is not a body "
                                 f"of the model (nor the ground).")
        held = {c.get("name"): scalar(c.findtext("default_value"), f"coordinate {c.get('name')!r} <default_value>",
                                      default=0.0)
                for c in joint.iter("Coordinate") if _locked(c)}
        out.append(_Joint(joint.get("name"), parent, child, pf, cf, _axes(joint), held))
    return out


def _motion(joint: _Joint, base: bool, moving_centres: Mapping[str, float]):
    """The joint at its reference (every coordinate 0; a locked one at its default value): ``X_FM``, its hinge
    ``(coordinate, axis in F)`` or ``None``, and its slides ``[(coordinate, axis in F)]`` (allowed on the base
    joint only, the one that attaches the model to the ground)."""
    rotation, hinge, translation, slides = np.eye(3), None, np.zeros(3), []
    for ax in joint.axes:
        at = joint.held.get(ax.coordinate, 0.0)
        held = ax.coordinate is None or ax.coordinate in joint.held
        if ax.rotation and not held:
            if hinge is not None or ax.slope not in (1.0, -1.0):
                raise ValueError(f"joint {joint.name!r}: its rotation is not one pin angle ±{ax.coordinate!r} "
                                 "(two rotations, or a nonlinear or scaled one): not planar.")
            hinge = (ax.coordinate, rotation @ (ax.slope * unit(ax.axis, "axis")))
        if ax.rotation:
            rotation = rotation @ _rotation(ax.axis, ax.value(at))
        elif held:
            translation = translation + ax.value(at) * ax.axis
        elif base and ax.slope == 1.0 and (hinge is None or ax.coordinate != hinge[0]):
            slides.append((ax.coordinate, unit(ax.axis, "axis")))
        elif ax.coordinate in moving_centres:
            translation = translation + ax.value(float(moving_centres[ax.coordinate])) * ax.axis
        else:
            raise ValueError(f"joint {joint.name!r}: its centre moves with {ax.coordinate!r} (a coupled "
                             "translation, not a pin joint); pass moving_centres={"
                             f"{ax.coordinate!r}: value}} to hold it where the coordinate has that value.")
    return _transform(rotation, translation), hinge, slides


def _document(source):
    """The ``<Model>`` element, its format checked."""
    document, label, _ = parse(source, "OpenSim .osim", "OpenSimDocument", scoped_tags=True)
    version = document.get("Version", "0")
    try:
        version = int(version)
    except ValueError:
        raise ValueError(f"`source`: {label} has Version={version!r}, not a number such as 40000.") from None
    if version < 40000:
        raise ValueError(f"`source`: .osim format {version} is older than 4.0 (40000); open and save it with "
                         "OpenSim 4 first.")
    model = document.find("Model")
    if model is None:
        raise ValueError(f"`source`: {label} has no <Model>.")
    constraints = model.find("ConstraintSet/objects")
    if constraints is not None and len(constraints):
        found = [f"{c.get('name')} ({c.tag})" for c in constraints]
        raise ValueError(f"the model has constraints {found}: a planar tree has no coupled coordinates or closed "
                         "loops.")
    return model


def _bodies(model) -> dict:
    """``{name: (mass, centre of mass, inertia tensor)}`` in each body's frame."""
    objects = model.find("BodySet/objects")
    if objects is None:
        raise ValueError("the model has no <BodySet><objects>.")
    out = {}
    for body in objects:
        where = f"body {body.get('name')!r}"
        xx, yy, zz, xy, xz, yz = _vec(body, "inertia", (0.0,) * 6, where)
        out[body.get("name")] = (scalar(body.findtext("mass"), f"{where} <mass>", nonneg=True),
                                 _vec(body, "mass_center", where=where),
                                 np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]))
    return out


def _attach(joints, ground) -> tuple[dict, list[_Joint]]:
    """The ground's world frames (the ground and the bodies welded to it: a WeldJoint or every coordinate locked)
    and the tree's joints in order, parents first; raises for a closed loop or a body attached twice."""
    world, parent_of = {ground: np.eye(4)}, {}
    for joint in joints:
        if joint.child in parent_of or joint.child == ground:
            raise ValueError(f"joints {parent_of.get(joint.child, 'the ground')!r} and {joint.name!r} both attach "
                             f"{joint.child!r}: a closed loop, which a planar tree cannot have.")
        parent_of[joint.child] = joint.name
    order, pending = [], [j for j in joints if j.parent == ground]
    while pending:
        joint = pending.pop(0)
        fixed = all(ax.coordinate is None or ax.coordinate in joint.held for ax in joint.axes)
        if fixed and joint.parent in world:  # part of the ground
            world[joint.child] = world[joint.parent] @ joint.parent_frame @ _motion(joint, False, {})[0] @ \
                np.linalg.inv(joint.child_frame)
        else:
            order.append(joint)
        pending = [j for j in joints if j.parent == joint.child] + pending
    attached = set(world) | {j.child for j in order}
    loose = [j.name for j in joints if j.child not in attached]
    if loose:
        raise ValueError(f"joints {loose} do not connect to the ground: their bodies form a cycle.")
    return world, order


def from_osim(source, *, points=None, moving_centres: Mapping[str, float] | None = None) -> TreeModel:
    """Import a planar OpenSim model (``.osim``, format 4.x) as a :class:`~difimpact.TreeModel`.

    Read with the standard library's XML parser at the reference configuration (every coordinate 0; a locked
    coordinate at its ``default_value``, as OpenSim holds it). Bodies welded to the ground (a WeldJoint, or a
    joint whose coordinates are all locked, such as a platform) are part of the ground. The translations of the
    joint that attaches the model to them (e.g. ``pelvis_tx``, ``pelvis_ty``; a missing one is added as ``"x"``
    or ``"y"``) are the floating base, and its axes fix the plane (forward, up): gravity at an angle to them is
    a ground slope. Every other coordinate is a pin angle about the common axis normal to the plane (the
    ground's ``z`` in OpenSim's models), in a PinJoint, a PlanarJoint or a CustomJoint whose rotation is
    ``±q``. Up is against the model's gravity. Coordinates keep the file's names and values (``q[i]`` in
    radians and metres, OpenSim's sign), e.g. ``gait10dof18musc`` gives ``(pelvis_tx, pelvis_ty, pelvis_tilt,
    hip_flexion_r, …)``. OpenSim 4's nested tag names (``<HuntCrossleyForce::ContactParameters>``) are read.

    **Arguments:**

    - `source`: path to the ``.osim`` file, or its XML text.
    - `points`: named contact points, ``{name: marker name}`` or ``{name: (body name, (x, y, z) in that body's
      frame)}``; by default every marker on a moving body.
    - `moving_centres`: ``{coordinate: value}`` holding a joint centre that moves with a coordinate (a knee
      whose translation is a spline of the knee angle) where the coordinate has that value; by default such a
      joint raises.

    **Returns:** a :class:`~difimpact.TreeModel`.

    A locked coordinate (``<locked>true</locked>``, read as OpenSim reads it: ``true`` or ``1`` in any case) is
    not a coordinate of the model: its joint is welded at the coordinate's ``default_value``.

    Raises ``ValueError`` naming what is not planar: a ball, gimbal, universal or free joint, a rotation about
    another axis, a coupled translation (unless held), any constraint (a coordinate coupler such as a patella, a
    closed loop); and naming the element of a malformed file (a ``<locked>`` that is not a boolean, or a
    ``locked="true"`` attribute, which OpenSim ignores).

    **Example:**

    ```python
    import importlib.resources
    import difimpact as di

    osim = importlib.resources.files("difimpact") / "data" / "gait" / "gait10dof18musc_subject01.osim"
    subject = di.from_osim(str(osim), points={"heel": "R.Heel", "toe": "R.Toe.Tip"},
                           moving_centres={"knee_angle_r": 0.0, "knee_angle_l": 0.0})   # knee centres held
    print(subject.n, subject.coordinate_names[:4])  # 10 ('pelvis_tx', 'pelvis_ty', 'pelvis_tilt', 'hip_flexion_r')
    ```
    """
    model = _document(source)
    gravity = _vec(model, "gravity", (0.0, -9.80665, 0.0))
    up = -gravity if np.any(gravity) else np.array([0.0, 1.0, 0.0])
    bodies = _bodies(model)
    ground = (model.find("Ground").get("name") if model.find("Ground") is not None else None) or "ground"
    world, order = _attach(_joints(model, set(bodies) | {ground}), ground)
    roots = [j for j in order if j.parent in world]
    if len(roots) != 1:
        raise ValueError(f"expected one joint attaching the model to the ground, found {[j.name for j in roots]}.")
    links, index, base, ground_bodies = [], {}, None, set(world)
    for joint in order:
        is_base = joint.parent in ground_bodies
        motion, hinge, slides = _motion(joint, is_base, moving_centres or {})
        outer = world[joint.parent] @ joint.parent_frame
        if is_base:
            base = base_from_slides([(c, outer[:3, :3] @ a, 0.0) for c, a in slides], unit(up, "up"),
                                    f"joint {joint.name!r}")
        world[joint.child] = outer @ motion @ np.linalg.inv(joint.child_frame)
        frame = world[joint.child]
        mass, com, inertia = bodies[joint.child]
        rot = frame[:3, :3]
        index[joint.child] = len(links)
        links.append(Link(joint.child, index.get(joint.parent, -1), hinge and hinge[0],
                          None if hinge is None else outer[:3, :3] @ hinge[1], (outer @ motion)[:3, 3].copy(), 0.0,
                          mass, (frame @ np.append(com, 1.0))[:3], rot @ inertia @ rot.T, frame))
    return planar_model(links, select_sites(_markers(model, world, index), links, points), up=up,
                        g=float(np.linalg.norm(gravity)), base=base)


def _markers(model, world, index) -> list[Site]:
    """The markers on moving bodies (those on the ground do not move with the model)."""
    out = []
    for marker in model.iterfind("MarkerSet/objects/Marker"):
        where = f"marker {marker.get('name')!r}"
        body = _body_name(marker.findtext("socket_parent_frame") or "")
        if body not in world:
            raise ValueError(f"{where} is on {body!r}, which is not a body of the model.")
        if body in index:
            position = world[body] @ np.append(_vec(marker, "location", where=where), 1.0)
            out.append(Site(marker.get("name"), index[body], position[:3]))
    return out
