"""Models out: :func:`to_mjcf` and :func:`to_urdf` write a planar tree's bodies as nested frames in the world's
x-z plane (forward ``+x``, up ``+z``, hinges about ``±y``)."""

import json
from typing import NamedTuple
from xml.sax.saxutils import escape

import numpy as np

from .._models.base import AbstractPlanarModel
from .._tree import PlanarTree
from .._validation import instance

POINT_ORDER = "difimpact_point_order"  # MJCF <custom><text>: the model's point order, a JSON list of names
MJ_MINVAL = 1e-15  # MuJoCo's mjMINVAL: its compiler wants at least this mass and inertia on a moving body


class Frame(NamedTuple):
    """One body of a tree as a child frame of its parent: ``attach`` (along, across) in the parent's frame
    (zero for a root), turned by ``offset`` about ``+y`` (a positive turn takes ``+z`` toward ``+x``), its hinge
    coordinate ``coord`` (``-1``: welded) with axis ``sign·y`` and the ``armature`` of that coordinate, its
    inertial data in body coordinates, its named points ``(name, (along, across))`` and the indices of its
    children. A rotor (a massless root body that only holds a coordinate's armature) has ``rotor=True`` and is
    written as its coordinate's armature."""

    attach: tuple[float, float]
    offset: float
    coord: int
    sign: float
    mass: float
    inertia: float
    com: tuple[float, float]
    points: list[tuple[str, tuple[float, float]]]
    children: list[int]
    armature: float = 0.0
    rotor: bool = False


def _rotors(tree: PlanarTree) -> dict[int, int]:
    """Rotor bodies ``{body: coordinate}``: massless, on a coordinate that another body also has, with only welded
    ancestors, no children and no points — the armature of a diagonal ``M_kk += J`` (see ``planar.py``)."""
    owners = {}
    for i, k in enumerate(tree.coord):
        owners.setdefault(k, []).append(i)
    out = {}
    for i, k in enumerate(tree.coord):
        ancestors, p = [], tree.parent[i]
        while p >= 0:
            ancestors.append(p)
            p = tree.parent[p]
        if (k >= 0 and len(owners[k]) > 1 and float(tree.mass[i]) == 0.0 and i not in tree.parent
                and i not in tree.point_body and all(tree.coord[a] < 0 for a in ancestors)):
            out[i] = k
    return out


def planar_frames(tree: PlanarTree) -> list[Frame]:
    """Every body of ``tree`` as a :class:`Frame`. Raises ``ValueError`` for what URDF and MJCF cannot hold:
    a coordinate turning two bodies (other than a rotor), a rolling (arc) point."""
    rotors = _rotors(tree)
    owners = [k for i, k in enumerate(tree.coord) if k >= 0 and i not in rotors]
    if len(set(owners)) != len(owners) or any(k not in owners for k in rotors.values()):
        raise ValueError("a coordinate turns more than one body, which URDF and MJCF cannot express.")
    radius = np.asarray(tree.point_radius)
    if np.any(radius > 0):
        arcs = [n for n, r in zip(tree.point_names, radius) if r > 0]
        raise ValueError(f"points {arcs} are arcs (rolling feet), which URDF and MJCF points cannot express.")
    attach, com, local = (np.asarray(x, dtype=float) for x in (tree.attach, tree.com, tree.point_local))
    frames = []
    for i, parent in enumerate(tree.parent):
        armature = sum(float(tree.inertia[r]) for r, k in rotors.items() if k == tree.coord[i] and i not in rotors)
        frames.append(Frame(
            (0.0, 0.0) if parent < 0 else tuple(map(float, attach[i])), float(tree.offset[i]), tree.coord[i],
            float(tree.sign[i]), float(tree.mass[i]), float(tree.inertia[i]), tuple(map(float, com[i])),
            [(n, tuple(map(float, local[k]))) for k, (n, b) in enumerate(zip(tree.point_names, tree.point_body))
             if b == i],
            [c for c, p in enumerate(tree.parent) if p == i and c not in rotors], armature, i in rotors))
    return frames


