"""The frames an exporter writes: a planar tree's bodies as nested frames in the world's x-z plane."""

from typing import NamedTuple

import numpy as np

from .._tree import PlanarTree


class Frame(NamedTuple):
    """One body of a tree as a child frame of its parent: ``attach`` (along, across) in the parent's frame
    (zero for a root), turned by ``offset`` about ``+y`` (a positive turn takes ``+z`` toward ``+x``), its hinge
    coordinate ``coord`` (``-1``: welded) with axis ``sign·y``, its inertial data in body coordinates, its named
    points ``(name, (along, across))`` and the indices of its children."""

    attach: tuple[float, float]
    offset: float
    coord: int
    sign: float
    mass: float
    inertia: float
    com: tuple[float, float]
    points: list[tuple[str, tuple[float, float]]]
    children: list[int]


def planar_frames(tree: PlanarTree) -> list[Frame]:
    """Every body of ``tree`` as a :class:`Frame`. Raises ``ValueError`` for what URDF and MJCF cannot hold:
    a coordinate turning two bodies, a rolling (arc) point."""
    owners = [k for k in tree.coord if k >= 0]
    if len(set(owners)) != len(owners):
        raise ValueError("a coordinate turns more than one body, which URDF and MJCF cannot express.")
    radius = np.asarray(tree.point_radius)
    if np.any(radius > 0):
        arcs = [n for n, r in zip(tree.point_names, radius) if r > 0]
        raise ValueError(f"points {arcs} are arcs (rolling feet), which URDF and MJCF points cannot express.")
    attach, com, local = (np.asarray(x, dtype=float) for x in (tree.attach, tree.com, tree.point_local))
    frames = []
    for i, parent in enumerate(tree.parent):
        frames.append(Frame(
            (0.0, 0.0) if parent < 0 else tuple(map(float, attach[i])), float(tree.offset[i]), tree.coord[i],
            float(tree.sign[i]), float(tree.mass[i]), float(tree.inertia[i]), tuple(map(float, com[i])),
            [(n, tuple(map(float, local[k]))) for k, (n, b) in enumerate(zip(tree.point_names, tree.point_body))
             if b == i],
            [c for c, p in enumerate(tree.parent) if p == i]))
    return frames
