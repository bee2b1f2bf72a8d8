"""MuJoCo MJCF models in and out: :func:`from_mjcf` reads the compiled model of the ``mujoco`` package,
:func:`to_mjcf` writes any planar model."""

import os

import numpy as np

from .._models.base import AbstractPlanarModel
from .._models.tree_model import TreeModel
from .planar import Base, Link, Site, planar_model, select_sites
from .writer import planar_frames



def _mujoco():
    try:
        import mujoco
    except ImportError:
        raise ImportError("reading MJCF needs the `mujoco` package: pip install 'difimpact[mjcf]'.") from None
    return mujoco


_BODY, _JOINT, _SITE, _EQUALITY, _HINGE, _SLIDE = 1, 3, 6, 17, 3, 2  # mjtObj and mjtJoint values


def _compile(source):
    mujoco = _mujoco()
    text = str(source)
    if text.lstrip().startswith("<"):
        return mujoco.MjModel.from_xml_string(text)
    if not os.path.exists(text):
        raise ValueError(f"`source`: no MJCF file {text!r} (pass a path or the XML text).")
    return mujoco.MjModel.from_xml_path(text)


def _check_planar_features(m, name) -> None:
    """Raise for what a planar tree cannot hold: equality constraints (closed loops, couplings) and armature."""
    if m.neq:
        kinds = {0: "connect: a closed loop", 1: "weld", 2: "joint coupling", 3: "tendon coupling"}
        found = [f"{name(_EQUALITY, i) or i} ({kinds.get(int(m.eq_type[i]), 'constraint')})" for i in range(m.neq)]
        raise ValueError(f"the model has equality constraints {found}: a planar tree has no closed loops or "
                         "coupled joints.")
    for j in range(m.njnt):
        if m.dof_armature[m.jnt_dofadr[j]] != 0.0:
            raise ValueError(f"joint {name(_JOINT, j)!r} has armature {m.dof_armature[m.jnt_dofadr[j]]} (rotor inertia "
                             "added to M), which a planar tree does not have: set it to 0.")


def _base(m, d, name, root) -> tuple[Base, np.ndarray | None]:
    """Slides of the root body along world x and z (the floating base), and the forward direction."""
    slides = [j for j in range(m.body_jntadr[root], m.body_jntadr[root] + m.body_jntnum[root])
              if m.jnt_type[j] == _SLIDE]
    if not slides:
        return Base(), None
    if len(slides) != 2:
        raise ValueError(f"body {name(_BODY, root)!r} has {len(slides)} slide joints; a planar floating base has two "
                         "(horizontal and vertical).")
    up = -m.opt.gravity / np.linalg.norm(m.opt.gravity) if np.any(m.opt.gravity) else np.array([0.0, 0.0, 1.0])
    vertical = [abs(d.xaxis[j] @ up) > 1 - 1e-9 for j in slides]
    if sum(vertical) != 1:
        raise ValueError(f"slides {[name(_JOINT, j) for j in slides]} of body {name(_BODY, root)!r}: one must be "
                         "vertical and one horizontal.")
    jy, jx = (slides[0], slides[1]) if vertical[0] else (slides[1], slides[0])
    if d.xaxis[jy] @ up < 0:
        raise ValueError(f"slide {name(_JOINT, jy)!r} points down; the base's vertical slide must point up.")
    ref = (float(m.qpos0[m.jnt_qposadr[jx]]), float(m.qpos0[m.jnt_qposadr[jy]]))
    return Base((name(_JOINT, jx), name(_JOINT, jy)), ref), d.xaxis[jx].copy()