def _checked(model, what: str):
    instance("model", model, AbstractPlanarModel, "CrutchWalker()")
    tree = model.tree()
    frames = planar_frames(tree)
    roots = [i for i, (p, fr) in enumerate(zip(tree.parent, frames)) if p < 0 and not fr.rotor]
    if len(roots) != 1:
        raise ValueError(f"{what} export needs one root body, the model has {len(roots)}.")
    return tree, frames, roots[0]


def _q(name) -> str:
    """A name as an XML attribute value (``& < > "`` escaped)."""
    return escape(str(name), {'"': "&quot;"})


def _r(v) -> str:
    return repr(float(v))


def to_mjcf(model: AbstractPlanarModel, *, name: str = "difimpact") -> str:
    """The MJCF text of a planar model: the plane is world ``x`` (forward), ``z`` (up), hinges about ``+y`` (a
    positive turn takes ``+z`` toward ``+x``, the model's angle convention), the base two slides on the root
    body, joints named after the coordinates (with their armature), bodies after the bodies and one site per
    named point (MuJoCo numbers sites depth-first; when the model's point order differs, a ``<custom><text
    name="difimpact_point_order">`` records it for :func:`from_mjcf`). A mass or an inertia below MuJoCo's minimum
    (``mjMINVAL`` = 1e-15, which its compiler requires of a moving body: a massless leg, a point mass) is written as
    that minimum, which :func:`from_mjcf` reads as zero. :func:`from_mjcf` reads the text back to the same model."""
    tree, frames, root = _checked(model, "MJCF")
    names = model.coordinate_names
    if "world" in tree.body_names:
        raise ValueError("a body is named 'world', MuJoCo's name for its world body: rename it for MJCF.")
    r = _r

    def body(i, indent):
        fr = frames[i]
        pad = "  " * indent
        out = [f'{pad}<body name="{_q(tree.body_names[i])}" pos="{r(fr.attach[1])} 0 {r(fr.attach[0])}" '
               f'euler="0 {r(fr.offset)} 0">']
        if i == root:  # slides along world x and z, written in the body's turned frame
            c, s = np.cos(fr.offset), np.sin(fr.offset)
            out += [f'{pad}  <joint name="{_q(names[0])}" type="slide" axis="{r(c)} 0 {r(s)}"/>',
                    f'{pad}  <joint name="{_q(names[1])}" type="slide" axis="{r(-s)} 0 {r(c)}"/>']
        if fr.coord >= 0:
            armature = f' armature="{r(fr.armature)}"' if fr.armature else ""
            out.append(f'{pad}  <joint name="{_q(names[fr.coord])}" type="hinge" axis="0 {r(fr.sign)} 0"'
                       f'{armature}/>')
        inertia = r(max(fr.inertia, MJ_MINVAL))
        out.append(f'{pad}  <inertial pos="{r(fr.com[1])} 0 {r(fr.com[0])}" mass="{r(max(fr.mass, MJ_MINVAL))}" '
                   f'diaginertia="{inertia} {inertia} {inertia}"/>')
        out += [f'{pad}  <site name="{_q(p)}" pos="{r(loc[1])} 0 {r(loc[0])}"/>' for p, loc in fr.points]
        for c in fr.children:
            out += body(c, indent + 1)
        return out + [f"{pad}</body>"]

    lines = [f'<mujoco model="{_q(name)}">', '  <compiler angle="radian"/>',
             f'  <option gravity="{r(tree.g * np.sin(tree.slope))} 0 {r(-tree.g * np.cos(tree.slope))}"/>',
             "  <worldbody>"]
    lines += body(root, 2) + ["  </worldbody>"]
    written = [p for i in _depth_first(frames, root) for p, _ in frames[i].points]
    if written != list(tree.point_names):  # MuJoCo numbers sites depth-first: record the model's order
        order = _q(json.dumps(list(tree.point_names)))
        lines += ["  <custom>", f'    <text name="{POINT_ORDER}" data="{order}"/>', "  </custom>"]
    lines.append("</mujoco>")
    return "\n".join(lines) + "\n"


def _depth_first(frames, i) -> list[int]:
    return [i] + [j for c in frames[i].children for j in _depth_first(frames, c)]


def _fresh(base: str, taken: set) -> str:
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


