"""URDF models in: :func:`from_urdf` reads a file with the standard library's XML parser (the URDF elements a
planar tree needs: links' ``<inertial>``, joints, ``<transmission>`` motor inertia, Drake's ``<frame>``)."""

from typing import NamedTuple

import numpy as np

from .._models.tree_model import TreeModel
from .planar import Link, Site, base_from_slides, planar_model, select_sites, unit
from .source import floats, parse, scalar

WORLD = "world"  # the link a URDF's root joint may name as its parent without declaring it (ROS, Drake)
_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")


def _rpy(rpy) -> np.ndarray:
    """URDF's fixed-axis roll, pitch, yaw: ``R = R_z(y) R_y(p) R_x(r)``."""
    (cr, cp, cy), (sr, sp, sy) = np.cos(rpy), np.sin(rpy)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _origin(element, where: str) -> np.ndarray:
    out = np.eye(4)
    origin = None if element is None else element.find("origin")
    if origin is not None:
        out[:3, :3] = _rpy(floats(origin.get("rpy"), 3, f"{where} <origin rpy>", default=(0.0, 0.0, 0.0)))
        out[:3, 3] = floats(origin.get("xyz"), 3, f"{where} <origin xyz>", default=(0.0, 0.0, 0.0))
    return out


class _ULink(NamedTuple):
    name: str
    mass: float
    inertial: np.ndarray  # the inertial frame in the link's frame
    inertia: np.ndarray  # about the centre of mass, in the inertial frame


class _UJoint(NamedTuple):
    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    mimic: str | None


def _link(element, label) -> _ULink:
    name = element.get("name")
    inertial = element.find("inertial")
    if inertial is None:
        return _ULink(name, 0.0, np.eye(4), np.zeros((3, 3)))
    where = f"{label}: link {name!r}"
    mass = inertial.find("mass")
    if mass is None:
        raise ValueError(f"{where}: <inertial> has no <mass value=...>.")
    tensor = inertial.find("inertia")
    if tensor is None:
        raise ValueError(f"{where}: <inertial> has no <inertia ixx=... iyz=...>.")
    xx, yy, zz, xy, xz, yz = (scalar(tensor.get(k), f"{where} <inertia {k}>")
                              for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz"))
    return _ULink(name, scalar(mass.get("value"), f"{where} <mass value>", nonneg=True), _origin(inertial, where),
                  np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]))


def _joint(element, label) -> _UJoint:
    name = element.get("name")
    where = f"{label}: joint {name!r}"
    kind = element.get("type")
    if kind not in _TYPES:
        raise ValueError(f"{where} has type {kind!r}; URDF's types are {list(_TYPES)}.")
    ends = []
    for end in ("parent", "child"):
        found = element.find(end)
        if found is None or not found.get("link"):
            raise ValueError(f"{where} has no <{end} link=...>.")
        ends.append(found.get("link"))
    axis = element.find("axis")
    axis = floats(None if axis is None else axis.get("xyz"), 3, f"{where} <axis xyz>", default=(1.0, 0.0, 0.0))
    mimic = element.find("mimic")
    return _UJoint(name, kind, *ends, _origin(element, where), axis, None if mimic is None else mimic.get("joint"))


def _armature(root, joints, label) -> dict[str, float]:
    """Each joint's motor inertia × mechanical reduction² from its ``<transmission>``s (FROST's reading: the first
    ``mechanicalReduction`` and ``motorInertia`` anywhere in the transmission, reduction 1 by default)."""
    out = {}
    for element in root.iter("transmission"):
        where = f"{label}: transmission {element.get('name')!r}"
        inertia = element.find(".//motorInertia")
        if inertia is None:
            continue
        joint = element.find("joint")
        if joint is None or joint.get("name") not in joints:
            raise ValueError(f"{where} has motor inertia but names no joint of the file "
                             f"({None if joint is None else joint.get('name')!r}).")
        reduction = element.find(".//mechanicalReduction")
        value = scalar(inertia.text, f"{where} <motorInertia>", nonneg=True) * scalar(
            None if reduction is None else reduction.text, f"{where} <mechanicalReduction>", default=1.0) ** 2
        out[joint.get("name")] = out.get(joint.get("name"), 0.0) + value
    return out