def from_mjcf(source, *, points=None) -> TreeModel:
    """Import a planar MuJoCo model (MJCF) as a :class:`~difimpact.TreeModel`.

    The ``mujoco`` package compiles the file (defaults, ``inertiafromgeom``, units applied) and its kinematics at
    ``qpos0`` give every body's mass, centre of mass, inertia and hinge in world coordinates. The model must be a
    planar tree: one moving body attached to the world, optionally with two slide joints (horizontal and
    vertical, the floating base) and a hinge, and hinges about one common horizontal axis below it. The plane's
    up direction is against ``opt.gravity``. Coordinates keep the file's joint names and values
    (``q[i]`` is the joint's ``qpos``); without slides the base coordinates are ``"x", "y"`` and the file's
    position is ``(0, 0)``.

    **Arguments:**

    - `source`: a path to an MJCF file or the XML text.
    - `points`: named contact points, ``{name: site name}`` or ``{name: (body name, (x, y, z) in that body's
      frame)}``; by default every site of the moving bodies.

    **Returns:** a :class:`~difimpact.TreeModel`.

    Raises ``ValueError`` naming what is not planar: a ball or free joint, a slide below the root, a hinge about
    another axis, an equality constraint (closed loop or coupling), armature.
    """
    mujoco = _mujoco()
    m = _compile(source)
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    name = lambda kind, i: mujoco.mj_id2name(m, kind, i)  # noqa: E731
    _check_planar_features(m, name)
    moving = [b for b in range(1, m.nbody) if m.body_weldid[b] != 0]
    roots = [b for b in moving if m.body_parentid[b] == 0 or m.body_weldid[m.body_parentid[b]] == 0]
    if len(roots) != 1:
        raise ValueError(f"expected one moving body attached to the world, found {[name(_BODY, b) for b in roots]}.")
    base, forward = _base(m, d, name, roots[0])
    links, index = [], {}
    for b in moving:
        joints = [j for j in range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b])
                  if m.jnt_type[j] != _SLIDE or b != roots[0]]
        for j in joints:
            if m.jnt_type[j] != _HINGE:
                kind = {0: "free", 1: "ball", 2: "slide"}[int(m.jnt_type[j])]
                raise ValueError(f"joint {name(_JOINT, j)!r} of body {name(_BODY, b)!r} is a {kind} joint: the model "
                                 "is not a planar tree of hinges.")
        if len(joints) > 1:
            raise ValueError(f"body {name(_BODY, b)!r} has {len(joints)} hinges; a planar tree has one per body.")
        j = joints[0] if joints else None
        frame = np.eye(4)
        frame[:3, :3], frame[:3, 3] = d.xmat[b].reshape(3, 3), d.xpos[b]
        rot = d.ximat[b].reshape(3, 3)
        index[b] = len(links)
        links.append(Link(
            name(_BODY, b) or f"body{b}", index.get(int(m.body_parentid[b]), -1),
            None if j is None else name(_JOINT, j), None if j is None else d.xaxis[j].copy(),
            None if j is None else d.xanchor[j].copy(), 0.0 if j is None else float(m.qpos0[m.jnt_qposadr[j]]),
            float(m.body_mass[b]), d.xipos[b].copy(), rot @ np.diag(m.body_inertia[b]) @ rot.T, frame))
    sites = [Site(name(_SITE, s) or f"site{s}", index[int(m.site_bodyid[s])], d.site_xpos[s].copy())
             for s in range(m.nsite) if int(m.site_bodyid[s]) in index]
    up = -m.opt.gravity if np.any(m.opt.gravity) else np.array([0.0, 0.0, 1.0])
    return planar_model(links, select_sites(sites, links, points), up=up, g=float(np.linalg.norm(m.opt.gravity)),
                        base=base, forward=forward)


def to_mjcf(model: AbstractPlanarModel, *, name: str = "difimpact") -> str:
    """The MJCF text of a planar model: the plane is world ``x`` (forward), ``z`` (up), hinges about ``+y`` (a
    positive turn takes ``+z`` toward ``+x``, the model's angle convention), the base two slides on the root
    body, joints named after the coordinates, bodies after the bodies and one site per named point.
    :func:`from_mjcf` reads it back to the same model."""
    tree = model.tree()
    names = model.coordinate_names
    frames = planar_frames(tree)
    roots = [i for i, p in enumerate(tree.parent) if p < 0]
    if len(roots) != 1:
        raise ValueError(f"MJCF export needs one root body, the model has {len(roots)}.")
    r = lambda v: repr(float(v))  # noqa: E731

    def body(i, indent):
        fr = frames[i]
        pad = "  " * indent
        out = [f'{pad}<body name="{tree.body_names[i]}" pos="{r(fr.attach[1])} 0 {r(fr.attach[0])}" '
               f'euler="0 {r(fr.offset)} 0">']
        if i in roots:  # slides along world x and z, written in the body's turned frame
            c, s = np.cos(fr.offset), np.sin(fr.offset)
            out += [f'{pad}  <joint name="{names[0]}" type="slide" axis="{r(c)} 0 {r(s)}"/>',
                    f'{pad}  <joint name="{names[1]}" type="slide" axis="{r(-s)} 0 {r(c)}"/>']
        if fr.coord >= 0:
            out.append(f'{pad}  <joint name="{names[fr.coord]}" type="hinge" axis="0 {r(fr.sign)} 0"/>')
        if fr.mass > 0:
            out.append(f'{pad}  <inertial pos="{r(fr.com[1])} 0 {r(fr.com[0])}" mass="{r(fr.mass)}" '
                       f'diaginertia="{r(fr.inertia)} {r(fr.inertia)} {r(fr.inertia)}"/>')
        out += [f'{pad}  <site name="{p}" pos="{r(loc[1])} 0 {r(loc[0])}"/>' for p, loc in fr.points]
        for c in fr.children:
            out += body(c, indent + 1)
        return out + [f"{pad}</body>"]

    lines = [f'<mujoco model="{name}">', '  <compiler angle="radian"/>',
             f'  <option gravity="0 0 {r(-tree.g)}"/>', "  <worldbody>"]
    lines += body(roots[0], 2) + ["  </worldbody>", "</mujoco>"]
    return "\n".join(lines) + "\n"
