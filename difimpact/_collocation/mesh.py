r"""The mesh of a multi-phase transcription: segments per phase, their widths in phase time, the points, the
quadrature and the defects.

Each phase runs over phase time ``s ∈ [0, 1]`` cut into ``n_p`` segments of widths ``h_j``, equal or
geometrically graded (:func:`widths`). Hermite–Simpson collocation has the segments' ends and midpoints as points
(``2 n_p + 1`` per phase), the trapezoid their ends (``n_p + 1``); a phase's last point and the next phase's first
are the same instant, two points joined by continuity rows. Quadrature per phase, ``∫_0^1 g ds ≈ Σ w_i g_i``:
Simpson's ``h_j/6 (1, 4, 1)`` per segment, or the trapezoid's ``h_j/2 (1, 1)`` (Kelly 2017, eqs. 3.3, 4.7).
"""

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Float
from . import methods as collocation


def widths(segments: int, grading: float) -> np.ndarray:
    r"""``(n,)`` segment widths in phase time, summing to one: geometric, ``h_j ∝ r^j`` with ``r`` = `grading`
    (``r > 1``: finer towards the phase's start, as after an impact; ``r = 1``: equal, ``h_j = 1/n``)."""
    if grading == 1.0:
        return np.full(segments, 1.0 / segments)
    h = float(grading) ** np.arange(segments)
    return h / h.sum()


def defects(method: str, x, f, h) -> Float[Array, "D s"]:
    r"""The collocation defects on segments of widths `h` (rows per segment: interpolation then Simpson, or the
    trapezoid's one); Kelly 2017, eqs. 4.4–4.5 and 3.5 with each segment's own ``h_j``,

    $$x_{j+½} - \tfrac12 (x_j + x_{j+1}) - \tfrac{h_j}{8} (f_j - f_{j+1}) = 0,\qquad
      x_{j+1} - x_j - \tfrac{h_j}{6} (f_j + 4 f_{j+½} + f_{j+1}) = 0.$$

    Equal widths are :func:`.methods.defects` with ``T = 1`` (the same operations)."""
    if np.all(h == h[0]):
        return collocation.defects(method, x, f, 1.0)
    h = jnp.asarray(h, x.dtype)[:, None]
    if method == "hermite-simpson":
        x0, xm, x1 = x[0:-1:2], x[1::2], x[2::2]
        f0, fm, f1 = f[0:-1:2], f[1::2], f[2::2]
        return jnp.concatenate([xm - 0.5 * (x0 + x1) - h / 8 * (f0 - f1), x1 - x0 - h / 6 * (f0 + 4 * fm + f1)])
    return x[1:] - x[:-1] - h / 2 * (f[:-1] + f[1:])


class Mesh(eqx.Module):
    """`segments` and `grading` per phase and the collocation `method` (static: the program's structure)."""

    method: str = eqx.field(static=True)
    segments: tuple[int, ...] = eqx.field(static=True)
    grading: tuple[float, ...] = eqx.field(static=True)

    def __check_init__(self):
        if self.method not in collocation.METHODS:
            raise ValueError(f"`method` must be one of {collocation.METHODS}, got {self.method!r}.")
        if len(self.grading) != len(self.segments):
            raise ValueError(f"`grading`: one ratio per phase ({len(self.segments)}), got {self.grading!r}.")

    @property
    def phases(self) -> int:
        return len(self.segments)

    @property
    def points(self) -> tuple[int, ...]:
        """Points per phase (midpoints included)."""
        return tuple(collocation.points(self.method, n) for n in self.segments)

    @property
    def offsets(self) -> tuple[int, ...]:
        """Each phase's first point (and the total number of points last)."""
        return tuple(int(o) for o in np.cumsum((0,) + self.points))

    def phase_of_points(self) -> np.ndarray:
        """``(G,)`` the phase of every point."""
        return np.repeat(np.arange(self.phases), self.points)

    def widths(self, phase: int) -> np.ndarray:
        """The segments' widths in phase time of `phase` (:func:`widths`)."""
        return widths(self.segments[phase], self.grading[phase])

    def times(self) -> np.ndarray:
        """``(G,)`` every point's phase time ``s ∈ [0, 1]`` (midpoints included), phase after phase."""
        out = []
        for p in range(self.phases):
            edges = np.concatenate([[0.0], np.cumsum(self.widths(p))])
            edges[-1] = 1.0
            if self.method == "hermite-simpson":
                mid = (edges[:-1] + edges[1:]) / 2
                edges = np.stack([edges[:-1], mid], axis=1).reshape(-1).tolist() + [1.0]
            out.append(np.asarray(edges))
        return np.concatenate(out)

    def weights(self) -> np.ndarray:
        """``(G,)`` the quadrature weights in phase time (module docstring), phase after phase."""
        out = []
        for p, n in enumerate(self.segments):
            h, w = self.widths(p), np.zeros(self.points[p])
            if self.method == "hermite-simpson":
                np.add.at(w, np.arange(0, 2 * n, 2), h / 6)
                np.add.at(w, np.arange(1, 2 * n, 2), 4 * h / 6)
                np.add.at(w, np.arange(2, 2 * n + 1, 2), h / 6)
            else:
                np.add.at(w, np.arange(n), h / 2)
                np.add.at(w, np.arange(1, n + 1), h / 2)
            out.append(w)
        return np.concatenate(out)

    def defects(self, phase: int, x, f) -> Float[Array, "D s"]:
        """The defects of `phase` from its points' states `x` and phase-time derivatives `f` (:func:`defects`)."""
        return defects(self.method, x, f, self.widths(phase))

    def resample(self, values: np.ndarray, old: "Mesh") -> np.ndarray:
        """``(G, c)`` columns `values` given at `old`'s points, interpolated linearly in phase time at this mesh's
        points, phase by phase. ``O(G)``."""
        s_old, s_new, out = old.times(), self.times(), []
        for p in range(self.phases):
            a, b = old.offsets[p:p + 2]
            c, d = self.offsets[p:p + 2]
            out.append(np.stack([np.interp(s_new[c:d], s_old[a:b], values[a:b, i])
                                 for i in range(values.shape[1])], axis=1))
        return np.concatenate(out)
