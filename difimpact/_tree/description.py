"""The description of a planar tree: its bodies and named points, and the checks of what a user wrote."""

from typing import NamedTuple, Sequence

from .._custom_types import ScalarLike
from .._validation import count, number


class Body(NamedTuple):
    """Description of one body, consumed by :class:`PlanarTree` (parameters may be JAX arrays). Best
    written with keywords: ``Body(name="shank", parent="thigh", coord=3, mass=3.0, com=(-0.2, 0.0))``.

    **Arguments:**

    - `name`: the body's name.
    - `parent`: the parent body, by name or by index in the list of bodies; ``None`` (or ``-1``) for a root
      attached to the floating base. A parent precedes its children in the list.
    - `coord`: index of the joint coordinate in ``q`` (``2 ≤ coord < n``), ``None`` (or ``-1``) for a body
      welded to its parent.
    - `mass` [kg], `inertia` [kg m²]: mass and centroidal moment of inertia.
    - `com`: centre of mass in body coordinates ``(along, across)`` [m]: ``along`` the segment axis
      ``e = (sin θ, cos θ)``, so a segment hanging below its joint has a negative ``along``.
    - `attach`: joint position in the parent's body coordinates [m] (ignored for roots).
    - `sign`, `offset`: ``θ = θ_parent + sign q[coord] + offset`` [rad].
    """

    name: str
    parent: int | str | None
    coord: int | None
    mass: ScalarLike
    inertia: ScalarLike = 0.0
    com: tuple[ScalarLike, ScalarLike] = (0.0, 0.0)
    attach: tuple[ScalarLike, ScalarLike] = (0.0, 0.0)
    sign: float = 1.0
    offset: float = 0.0


class Point(NamedTuple):
    """A named point of a body: fixed at body coordinates ``local`` [m], or, with ``radius > 0`` [m], the
    lowest point of a circular arc (a rolling foot) of that radius centred at ``local``. `body` is the body's
    name or its index in the list of bodies."""

    name: str
    body: int | str
    local: tuple[ScalarLike, ScalarLike] = (0.0, 0.0)
    radius: ScalarLike = 0.0


def _index(names: list[str], ref, what: str):
    """Index of a body given by name (``None`` → ``-1``); anything else is returned as given."""
    if ref is None:
        return -1
    if isinstance(ref, str):
        if ref not in names:
            raise ValueError(f"{what}: unknown body {ref!r}; the bodies before it are {names}.")
        return names.index(ref)
    return ref


def _by_index(bodies, points):
    """The description with parents and point bodies given by name (or ``None``) replaced by indices."""
    if not isinstance(bodies, Sequence) or not isinstance(points, Sequence):
        return bodies, points
    names = [b.name if isinstance(b, Body) else None for b in bodies]
    bodies = [b._replace(parent=_index(names[:i], b.parent, f"body {b.name!r}: parent"),
                         coord=-1 if b.coord is None else b.coord) if isinstance(b, Body) else b
              for i, b in enumerate(bodies)]
    points = [p._replace(body=_index(names, p.body, f"point {p.name!r}")) if isinstance(p, Point) else p
              for p in points]
    return bodies, points


def _check_types(n, bodies, points) -> None:
    """Types of a tree description: ``n``, sequences of :class:`Body` and :class:`Point`, string names."""
    count("n", n, minimum=2)
    for what, items, cls, least in (("bodies", bodies, Body, 1), ("points", points, Point, 0)):
        if isinstance(items, (str, cls)) or not isinstance(items, Sequence) or len(items) < least:
            raise TypeError(f"`{what}` must be a sequence of {cls.__name__}{' (one or more)' * least}, got {items!r}.")
        for i, item in enumerate(items):
            if not isinstance(item, cls) or not isinstance(item.name, str):
                raise TypeError(f"`{what}[{i}]` must be a {cls.__name__}(...) with a string name, got {item!r}.")


def _check_indices(n, bodies, points) -> None:
    """Parents, coordinates and point bodies by index, unique point names, static ``sign`` and ``offset``."""
    for i, b in enumerate(bodies):
        if count(f"bodies[{i}].parent", b.parent, minimum=-1) >= i:
            raise ValueError(f"body {b.name!r}: parent must precede it (got {b.parent}).")
        if not (count(f"bodies[{i}].coord", b.coord, minimum=-1) == -1 or 2 <= b.coord < n):
            raise ValueError(f"body {b.name!r}: coord {b.coord} outside 2..{n - 1}.")
        number(f"bodies[{i}].sign", b.sign)
        number(f"bodies[{i}].offset", b.offset)
    names = [p.name for p in points]
    if len(set(names)) != len(names):
        raise ValueError(f"point names must be unique, got {names}.")
    for j, p in enumerate(points):
        if count(f"points[{j}].body", p.body, minimum=0) >= len(bodies):
            raise ValueError(f"point {p.name!r}: body {p.body} outside 0..{len(bodies) - 1}.")
