"""URDF models in and out: :func:`from_urdf` reads a file with ``yourdfpy``, :func:`to_urdf` writes any planar
model."""

import io
import os

import numpy as np

from .._models.base import AbstractPlanarModel
from .._models.tree_model import TreeModel
from .planar import Base, Link, Site, planar_model, select_sites, unit
from .writer import planar_frames


def _robot(source):
    try:
        import yourdfpy
    except ImportError:
        raise ImportError("reading URDF needs the `yourdfpy` package: pip install 'difimpact[urdf]'.") from None
    text = str(source)
    if text.lstrip().startswith("<"):
        handle = io.StringIO(text)
    elif os.path.exists(text):
        handle = text
    else:
        raise ValueError(f"`source`: no URDF file {text!r} (pass a path or the XML text).")
    return yourdfpy.URDF.load(handle, build_scene_graph=False, load_meshes=False,
                              load_collision_meshes=False).robot


def _origin(element) -> np.ndarray:
    return np.eye(4) if element is None or element.origin is None else np.asarray(element.origin, dtype=float)


def _mass(link) -> float:
    return 0.0 if link.inertial is None else float(link.inertial.mass)


class _Reader:
    """Depth-first walk of a URDF tree at zero joint angles, collecting :class:`Link`s and :class:`Site`s."""

    def __init__(self, robot, up):
        self.links = {link.name: link for link in robot.links}
        self.children = {name: [] for name in self.links}
        for joint in robot.joints:
            self.children[joint.parent].append(joint)
        self.up = unit(up, "`up`")
        self.out: list[Link] = []
        self.sites: list[Site] = []

    def base(self, root: str) -> tuple[str, np.ndarray, Base, np.ndarray | None]:
        """Follow up to two prismatic joints from ``root`` through massless links: the floating base."""
        frame, slides, name = np.eye(4), [], root
        while (len(slides) < 2 and _mass(self.links[name]) == 0.0 and len(self.children[name]) == 1
               and self.children[name][0].type == "prismatic"):
            joint = self.children[name][0]
            frame = frame @ _origin(joint)
            slides.append((joint.name, frame[:3, :3] @ joint.axis))
            name = joint.child
        if not slides:
            return name, frame, Base(), None
        vertical = [abs(unit(axis, f"the axis of {n!r}") @ self.up) > 1 - 1e-9 for n, axis in slides]
        if len(slides) != 2 or sum(vertical) != 1:
            raise ValueError(f"prismatic joints {[n for n, _ in slides]} at the root: a planar floating base has "
                             "two, one horizontal and one vertical (up).")
        (nx, ax), (ny, ay) = slides if vertical[1] else slides[::-1]
        if ay @ self.up < 0:
            raise ValueError(f"prismatic joint {ny!r} points down; the base's vertical slide must point up.")
        return name, frame, Base((nx, ny)), ax

    def walk(self, name: str, frame: np.ndarray, parent: int, joint=None) -> None:
        link = self.links[name]
        if joint is not None and joint.mimic is not None:
            raise ValueError(f"joint {joint.name!r} mimics {joint.mimic.joint!r}: coupled joints are not a planar "
                             "tree.")
        if joint is not None and joint.type not in ("revolute", "continuous", "fixed"):
            raise ValueError(f"joint {joint.name!r} is {joint.type}: a planar tree has revolute joints about one "
                             "axis (and a base of two prismatic joints at the root).")
        hinge = joint is not None and joint.type != "fixed"
        if not hinge and _mass(link) == 0.0 and not self.children[name]:
            if parent >= 0:
                self.sites.append(Site(name, parent, frame[:3, 3].copy()))
            return
        if not hinge and _mass(link) == 0.0 and parent < 0:
            index = -1  # a massless frame on the base: its children hang from the base
        else:
            inertial = link.inertial
            origin = _origin(inertial)
            rot = frame[:3, :3] @ origin[:3, :3]
            inertia = np.zeros((3, 3)) if inertial is None else rot @ np.asarray(inertial.inertia) @ rot.T
            self.out.append(Link(
                name, parent, joint.name if hinge else None, frame[:3, :3] @ joint.axis if hinge else None,
                frame[:3, 3].copy(), 0.0, _mass(link), (frame @ origin)[:3, 3].copy(), inertia, frame))
            index = len(self.out) - 1
        for child in self.children[name]:
            self.walk(child.child, frame @ _origin(child), index, child)


