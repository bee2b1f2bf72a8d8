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

When the file has base slides they fix the plane's axes: forward along the horizontal slide and up along the
vertical one. Gravity need not be along that up: its angle ``γ`` to it becomes the tree's ground slope
(``g (sin γ, −cos γ)`` in the plane, :class:`~difimpact.PlanarTree`), as for a walker on a tilted platform.

A joint's armature (MuJoCo's ``armature``, a URDF transmission's motor inertia × reduction²) is a rotor that
turns with that joint's coordinate alone: ``M`` gains it on its diagonal, ``M_kk += J_k`` (MuJoCo's definition,
``mj_fullM``; FROST's ``De_motor``). A planar tree holds it as a massless root body of inertia ``J_k`` turned
by ``q_k`` only (:data:`ROTOR` names it), whose angular velocity is ``q̇_k``.
"""

from collections.abc import Mapping, Sequence
from typing import NamedTuple

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
    - `armature`: rotor inertia added to ``M``'s diagonal at the hinge's coordinate [kg m²].

    A hinge whose `axis` is ``None`` turns about the plane's axis ``a`` (a base rotation added by the reader).
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
    armature: float = 0.0


ROTOR = "{}_armature"  # the name of the rotor body holding a coordinate's armature


class Site(NamedTuple):
    """A named point of a link (a MuJoCo site, an OpenSim marker, a massless URDF link) in world coordinates."""

    name: str
    link: int
    position: np.ndarray


class Base(NamedTuple):
    """The floating base: the names of its two coordinates, their reference values, and the world directions of
    the file's slides (``None`` for one the file does not have). A coordinate the file lacks is added, named
    ``"x"`` or ``"y"``: the model's root still translates freely along it (the base is never fixed)."""

    names: tuple[str, str] = ("x", "y")
    reference: tuple[float, float] = (0.0, 0.0)
    forward: np.ndarray | None = None
    up: np.ndarray | None = None


def base_from_slides(slides, up, where: str) -> Base:
    """The :class:`Base` of a file's root slides ``[(name, world axis, reference value)]``: none, one (the other
    coordinate added), or two orthogonal ones, the one nearer `up` vertical (pointing up), the other forward."""
    up = unit(up, "the upward direction")
    if len(slides) > 2:
        raise ValueError(f"{where} has slides {[s[0] for s in slides]}; a planar floating base has at most two "
                         "(horizontal and vertical).")
    axes = [unit(axis, f"the axis of slide {name!r}") for name, axis, _ in slides]
    if len(slides) == 1:
        (name, _, ref), axis = slides[0], axes[0]
        if abs(axis @ up) > 1 - 1e-9:
            if axis @ up < 0:
                raise ValueError(f"slide {name!r} of {where} points down; the base's vertical slide must point up.")
            return Base(("x", name), (0.0, ref), None, axis)
        return Base((name, "y"), (ref, 0.0), axis, None)
    if len(slides) == 2:
        if abs(axes[0] @ axes[1]) > 1e-9:
            raise ValueError(f"slides {[s[0] for s in slides]} of {where} are not orthogonal: a planar floating "
                             "base slides along forward and up.")
        i = int(abs(axes[1] @ up) > abs(axes[0] @ up))  # the vertical one
        if abs(axes[i] @ up) < 1e-6:
            raise ValueError(f"slides {[s[0] for s in slides]} of {where} are both horizontal (up = "
                             f"{np.round(up, 6) + 0.0}): the model moves in a horizontal plane, not a vertical one.")
        if axes[i] @ up <= 0:
            raise ValueError(f"slide {slides[i][0]!r} of {where} points down; the base's vertical slide must point "
                             "up.")
        (nx, _, rx), (ny, _, ry) = slides[1 - i], slides[i]
        return Base((nx, ny), (rx, ry), axes[1 - i], axes[i])
    return Base()


def unit(v, what: str) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    norm = np.linalg.norm(v)
    if norm < _TOL:
        raise ValueError(f"{what} has zero length.")
    return v / norm


