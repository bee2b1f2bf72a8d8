"""MuJoCo MJCF models in: :func:`from_mjcf` reads the compiled model of the ``mujoco`` package."""

import json
import os

import numpy as np

from .._models.tree_model import TreeModel
from .planar import Link, Site, base_from_slides, planar_model, select_sites
from .source import parse
from .writer import MJ_MINVAL, POINT_ORDER

_BODY, _JOINT, _SITE, _EQUALITY, _TEXT, _HINGE, _SLIDE = 1, 3, 6, 17, 22, 3, 2  # mjtObj and mjtJoint values
_KINDS = {0: "free", 1: "ball", 2: "slide", 3: "hinge"}


def _mujoco():
    try:
        import mujoco
    except ImportError:
        raise ImportError("reading MJCF needs the `mujoco` package: pip install 'difimpact[mjcf]'.") from None
    return mujoco


def _compile(source):
    """MuJoCo's compiled model of `source` (a path or the XML text), after checking that it is MJCF."""
    mujoco = _mujoco()
    _, label, text = parse(source, "MJCF", "mujoco")
    try:
        if label == "the MJCF text":
            return mujoco.MjModel.from_xml_string(text)
        return mujoco.MjModel.from_xml_path(os.fspath(source))  # relative includes and assets
    except ValueError as error:
        raise ValueError(f"`source`: MuJoCo cannot compile {label}: {error}") from None


def _up(m) -> np.ndarray:
    return -m.opt.gravity / np.linalg.norm(m.opt.gravity) if np.any(m.opt.gravity) else np.array([0.0, 0.0, 1.0])


def _check_joints(m, name, moving, root) -> None:
    """Free and ball joints anywhere, slides below the root, two hinges on a body."""
    for b in moving:
        joints = range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b])
        for j in joints:
            kind = int(m.jnt_type[j])
            if kind != _HINGE and not (kind == _SLIDE and b == root):
                where = "below the root body" if kind == _SLIDE else "a joint with more than one axis"
                raise ValueError(f"joint {name(_JOINT, j)!r} of body {name(_BODY, b)!r} is a {_KINDS[kind]} joint "
                                 f"({where}): the model is not a planar tree of hinges.")
        if sum(int(m.jnt_type[j]) == _HINGE for j in joints) > 1:
            raise ValueError(f"body {name(_BODY, b)!r} has {m.body_jntnum[b]} hinges; a planar tree has one per body.")


def _check_constraints(m, name) -> None:
    """Equality constraints (closed loops, couplings), then armature on a slide (translational, which a planar
    base lacks): checked after planarity."""
    if m.neq:
        kinds = {0: "connect: a closed loop", 1: "weld", 2: "joint coupling", 3: "tendon coupling"}
        found = [f"{name(_EQUALITY, i)} ({kinds.get(int(m.eq_type[i]), 'constraint')})" for i in range(m.neq)]
        raise ValueError(f"the model has equality constraints {found}: a planar tree has no closed loops or "
                         "coupled joints.")
    for j in range(m.njnt):
        if m.jnt_type[j] == _SLIDE and m.dof_armature[m.jnt_dofadr[j]] != 0.0:
            raise ValueError(f"slide {name(_JOINT, j)!r} has armature {m.dof_armature[m.jnt_dofadr[j]]}: a planar "
                             "tree holds armature on hinges only (a rotor); set it to 0 on the base's slides.")


def _links(m, d, name, moving) -> tuple[list[Link], dict]:
    links, index = [], {}
    for b in moving:
        hinges = [j for j in range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b]) if m.jnt_type[j] == _HINGE]
        j = hinges[0] if hinges else None
        frame = np.eye(4)
        frame[:3, :3], frame[:3, 3] = d.xmat[b].reshape(3, 3), d.xpos[b]
        rot = d.ximat[b].reshape(3, 3)
        inertia = np.where(m.body_inertia[b] <= MJ_MINVAL, 0.0, m.body_inertia[b])  # the writer's placeholders
        index[b] = len(links)
        links.append(Link(
            name(_BODY, b), index.get(int(m.body_parentid[b]), -1),
            None if j is None else name(_JOINT, j), None if j is None else d.xaxis[j].copy(),
            None if j is None else d.xanchor[j].copy(), 0.0 if j is None else float(m.qpos0[m.jnt_qposadr[j]]),
            0.0 if m.body_mass[b] <= MJ_MINVAL else float(m.body_mass[b]), d.xipos[b].copy(),
            rot @ np.diag(inertia) @ rot.T, frame, 0.0 if j is None else float(m.dof_armature[m.jnt_dofadr[j]])))
    return links, index


