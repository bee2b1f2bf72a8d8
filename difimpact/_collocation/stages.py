r"""The derivatives' structure of a transcription, from its layout: which stages (collocation points) each row
meets, in linear time.

The variables of a transcribed optimal-control problem sit in stages: every collocation point holds a block of
``b`` variables (its states and controls), and a few global variables (a free step time) come last. A row of the
constraints meets the points of its segment, of a phase boundary or of the step's ends, and the globals it
names. From that list alone this module builds, by their nonzeros (``O(nnz)``, no dense ``m × n`` or ``n × n``
array):

- the Jacobian's pattern and a column colouring: the points cycle through `groups` colour blocks (rows meet at
  most `groups` consecutive points; Curtis, Powell & Reid 1974), the last point (which meets the first in the
  periodicity rows) and each global take their own;
- the Hessian of the Lagrangian's pattern: a block per point, plus the dense rows and columns of the variables
  that enter nonlinearly with all others (a free duration, a free step length in a normalised cost);
- the Newton matrix's border (:mod:`difimpact._nlp.bordered`): the first point's variables and the periodicity
  rows that close the ring.
"""

import numpy as np

from .._nlp.matrix import Pattern
from .._nlp.sparsity import Sparsity


class StageRows:
    """The constraint rows of a transcription as the points (and global variables) each one meets, appended in
    the order of the problem's `equality` then `inequality` rows.

    `columns` ``(G, b)``: the variable indices of every point's block; `size`: the number of variables."""

    def __init__(self, columns: np.ndarray, size: int):
        self.columns, self.size = np.asarray(columns, int), int(size)
        self._rows: list[np.ndarray] = []

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, points, globals_=(), count: int = 1) -> None:
        """`count` rows meeting the blocks of `points` and the variables `globals_`."""
        cols = np.concatenate([self.columns[list(points)].reshape(-1), np.asarray(globals_, int)])
        self._rows.extend([cols] * count)

    def pattern(self) -> Pattern:
        return Pattern(np.repeat(np.arange(len(self._rows)), [r.size for r in self._rows]),
                       np.concatenate(self._rows), (len(self._rows), self.size))


def point_stages(points_per_phase, hermite_simpson: bool) -> np.ndarray:
    """Each point's stage: a mesh point opens one, a Hermite–Simpson midpoint joins its segment's first point, and
    each phase's first point opens one (the rows of a segment or of a phase boundary then meet two consecutive
    stages)."""
    local = np.concatenate([np.arange(int(k)) for k in points_per_phase])
    step = local // 2 if hermite_simpson else local
    opens = np.concatenate([[True], np.diff(step) != 0]) | (local == 0)
    return np.cumsum(opens) - 1


def stage_sparsity(rows: StageRows, *, groups: int, globals_=(), dense=(), border_equalities=(),
                   point_stages=None) -> Sparsity:
    """The :class:`~difimpact._nlp.sparsity.Sparsity` of a transcription whose rows are `rows` (module
    docstring): consecutive points in `groups` colour blocks, the last point and each of `globals_` apart; the
    Hessian block diagonal per point but for the `dense` variables (`globals_` among them where they enter
    nonlinearly); the border the first point and `border_equalities`; `point_stages`, where given, each point's
    stage (:class:`~difimpact._nlp.sparsity.Sparsity`'s `stages`, the globals ``−1``). ``O(nnz)``."""
    cols, n = rows.columns, rows.size
    G, b = cols.shape
    jc = np.zeros(n, int)
    jc[cols[:G - 1]] = (np.arange(G - 1) % groups)[:, None] * b + np.arange(b)
    jc[cols[G - 1]] = groups * b + np.arange(b)
    for i, g in enumerate(np.asarray(globals_, int)):
        jc[g] = (groups + 1 + i) * b
    heavy = np.asarray(dense, int)
    flags = np.zeros(n, bool)
    flags[heavy] = True
    heavy = np.flatnonzero(flags)
    every = np.arange(n)
    hr = [np.repeat(cols, b, axis=1).reshape(-1), np.repeat(heavy, n), np.tile(every, heavy.size)]
    hc = [np.tile(cols, (1, b)).reshape(-1), np.tile(every, heavy.size), np.repeat(heavy, n)]
    hessian = Pattern(np.concatenate(hr), np.concatenate(hc), (n, n))
    colours = np.zeros(n, int)
    colours[cols] = np.arange(b)
    colours[flags] = b + np.arange(flags.sum())
    stages = None
    if point_stages is not None:
        stages = np.full(n, -1, np.int64)
        stages[cols] = np.asarray(point_stages, np.int64)[:, None]
    return Sparsity(jc, rows.pattern(), colours, hessian, flags, border_variables=cols[0],
                    border_equalities=border_equalities, stages=stages)
