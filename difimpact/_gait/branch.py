"""What :func:`~difimpact.continue_gait` returns: the points of a branch of periodic gaits and how it ended."""

import dataclasses

import numpy as np

from .stride import GaitResults


@dataclasses.dataclass(frozen=True)
class BranchPoint:
    """One gait on a branch: the parameter `p`, the fixed point `x`, its `multipliers`, `step_time` (mean over
    the period), `step_length`, `speed`, `energy_loss` (mean per step), the trailing foot's smallest
    post-impact normal velocity `trailing_velocity`, each step's duration `step_times`, `kind`: ``"orbit"``,
    ``"period-doubling"`` (a multiplier at −1), ``"fold"`` (a multiplier at +1, the branch turns back in `p`)
    or ``"lift-off"`` (the trailing foot stops lifting off: the branch ends), and `states`, the section state at
    the start of each step (``(period, k)``, the first row is `x`)."""

    p: float
    x: np.ndarray
    multipliers: np.ndarray
    step_time: float
    step_length: float
    speed: float
    energy_loss: float
    trailing_velocity: float
    period: int
    step_times: np.ndarray
    kind: str = "orbit"
    states: np.ndarray | None = None

    @property
    def rho(self) -> float:
        return float(np.max(np.abs(self.multipliers)))


class GaitBranch(list):
    """The :class:`BranchPoint` s of :func:`~difimpact.continue_gait` in arclength order (a ``list``), each
    period-2 branch after the branch it was born on, and the `result` of the continuation: ``successful``, or
    the first failure met (the points before it are kept)."""

    def __init__(self, points=(), result: GaitResults = GaitResults.successful):
        super().__init__(points)
        self.result = result


def first_failure(*results: GaitResults) -> GaitResults:
    """The first of `results` that is not ``successful`` (``successful`` if none)."""
    return next((r for r in results if r != GaitResults.successful), GaitResults.successful)