def _point_order(m, sites: list[Site]) -> list[Site]:
    """The sites in the order :func:`to_mjcf` recorded (``<custom><text name="difimpact_point_order">``), if any."""
    t = _mujoco().mj_name2id(m, _TEXT, POINT_ORDER)
    if t < 0:
        return sites
    try:
        order = json.loads(bytes(m.text_data[m.text_adr[t]:m.text_adr[t] + m.text_size[t]]).rstrip(b"\0").decode())
    except ValueError:
        order = None
    by_name = {site.name: site for site in sites}
    if not isinstance(order, list) or sorted(map(str, order)) != sorted(by_name):
        raise ValueError(f"<custom><text name={POINT_ORDER!r}> must list the sites {sorted(by_name)} (JSON).")
    return [by_name[n] for n in order]


def from_mjcf(source, *, points=None) -> TreeModel:
    """Import a planar MuJoCo model (MJCF) as a :class:`~difimpact.TreeModel`.

    The ``mujoco`` package compiles the file (defaults, ``inertiafromgeom``, units applied) and its kinematics at
    ``qpos0`` give every body's mass, centre of mass, inertia and hinge in world coordinates. The model must be a
    planar tree: one moving body attached to the world, with up to two slide joints (horizontal and vertical,
    the floating base; a missing one is added as ``"x"`` or ``"y"``) and a hinge, and hinges about one common
    horizontal axis below it. The plane's up direction is the vertical slide, else against ``opt.gravity``;
    gravity at an angle to the slides is a ground slope. Coordinates keep the file's joint names and values
    (``q[i]`` is the joint's ``qpos``; an unnamed joint is ``"joint<id>"``); without slides the base coordinates are
    ``"x", "y"`` and the file's position is ``(0, 0)``. A hinge's ``armature`` (rotor inertia) is added to ``M``'s
    diagonal, as ``mj_fullM`` does. A mass or principal inertia at or below MuJoCo's minimum (``mjMINVAL`` = 1e-15, the
    placeholder of a massless moving body) reads as zero.

    **Arguments:**

    - `source`: a path to an MJCF file or the XML text.
    - `points`: named contact points, ``{name: site name}`` or ``{name: (body name, (x, y, z) in that body's
      frame)}``; by default every site of the moving bodies, in MuJoCo's order (or the order
      :func:`to_mjcf` recorded).

    **Returns:** a :class:`~difimpact.TreeModel`.

    Raises ``ValueError`` naming what is not planar, checked in this order: a ball or free joint, a slide below
    the root, two hinges on a body, base slides that are both horizontal, a hinge about another axis, an
    equality constraint (closed loop or coupling), armature on a slide.

    **Example:**

    ```python
    import difimpact as di

    xml = di.to_mjcf(di.CrutchWalker())             # the XML text, or a path to a planar MJCF file
    model = di.from_mjcf(xml)                       # the sites become contact points
    print(model.coordinate_names, model.point_names)   # ('q1', …, 'q6') ('P', 'H', 'S', 'E', 'Q')
    ```
    """
    mujoco = _mujoco()
    m = _compile(source)
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    prefix = {_BODY: "body", _JOINT: "joint", _SITE: "site", _EQUALITY: "equality"}
    name = lambda kind, i: mujoco.mj_id2name(m, kind, i) or f"{prefix[kind]}{i}"  # noqa: E731  (unnamed: by id)
    moving = [b for b in range(1, m.nbody) if m.body_weldid[b] != 0]
    roots = [b for b in moving if m.body_parentid[b] == 0 or m.body_weldid[m.body_parentid[b]] == 0]
    if len(roots) != 1:
        raise ValueError(f"expected one moving body attached to the world, found {[name(_BODY, b) for b in roots]}.")
    _check_joints(m, name, moving, roots[0])
    slides = [(name(_JOINT, j), d.xaxis[j].copy(), float(m.qpos0[m.jnt_qposadr[j]]))
              for j in range(m.body_jntadr[roots[0]], m.body_jntadr[roots[0]] + m.body_jntnum[roots[0]])
              if m.jnt_type[j] == _SLIDE]
    base = base_from_slides(slides, _up(m), f"body {name(_BODY, roots[0])!r}")
    links, index = _links(m, d, name, moving)
    sites = _point_order(m, [Site(name(_SITE, s), index[int(m.site_bodyid[s])], d.site_xpos[s].copy())
                             for s in range(m.nsite) if int(m.site_bodyid[s]) in index])
    model = planar_model(links, select_sites(sites, links, points), up=_up(m),
                         g=float(np.linalg.norm(m.opt.gravity)), base=base)
    _check_constraints(m, name)
    return model