def _tree(root, label) -> tuple[dict, dict, list, str]:
    """Links, joints, the children of each link and the root link, checked to be one tree (a joint's undeclared
    parent ``world`` is the world)."""
    links, joints, children = {}, {}, {}
    for element in root.findall("link"):
        if not element.get("name"):
            raise ValueError(f"{label}: a <link> has no name.")
        if element.get("name") in links:
            raise ValueError(f"{label}: link {element.get('name')!r} is declared twice.")
        links[element.get("name")] = _link(element, label)
    for element in root.findall("joint"):
        joint = _joint(element, label)
        if joint.name in joints:
            raise ValueError(f"{label}: joint {joint.name!r} is declared twice.")
        joints[joint.name] = joint
    if WORLD not in links and any(j.parent == WORLD for j in joints.values()):
        links[WORLD] = _ULink(WORLD, 0.0, np.eye(4), np.zeros((3, 3)))
    parent_joint = {}
    for joint in joints.values():
        for end in ("parent", "child"):
            if getattr(joint, end) not in links:
                raise ValueError(f"{label}: joint {joint.name!r} has {end} link {getattr(joint, end)!r}, which is "
                                 "not declared.")
        if joint.child in parent_joint:
            raise ValueError(f"{label}: link {joint.child!r} is the child of joints {parent_joint[joint.child]!r} and "
                             f"{joint.name!r}: a closed loop, which a planar tree cannot have.")
        parent_joint[joint.child] = joint.name
        children.setdefault(joint.parent, []).append(joint)
    roots = [name for name in links if name not in parent_joint]
    if len(roots) != 1:
        raise ValueError(f"{label}: a URDF tree has one root link, found {roots or 'none (the joints form a cycle)'}.")
    reached, stack = set(), [roots[0]]
    while stack:
        reached.add(stack[-1])
        stack += [j.child for j in children.get(stack.pop(), [])]
    if len(reached) != len(links):
        raise ValueError(f"{label}: links {sorted(set(links) - reached)} are not connected to the root "
                         f"{roots[0]!r}: their joints form a cycle.")
    return links, joints, children, roots[0]


class _Reader:
    """Depth-first walk of a URDF tree at zero joint angles, collecting :class:`Link`s and :class:`Site`s."""

    def __init__(self, links, children, armature, order):
        self.links, self.children, self.armature, self.order = links, children, armature, order
        self.out: list[Link] = []
        self.sites: list[tuple[int, Site]] = []

    def base(self, root: str, up):
        """Follow up to two prismatic joints from ``root`` through massless links: the floating base."""
        frame, slides, name = np.eye(4), [], root
        while (len(slides) < 2 and self.links[name].mass == 0.0 and len(self.children.get(name, [])) == 1
               and self.children[name][0].type == "prismatic"):
            joint = self.children[name][0]
            frame = frame @ joint.origin
            slides.append((joint.name, frame[:3, :3] @ unit(joint.axis, f"the axis of joint {joint.name!r}"), 0.0))
            name = joint.child
        return name, frame, base_from_slides(slides, up, f"the root link {root!r}")

    def walk(self, name: str, frame: np.ndarray, parent: int, joint=None, root_hinge=None) -> None:
        link = self.links[name]
        if joint is not None and joint.mimic is not None:
            raise ValueError(f"joint {joint.name!r} mimics {joint.mimic!r}: coupled joints are not a planar tree.")
        if joint is not None and joint.type not in ("revolute", "continuous", "fixed"):
            raise ValueError(f"joint {joint.name!r} is {joint.type}: a planar tree has revolute joints about one "
                             "axis (and a base of prismatic joints at the root).")
        hinge = joint is not None and joint.type != "fixed"
        kids = self.children.get(name, [])
        if root_hinge is None and not hinge and link.mass == 0.0 and not kids and parent >= 0:
            self.sites.append((self.order[joint.name], Site(name, parent, frame[:3, 3].copy())))
            return
        if root_hinge is None and not hinge and link.mass == 0.0 and parent < 0:
            index = -1  # a massless frame on the base: its children hang from the base
        else:
            inertial = frame @ link.inertial
            rot = inertial[:3, :3]
            coordinate = root_hinge or (joint.name if hinge else None)
            self.out.append(Link(name, parent, coordinate, frame[:3, :3] @ joint.axis if hinge else None,
                                 frame[:3, 3].copy(), 0.0, link.mass, inertial[:3, 3].copy(),
                                 rot @ link.inertia @ rot.T, frame, self.armature.get(coordinate, 0.0)))
            index = len(self.out) - 1
        for child in kids:
            self.walk(child.child, frame @ child.origin, index, child)


