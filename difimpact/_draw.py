"""Stick-figure drawing of a planar model at a posture, with its contact points and force or impulse arrows
(matplotlib)."""

from collections.abc import Mapping, Sequence

import numpy as np

from ._custom_types import ArrayLike, Float
from ._models.base import AbstractPlanarModel


def _on_segment(p, a, b, tol) -> bool:
    t = np.clip(np.dot(p - a, b - a) / max(np.dot(b - a, b - a), 1e-24), 0.0, 1.0)
    return bool(np.linalg.norm(a + t * (b - a) - p) <= tol)


def _segments(tree, q) -> list[tuple[np.ndarray, np.ndarray]]:
    """Lines of the stick figure: each body from its joint to its children's joints and its named points; a
    centre of mass off those lines (a torso, a head) gets a line through it to twice its distance."""
    origins = np.asarray(tree.frames(q)[0])
    coms = np.asarray(tree.com_positions(q))
    ends: dict[int, list[np.ndarray]] = {b: [] for b in range(len(tree.parent))}
    for b, parent in enumerate(tree.parent):
        if parent >= 0:
            ends[parent].append(origins[b])
    for k, b in enumerate(tree.point_body):
        ends[b].append(np.asarray(tree.body_point(q, b, tree.point_local[k])))
    size = max(np.ptp(np.concatenate([origins, coms]), axis=0).max(), 1e-3)
    lines = []
    for b, targets in ends.items():
        body = [(origins[b], t) for t in targets if np.linalg.norm(t - origins[b]) > 1e-3 * size]
        near = 0.05 * size  # a centre of mass a little off the segment's axis is drawn on it
        if not any(_on_segment(coms[b], a, c, near) for a, c in body) and np.linalg.norm(coms[b] - origins[b]) > near:
            body.append((origins[b], 2 * coms[b] - origins[b]))
        lines += body
    return lines


def _arc(ax, centre, radius, colour):
    """The lower part of a circular foot (±0.6 rad about the downward vertical)."""
    a = np.linspace(-0.6, 0.6, 40) - np.pi / 2
    ax.plot(centre[0] + radius * np.cos(a), centre[1] + radius * np.sin(a), color=colour, lw=2)


def _coordinate_labels(ax, tree, q, size: float) -> None:
    """Write ``q1`` … ``qn`` where each coordinate acts: the coordinates no body turns (the base's translations)
    below left of the root body's origin (marked +), each joint angle beside the body it turns, near that body's
    joint, on the side away from the other segments that meet there (the left where that is a tie)."""
    origins = np.asarray(tree.frames(q)[0])
    coms = np.asarray(tree.com_positions(q))

    def far(b):  # the end of body b farthest from its joint: a child's joint, a named point or its centre of mass
        targets = [origins[k] for k, parent in enumerate(tree.parent) if parent == b]
        targets += [np.asarray(tree.body_point(q, b, tree.point_local[k])) for k, pb in enumerate(tree.point_body)
                    if pb == b] + [coms[b]]
        return max(targets, key=lambda t: np.linalg.norm(t - origins[b]))

    def unit(v):
        n = np.linalg.norm(v)
        return v / n if n > 1e-9 * size else None

    box = {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8}
    style = {"textcoords": "offset points", "fontsize": 8, "color": "tab:green", "zorder": 5, "bbox": box}
    turned = {c for c in tree.coord if c >= 0}
    base = [f"q{i + 1}" for i in range(tree.n) if i not in turned]
    root = next(b for b, parent in enumerate(tree.parent) if parent < 0)
    if base:
        ax.plot(*origins[root], "+", ms=8, color="tab:green", zorder=5)
        ax.annotate(", ".join(base), origins[root], xytext=(-4, -6), ha="right", va="top", **style)
    for b, c in enumerate(tree.coord):
        axis = unit(far(b) - origins[b])
        if c < 0 or axis is None:
            continue
        joint, parent = origins[b], tree.parent[b]
        others = [origins[parent] - joint] if parent >= 0 else []
        others += [far(k) - joint for k, pk in enumerate(tree.parent)
                   if k != b and pk == parent and np.linalg.norm(origins[k] - joint) <= 1e-6 * size]
        side = np.array([axis[1], -axis[0]])  # the side away from the other segments; on a tie, the left
        lean = sum(float(side @ u) for u in map(unit, others) if u is not None)  # (the points' names are right)
        if lean > 1e-9 or (lean >= -1e-9 and side[0] > 0):
            side = -side
        length = np.linalg.norm(far(b) - joint)
        along = joint + (far(b) - joint) * min(0.3, 0.1 * size / length)
        ax.annotate(f"q{c + 1}", along, xytext=tuple(9 * side), ha="center", va="center", **style)


def _points(ax, tree, q, contacts, labels: bool, colour: str) -> dict[str, np.ndarray]:
    """Mark the named points (the `contacts` larger, in red; circular feet as arcs) and name them when `labels`;
    their positions by name."""
    points = {name: np.asarray(tree.point_position(q, name)) for name in tree.point_names}
    for k, name in enumerate(tree.point_names):
        if float(tree.point_radius[k]) > 0:
            _arc(ax, np.asarray(tree.body_point(q, tree.point_body[k], tree.point_local[k])),
                 float(tree.point_radius[k]), colour)
        hit = name in contacts
        ax.plot(*points[name], "o", ms=7 if hit else 4, color="tab:red" if hit else colour, zorder=4)
        if labels:
            ax.annotate(name, points[name], textcoords="offset points", xytext=(5, 4), fontsize=8)
    return points