def to_urdf(model: AbstractPlanarModel, *, name: str = "difimpact") -> str:
    """The URDF text of a planar model: the plane is ``x`` (forward), ``z`` (up), the base two prismatic joints
    named after ``q[0], q[1]`` through massless links, then one link per body on a revolute joint about
    ``±y`` named after its coordinate (a positive turn takes ``+z`` toward ``+x``, the model's angle convention;
    a welded body on a fixed joint), a coordinate's armature as a ``<transmission>`` with that motor inertia
    and reduction 1, and one massless link per named point on a fixed joint, in the model's point order.
    Pinocchio's ``buildModelFromXML`` and :func:`from_urdf` read it with the model's coordinates and points in
    the same order. Gravity along a slope is not written (URDF has none): pass ``g`` to :func:`from_urdf`."""
    tree, frames, _ = _checked(model, "URDF")
    names = model.coordinate_names
    clash = sorted(set(tree.point_names) & set(tree.body_names))
    if clash:
        raise ValueError(f"points {clash} have the names of bodies; URDF writes both as links, which need distinct "
                         "names.")
    taken = set(tree.body_names) | set(tree.point_names)
    world, base_x, base_y = (_fresh(n, taken) for n in ("world", "base_x", "base_y"))
    r = _r
    limit = '<limit lower="-1e3" upper="1e3" effort="0" velocity="0"/>'

    def joint(jname, kind, parent, child, xyz=(0.0, 0.0), pitch=0.0, axis=None):
        tag = f'<axis xyz="{axis}"/>{limit}' if axis else ""
        return (f'<joint name="{_q(jname)}" type="{kind}"><parent link="{_q(parent)}"/><child link="{_q(child)}"/>'
                f'<origin xyz="{r(xyz[1])} 0 {r(xyz[0])}" rpy="0 {r(pitch)} 0"/>{tag}</joint>')

    def link(i):
        fr = frames[i]
        if fr.mass == 0.0 and fr.inertia == 0.0:
            return f'<link name="{_q(tree.body_names[i])}"/>'
        return (f'<link name="{_q(tree.body_names[i])}"><inertial><origin xyz="{r(fr.com[1])} 0 {r(fr.com[0])}"/>'
                f'<mass value="{r(fr.mass)}"/><inertia ixx="{r(fr.inertia)}" iyy="{r(fr.inertia)}" '
                f'izz="{r(fr.inertia)}" ixy="0" ixz="0" iyz="0"/></inertial></link>')

    parts = [f'<robot name="{_q(name)}">', (f'<link name="{_q(world)}"/><link name="{_q(base_x)}"/>'
                                            f'<link name="{_q(base_y)}"/>'),
             joint(names[0], "prismatic", world, base_x, axis="1 0 0"),
             joint(names[1], "prismatic", base_x, base_y, axis="0 0 1")]
    joint_names = set(names)
    for i, (fr, parent) in enumerate(zip(frames, tree.parent)):
        if fr.rotor:
            continue
        parent_link = base_y if parent < 0 else tree.body_names[parent]
        parts.append(link(i))
        if fr.coord >= 0:
            parts.append(joint(names[fr.coord], "revolute", parent_link, tree.body_names[i], fr.attach, fr.offset,
                               f"0 {r(fr.sign)} 0"))
        else:
            parts.append(joint(_fresh(f"{tree.body_names[i]}_weld", joint_names), "fixed", parent_link,
                               tree.body_names[i], fr.attach, fr.offset))
        if fr.armature:
            parts.append(f'<transmission name="{_q(names[fr.coord])}_transmission">'
                         f'<joint name="{_q(names[fr.coord])}"/>'
                         f'<mechanicalReduction>1</mechanicalReduction><motorInertia>{r(fr.armature)}</motorInertia>'
                         '</transmission>')
    local = np.asarray(tree.point_local, dtype=float)
    for k, (point, body) in enumerate(zip(tree.point_names, tree.point_body)):
        weld = joint(_fresh(f"{point}_point", joint_names), "fixed", tree.body_names[body], point, local[k])
        parts += [f'<link name="{_q(point)}"/>', weld]
    return "".join(parts) + "</robot>"
