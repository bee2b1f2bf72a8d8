"""A file's model, described in world coordinates at its reference configuration, projected onto the plane.

Every importer reduces its format to :class:`Link`s — one per body, with its hinge (axis and anchor), mass,
centre of mass and inertia tensor in *world* coordinates with every coordinate at its reference value — and
:class:`Site`s, then calls :func:`planar_model`. With ``u`` the upward unit vector (against gravity) and ``f``
the forward one, the sagittal plane has coordinates ``(r·f, r·u)`` and the hinges turn about
``a = u × f``: a positive turn about ``a`` takes ``u`` toward ``f``, the tree's angle convention. Each body's
frame is the world frame carried by the body from the reference, so its body coordinates are
``(along, across) = (Δr·u, Δr·f)`` at the reference and its planar inertia about the hinge axis is
``aᵀ I a`` (exact for rotation about one fixed axis). A hinge whose file coordinate is ``q`` with reference
value ``q₀`` and axis ``s a`` (``s = ±1``) turns its body by ``s (q − q₀)``, so the tree's coordinates are the
file's own.
"""

from typing import NamedTuple, Sequence

import numpy as np

from .._models.tree_model import TreeModel
from .._tree import Body, PlanarTree, Point

_TOL = 1e-9


class Link(NamedTuple):
    """A body of a file's model at the reference configuration, in world coordinates.

    - `name`: the body's name; `parent`: index of its parent link, ``-1`` for one on the floating base.
    - `coordinate`: name of the hinge coordinate turning it, ``None`` for a body welded to its parent.
    - `axis`, `anchor`: the hinge's world axis and a world point on it (ignored for a weld).
    - `q_ref`: the coordinate's value at the reference configuration.
    - `mass`, `com`, `inertia`: mass, world centre of mass and world inertia tensor about it ``(3, 3)``.
    - `frame`: the world transform ``(4, 4)`` of the body's frame in the file (for points given in it).
    """

    name: str
    parent: int
    coordinate: str | None
    axis: np.ndarray
    anchor: np.ndarray
    q_ref: float
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    frame: np.ndarray


class Site(NamedTuple):
    """A named point of a link (a MuJoCo site, an OpenSim marker, a massless URDF link) in world coordinates."""

    name: str
    link: int
    position: np.ndarray


class Base(NamedTuple):
    """The floating base: the names of its two coordinates and, when the file has them as joints (slides along
    ``f`` and ``u``), their reference values; a file without them is fixed to the world at ``(0, 0)``."""

    names: tuple[str, str] = ("x", "y")
    reference: tuple[float, float] = (0.0, 0.0)


def unit(v, what: str) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    norm = np.linalg.norm(v)
    if norm < _TOL:
        raise ValueError(f"{what} has zero length.")
    return v / norm


def sagittal_axes(up, links: Sequence[Link], forward=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(u, f, a)``: up, forward and the hinge axis ``a = u × f``. Without a given forward direction it is
    ``±(a₁ × u)`` for the first hinge's axis ``a₁``, its sign chosen so that its largest component is positive."""
    u = unit(up, "the upward direction")
    if forward is None:
        hinges = [link for link in links if link.coordinate is not None]
        if not hinges:
            raise ValueError("the model has no hinge and no base slides: its plane is undefined.")
        f = np.cross(unit(hinges[0].axis, f"the axis of {hinges[0].coordinate!r}"), u)
        if np.linalg.norm(f) < _TOL:
            raise ValueError(f"joint {hinges[0].coordinate!r} turns about the vertical: not a sagittal hinge.")
        f = unit(f, "forward")
        f = f if f[np.argmax(np.abs(f))] > 0 else -f
    else:
        f = unit(forward, "the forward direction")
    if abs(f @ u) > _TOL:
        raise ValueError(f"the forward direction {f} is not horizontal (up = {u}).")
    return u, f, np.cross(u, f)


def planar_model(links: Sequence[Link], sites: Sequence[Site], *, up, g: float, base: Base = Base(),
                 forward=None) -> TreeModel:
    """The :class:`~difimpact.TreeModel` of ``links`` (parents first) and ``sites``.

    Raises ``ValueError`` naming the joint whose axis is not the common sagittal axis. When a root body's
    hinge is not at the base point (the file's slides move a body whose hinge is elsewhere), a massless
    welded body ``"base"`` carries the offset.
    """
    u, f, a = sagittal_axes(up, links, forward)
    local = lambda d: (float(d @ u), float(d @ f))  # noqa: E731
    base_point = base.reference[0] * f + base.reference[1] * u
    origins, coords = [], []
    for link in links:
        if link.coordinate is None:
            origins.append(origins[link.parent] if link.parent >= 0 else base_point)
            continue
        axis = unit(link.axis, f"the axis of {link.coordinate!r}")
        if np.linalg.norm(np.cross(axis, a)) > 1e-6:
            raise ValueError(f"joint {link.coordinate!r} of body {link.name!r} turns about {np.round(axis, 6)}, "
                             f"not the sagittal axis ±{np.round(a, 6)}: the model is not planar.")
        origins.append(np.asarray(link.anchor, dtype=float))
        coords.append(link.coordinate)
    shift = any(link.parent < 0 and max(map(abs, local(o - base_point))) > _TOL for link, o in zip(links, origins))
    bodies = [Body("base", -1, -1, 0.0)] if shift else []
    for link, origin in zip(links, origins):
        k = -1 if link.coordinate is None else 2 + coords.index(link.coordinate)
        s = 1.0 if k < 0 else float(np.sign(unit(link.axis, "axis") @ a))
        parent_origin = origins[link.parent] if link.parent >= 0 else base_point
        parent = (link.parent + 1 if shift else link.parent) if link.parent >= 0 else (0 if shift else -1)
        bodies.append(Body(link.name, parent, k, float(link.mass), float(a @ link.inertia @ a),
                           local(np.asarray(link.com) - origin), local(origin - parent_origin), s,
                           0.0 if k < 0 else -s * float(link.q_ref)))
    first = 1 if shift else 0
    points = [Point(site.name, site.link + first, local(np.asarray(site.position) - origins[site.link]))
              for site in sites]
    tree = PlanarTree.build(2 + len(coords), bodies, points, g)
    return TreeModel(tree, tuple(base.names) + tuple(coords))


def select_sites(available: Sequence[Site], links: Sequence[Link], points) -> list[Site]:
    """The sites to keep as named points: all of ``available`` when ``points`` is ``None``; otherwise
    ``points`` maps each point name to a site name of the file or to ``(body name, (x, y, z))`` in that body's
    frame."""
    if points is None:
        return list(available)
    by_name = {site.name: site for site in available}
    link_index = {link.name: i for i, link in enumerate(links)}
    out = []
    for name, spec in dict(points).items():
        if isinstance(spec, str):
            if spec not in by_name:
                raise ValueError(f"points[{name!r}]: no site/marker {spec!r}; the file has {sorted(by_name)}.")
            out.append(Site(name, by_name[spec].link, by_name[spec].position))
            continue
        body, xyz = spec
        if body not in link_index:
            raise ValueError(f"points[{name!r}]: no body {body!r}; the model has {sorted(link_index)}.")
        frame = links[link_index[body]].frame
        out.append(Site(name, link_index[body], frame[:3, :3] @ np.asarray(xyz, float) + frame[:3, 3]))
    return out