def _frames(root, reader: _Reader, label) -> list[Site]:
    """Drake's ``<frame name link xyz rpy>`` elements on the model's bodies, as points."""
    index = {link.name: i for i, link in enumerate(reader.out)}
    out = []
    for element in root.findall("frame"):
        if element.get("link") in index:
            where = f"{label}: frame {element.get('name')!r}"
            xyz = floats(element.get("xyz"), 3, f"{where} xyz", default=(0.0, 0.0, 0.0))
            link = index[element.get("link")]
            out.append(Site(element.get("name"), link, reader.out[link].frame[:3, :3] @ xyz
                            + reader.out[link].frame[:3, 3]))
    return out


def from_urdf(source, *, points=None, up=(0.0, 0.0, 1.0), g: float = 9.81, motor_inertia: bool = True,
              root_hinge: str | None = None) -> TreeModel:
    """Import a planar URDF model as a :class:`~difimpact.TreeModel`.

    The tree is read at zero joint angles. Its joints must be revolute (or continuous) about one common
    horizontal axis, or fixed; prismatic joints from the root through massless links (one or two: horizontal,
    along `up`) are the floating base (their names become ``q[0], q[1]``; a missing one is added as ``"x"`` or
    ``"y"``: the root translates freely either way). A joint's parent ``world`` need not be declared (ROS's and
    Drake's convention). Each revolute joint's coordinate is its URDF angle. A ``<transmission>``'s
    ``motorInertia`` × ``mechanicalReduction²`` is added to ``M``'s diagonal at its joint (the rotor's inertia
    reflected through the gearbox, as FROST's ``RobotLinks`` does for its mass matrix).

    **Arguments:**

    - `source`: a path to a URDF file or the XML text.
    - `points`: named contact points, ``{name: link or frame name}`` or ``{name: (link name, (x, y, z) in that
      link's frame)}``; by default every massless leaf link on a fixed joint (a frame such as ``heel`` or
      ``tip``, in the order of their joints in the file), then Drake's ``<frame>`` elements.
    - `up`: the upward direction in the file (URDF's convention: ``+z``); `g`: gravity [m/s²].
    - `motor_inertia`: ``False`` leaves the transmissions' motor inertia out of ``M``.
    - `root_hinge`: the name of a coordinate that turns the root link about the plane's axis (a planar floating
      base: FROST's ``get_base_dofs('planar')`` is ``BaseX, BaseZ, BaseRotY``); by default the root only
      translates.

    **Returns:** a :class:`~difimpact.TreeModel`.

    Raises ``ValueError`` naming the element: a joint about another axis, a prismatic, planar or floating joint
    below the base, a mimic (coupled) joint, a closed loop, an undeclared link, a malformed number.

    **Example:**

    ```python
    import difimpact as di

    urdf = di.to_urdf(di.CrutchWalker())            # the XML text, or a path to a planar URDF file
    model = di.from_urdf(urdf)                      # massless leaf links on fixed joints become contact points
    print(model.coordinate_names, model.point_names)   # ('q1', …, 'q6') ('P', 'H', 'S', 'E', 'Q')
    ```
    """
    root, label, _ = parse(source, "URDF", "robot")
    links, joints, children, root_link = _tree(root, label)
    armature = _armature(root, joints, label) if motor_inertia else {}
    reader = _Reader(links, children, armature, {name: i for i, name in enumerate(joints)})
    name, frame, base = reader.base(root_link, up)
    if root_hinge is not None and (not isinstance(root_hinge, str) or root_hinge in joints):
        raise ValueError(f"`root_hinge` must be a new coordinate name (a string that no joint has), got "
                         f"{root_hinge!r}.")
    reader.walk(name, frame, -1, root_hinge=root_hinge)
    unused = sorted(set(armature) - {link.coordinate for link in reader.out})
    if unused:
        raise ValueError(f"{label}: joints {unused} have transmissions with motor inertia but are not hinges of the "
                         "tree (a base slide or a fixed joint); pass motor_inertia=False to leave it out.")
    sites = [site for _, site in sorted(reader.sites, key=lambda s: s[0])] + _frames(root, reader, label)
    return planar_model(reader.out, select_sites(sites, reader.out, points), up=up, g=g, base=base)