def _arrows(ax, points, arrows, length: float, unit: str) -> list[np.ndarray]:
    """Draw each of `arrows` (point name → world vector) at its point, the longest `length` long, labelled with
    its magnitude in `unit`; the tips."""
    vectors = {name: np.asarray(v, float) for name, v in arrows.items()}
    longest = max([np.linalg.norm(v) for v in vectors.values()] + [1e-12])
    tips = []
    for name, v in vectors.items():
        tips.append(points[name] + length * v / longest)
        ax.annotate("", tips[-1], points[name], arrowprops={"arrowstyle": "-|>", "color": "tab:blue", "lw": 2})
        ax.annotate(f"{np.linalg.norm(v):.3g} {unit}", tips[-1], textcoords="offset points",
                    xytext=(4, 2), fontsize=8, color="tab:blue")
    return tips


def _ground(ax, span, height: float, coordinates: bool) -> None:
    """The ground ``y ≤ 0`` and equal axes around the points `span` with a margin of 12 % of `height` (and room
    for the base's coordinate label, left of the root, with `coordinates`)."""
    lo, hi = span.min(axis=0) - 0.12 * height, span.max(axis=0) + 0.12 * height
    if coordinates:
        lo[0] -= 0.1 * height
    ax.fill_between([lo[0], hi[0]], lo[1], 0.0, color="0.88", zorder=0)
    ax.axhline(0.0, color="0.3", lw=1, zorder=1)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")


def draw_model(
    model: AbstractPlanarModel,
    q: Float[ArrayLike, " n"],
    *,
    ax=None,
    contacts: Sequence[str] = (),
    arrows: Mapping[str, Float[ArrayLike, " 2"]] | None = None,
    arrow_unit: str = "N s",
    labels: bool = True,
    colour: str = "k",
    title: str | None = None,
    coordinates: bool = False,
):
    """Draw `model` at the configuration `q` as a stick figure on the ground line ``y = 0``.

    Bodies are drawn from their joints to their children's joints, their named points and their centres of
    mass (dots whose area grows with the mass); circular feet as arcs. `contacts` are marked in red, and each
    entry of `arrows` — a point name and a world vector ``(x, y)``, e.g. the impulse ``(P_t, P_n)`` of an impact
    — is drawn at that point, scaled so that the longest arrow is 40 % of the figure's height, and labelled with
    its magnitude in `arrow_unit`.

    **Arguments:**

    - `model`: any :class:`~difimpact.AbstractPlanarModel`; `q`: its configuration ``(n,)`` [m, rad].
    - `ax`: a matplotlib ``Axes`` (a new figure when ``None``).
    - `contacts`: point names to mark as contacts; `arrows`: ``{point name: (x, y)}``.
    - `labels`: write the point names; `colour`: the sticks' colour; `title`: the axes' title.
    - `coordinates`: write the generalised coordinates ``q1`` … ``qn`` where they act: the base's translations
      at the root body's origin, each joint angle along the body it turns, next to that body's joint.

    **Returns:** the matplotlib ``Axes``.
    """
    try:
        import matplotlib.pyplot as plt  # imported here: the library needs matplotlib only to draw
    except ImportError as err:
        raise ImportError("`draw_model` needs matplotlib: pip install matplotlib, or the extra "
                          "'difimpact[papers]'") from err

    tree = model.tree()
    q = np.asarray(q, float)
    if q.shape != (tree.n,):
        raise ValueError(f"`q` must have shape ({tree.n},), got {q.shape}.")
    unknown = [p for p in list(contacts) + list(arrows or {}) if p not in tree.point_names]
    if unknown:
        raise ValueError(f"unknown point(s) {unknown}; this model has {list(tree.point_names)}.")
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 5.0), layout="constrained")
    for a, b in _segments(tree, q):
        ax.plot([a[0], b[0]], [a[1], b[1]], color=colour, lw=2, solid_capstyle="round")
    coms, mass = np.asarray(tree.com_positions(q)), np.asarray(tree.mass)
    ax.scatter(coms[:, 0], coms[:, 1], s=8 + 60 * mass / max(mass.max(), 1e-12), color="0.55", zorder=3,
               label="centres of mass")
    points = _points(ax, tree, q, contacts, labels, colour)
    xy = np.array(list(points.values()) + list(coms) + [c for seg in _segments(tree, q) for c in seg])
    height = max(np.ptp(xy[:, 1]), np.ptp(xy[:, 0]), 1e-3)
    tips = _arrows(ax, points, arrows or {}, 0.4 * height, arrow_unit)
    _ground(ax, np.array([*xy, *tips, (xy[:, 0].min(), 0.0)]), height, coordinates)
    if coordinates:
        _coordinate_labels(ax, tree, q, height)
    if title:
        ax.set_title(title, fontsize=10)
    return ax