def from_urdf(source, *, points=None, up=(0.0, 0.0, 1.0), g: float = 9.81) -> TreeModel:
    """Import a planar URDF model as a :class:`~difimpact.TreeModel`, parsed by ``yourdfpy``.

    The tree is read at zero joint angles. Its joints must be revolute (or continuous) about one common
    horizontal axis, or fixed; two prismatic joints from the root through massless links, one horizontal and
    one along `up`, are the floating base (their names become ``q[0], q[1]``); without them the root link is
    fixed to the base point ``(0, 0)``. Each revolute joint's coordinate is its URDF angle.

    **Arguments:**

    - `source`: a path to a URDF file or the XML text.
    - `points`: named contact points, ``{name: link name}`` or ``{name: (link name, (x, y, z) in that link's
      frame)}``; by default every massless leaf link on a fixed joint (a frame such as ``heel`` or ``tip``).
    - `up`: the upward direction in the file (URDF's convention: ``+z``); `g`: gravity [m/s²].

    **Returns:** a :class:`~difimpact.TreeModel`.

    Raises ``ValueError`` naming what is not planar: a joint about another axis, a prismatic, planar or floating
    joint below the base, a mimic (coupled) joint.
    """
    robot = _robot(source)
    reader = _Reader(robot, up)
    roots = [name for name in reader.links if all(j.child != name for j in robot.joints)]
    if len(roots) != 1:
        raise ValueError(f"a URDF tree has one root link, found {roots}.")
    name, frame, base, forward = reader.base(roots[0])
    reader.walk(name, frame, -1)
    return planar_model(reader.out, select_sites(reader.sites, reader.out, points), up=up, g=g, base=base,
                        forward=forward)


def to_urdf(model: AbstractPlanarModel, *, name: str = "difimpact") -> str:
    """The URDF text of a planar model: the plane is ``x`` (forward), ``z`` (up), the base two prismatic joints
    named after ``q[0], q[1]`` through massless links, then one link per body on a revolute joint about
    ``±y`` named after its coordinate (a positive turn takes ``+z`` toward ``+x``, the model's angle convention;
    a welded body on a fixed joint), and one massless link per named point on a fixed joint. Pinocchio's
    ``buildModelFromXML`` and :func:`from_urdf` read it with the model's coordinates in the same order."""
    tree = model.tree()
    names = model.coordinate_names
    frames = planar_frames(tree)
    r = lambda v: repr(float(v))  # noqa: E731
    limit = '<limit lower="-1e3" upper="1e3" effort="0" velocity="0"/>'

    def joint(jname, kind, parent, child, xyz=(0.0, 0.0), pitch=0.0, axis=None):
        tag = f'<axis xyz="{axis}"/>{limit}' if axis else ""
        return (f'<joint name="{jname}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
                f'<origin xyz="{r(xyz[1])} 0 {r(xyz[0])}" rpy="0 {r(pitch)} 0"/>{tag}</joint>')

    def link(i):
        fr = frames[i]
        if fr.mass == 0.0:
            return f'<link name="{tree.body_names[i]}"/>'
        return (f'<link name="{tree.body_names[i]}"><inertial><origin xyz="{r(fr.com[1])} 0 {r(fr.com[0])}"/>'
                f'<mass value="{r(fr.mass)}"/><inertia ixx="{r(fr.inertia)}" iyy="{r(fr.inertia)}" '
                f'izz="{r(fr.inertia)}" ixy="0" ixz="0" iyz="0"/></inertial></link>')

    parts = [f'<robot name="{name}">', '<link name="world"/><link name="base_x"/><link name="base_y"/>',
             joint(names[0], "prismatic", "world", "base_x", axis="1 0 0"),
             joint(names[1], "prismatic", "base_x", "base_y", axis="0 0 1")]
    for i, (fr, parent) in enumerate(zip(frames, tree.parent)):
        parent_link = "base_y" if parent < 0 else tree.body_names[parent]
        parts.append(link(i))
        if fr.coord >= 0:
            parts.append(joint(names[fr.coord], "revolute", parent_link, tree.body_names[i], fr.attach, fr.offset,
                               f"0 {r(fr.sign)} 0"))
        else:
            parts.append(joint(f"{tree.body_names[i]}_weld", "fixed", parent_link, tree.body_names[i], fr.attach,
                               fr.offset))
        for point, loc in fr.points:
            parts += [f'<link name="{point}"/>', joint(f"{point}_point", "fixed", tree.body_names[i], point, loc)]
    return "".join(parts) + "</robot>"