def sagittal_axes(up, links: Sequence[Link],
                  base: Base | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """``(u, f, a, γ)``: up, forward, the hinge axis ``a = u × f`` and the slope ``γ`` of gravity (along ``−up``
    in the file) in the plane. The base's slides give ``f`` and ``u`` (one slide: the other is ``a``'s normal in
    the plane of gravity and the slide); without them ``u = up`` and ``f = ±(a₁ × u)`` for the first hinge's axis
    ``a₁``, its sign chosen so that its largest component is positive, and ``γ = 0``."""
    base = Base() if base is None else base
    g_up = unit(up, "the upward direction")
    if base.forward is not None and base.up is not None:
        f, u = unit(base.forward, "forward"), unit(base.up, "up")
    elif base.forward is not None:
        f = unit(base.forward, "forward")
        u = unit(g_up - (g_up @ f) * f, "up (gravity is along the base's slide)")
    else:
        u = g_up if base.up is None else unit(base.up, "up")
        hinges = [link for link in links if link.coordinate is not None and link.axis is not None]
        if not hinges:
            raise ValueError("the model has no hinge and no horizontal base slide: its plane is undefined.")
        f = np.cross(unit(hinges[0].axis, f"the axis of {hinges[0].coordinate!r}"), u)
        if np.linalg.norm(f) < _TOL:
            raise ValueError(f"joint {hinges[0].coordinate!r} turns about the vertical: not a sagittal hinge.")
        f = unit(f, "forward")
        f = f if f[np.argmax(np.abs(f))] > 0 else -f
    a = np.cross(u, f)
    if abs(g_up @ a) > 1e-9:
        raise ValueError(f"gravity has a component {g_up @ a:.3g} (of 1) along the hinge axis {np.round(a, 6)}: "
                         "the model does not move in a vertical plane.")
    return u, f, a, float(np.arctan2(-(g_up @ f), g_up @ u))


def _check_finite(links: Sequence[Link], sites: Sequence[Site]) -> None:
    """Finite numbers whose mass matrix stays finite: ``Σ m (Σ |r|)² + Σ I`` bounds its entries."""
    extents = []
    for link in links:
        for what, value in (("mass", link.mass), ("centre of mass", link.com), ("inertia", link.inertia),
                            ("joint position", link.anchor), ("armature", link.armature)):
            if value is not None and not np.all(np.isfinite(value)):
                raise ValueError(f"body {link.name!r}: its {what} is not finite ({value}).")
        anchor = 0.0 if link.anchor is None else float(np.abs(link.anchor).sum())
        extents.append((float(np.abs(link.com).sum()) + anchor, f"body {link.name!r}"))
    for site in sites:
        if not np.all(np.isfinite(site.position)):
            raise ValueError(f"point {site.name!r}: its position is not finite ({site.position}).")
        extents.append((float(np.abs(site.position).sum()), f"point {site.name!r}"))
    with np.errstate(over="ignore"):
        size = np.float64(sum(e for e, _ in extents))
        bound = sum(link.mass for link in links) * size ** 2 + sum(float(np.abs(link.inertia).sum()) for link in links)
    if not np.isfinite(bound):
        far, name = max(extents)
        raise ValueError(f"the model's mass matrix overflows: {name} lies {far:.3g} m from the origin, with a total "
                         f"mass of {sum(link.mass for link in links):.3g} kg; a length or mass in the file is out of "
                         "range.")


def planar_model(links: Sequence[Link], sites: Sequence[Site], *, up, g: float, base: Base | None = None) -> TreeModel:
    """The :class:`~difimpact.TreeModel` of ``links`` (parents first) and ``sites``.

    Raises ``ValueError`` naming the joint whose axis is not the common sagittal axis. When a root body's
    hinge is not at the base point (the file's slides move a body whose hinge is elsewhere), a massless
    welded body ``"base"`` carries the offset. Each armature becomes a rotor body (module docstring).
    """
    base = Base() if base is None else base
    _check_finite(links, sites)
    u, f, a, slope = sagittal_axes(up, links, base)
    local = lambda d: (float(d @ u), float(d @ f))  # noqa: E731
    base_point = base.reference[0] * f + base.reference[1] * u
    origins, coords = [], []
    for link in links:
        if link.coordinate is None:
            origins.append(origins[link.parent] if link.parent >= 0 else base_point)
            continue
        axis = a if link.axis is None else unit(link.axis, f"the axis of {link.coordinate!r}")
        if np.linalg.norm(np.cross(axis, a)) > 1e-6:
            raise ValueError(f"joint {link.coordinate!r} of body {link.name!r} turns about {np.round(axis, 6)}, "
                             f"not the sagittal axis ±{np.round(a, 6)}: the model is not planar.")
        origins.append(np.asarray(link.anchor, dtype=float))
        coords.append(link.coordinate)
    if len(set(coords)) != len(coords):
        raise ValueError(f"coordinate names {coords} repeat: each hinge needs its own name.")
    shift = any(link.parent < 0 and max(map(abs, local(o - base_point))) > _TOL for link, o in zip(links, origins))
    bodies = [Body("base", -1, -1, 0.0)] if shift else []
    for link, origin in zip(links, origins):
        k = -1 if link.coordinate is None else 2 + coords.index(link.coordinate)
        s = 1.0 if k < 0 or link.axis is None else float(np.sign(unit(link.axis, "axis") @ a))
        parent_origin = origins[link.parent] if link.parent >= 0 else base_point
        parent = (link.parent + 1 if shift else link.parent) if link.parent >= 0 else (0 if shift else -1)
        bodies.append(Body(link.name, parent, k, float(link.mass), float(a @ link.inertia @ a),
                           local(np.asarray(link.com) - origin), local(origin - parent_origin), s,
                           0.0 if k < 0 else -s * float(link.q_ref)))
    bodies += [Body(ROTOR.format(link.coordinate), -1, 2 + coords.index(link.coordinate), 0.0, float(link.armature))
               for link in links if link.coordinate is not None and link.armature != 0.0]
    first = 1 if shift else 0
    points = [Point(site.name, site.link + first, local(np.asarray(site.position) - origins[site.link]))
              for site in sites]
    tree = PlanarTree.build(2 + len(coords), bodies, points, g, slope)
    return TreeModel(tree, tuple(base.names) + tuple(coords))


def select_sites(available: Sequence[Site], links: Sequence[Link], points) -> list[Site]:
    """The sites to keep as named points: all of ``available`` when ``points`` is ``None``; otherwise
    ``points`` maps each point name to a site name of the file or to ``(body name, (x, y, z))`` in that body's
    frame."""
    if points is None:
        return list(available)
    if not isinstance(points, Mapping):
        raise TypeError(f"`points` must be a mapping {{name: site name or (body name, (x, y, z))}}, got "
                        f"{type(points).__name__}.")
    by_name = {site.name: site for site in available}
    link_index = {link.name: i for i, link in enumerate(links)}
    out = []
    for name, spec in points.items():
        if isinstance(spec, str):
            if spec not in by_name:
                raise ValueError(f"points[{name!r}]: no site/marker {spec!r}; the file has {sorted(by_name)}.")
            out.append(Site(name, by_name[spec].link, by_name[spec].position))
            continue
        if not isinstance(spec, (tuple, list)) or len(spec) != 2 or not isinstance(spec[0], str):
            raise ValueError(f"points[{name!r}] must be a site name or (body name, (x, y, z)), got {spec!r}.")
        body, xyz = spec
        if body not in link_index:
            raise ValueError(f"points[{name!r}]: no body {body!r}; the model has {sorted(link_index)}.")
        try:
            xyz = np.asarray(xyz, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"points[{name!r}]: the offset {xyz!r} must be three numbers (x, y, z).") from None
        if xyz.shape != (3,) or not np.all(np.isfinite(xyz)):
            raise ValueError(f"points[{name!r}]: the offset must be three finite numbers (x, y, z) in the frame of "
                             f"{body!r}, got {xyz.tolist()!r}.")
        frame = links[link_index[body]].frame
        out.append(Site(name, link_index[body], frame[:3, :3] @ xyz + frame[:3, 3]))
    return out
