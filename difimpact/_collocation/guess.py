"""Start vectors for a multi-phase gait: from a solved gait of the same layout on another mesh (resampled in phase
time), or of another layout (retimed: interpolated in time over new phase durations)."""

import numpy as np

from .._validation import as_float
from .multiphase import MultiPhaseProblem, resample


def _solved(guess) -> bool:
    return isinstance(getattr(guess, "problem", None), MultiPhaseProblem) and hasattr(guess, "solution")


def retime(gait, problem: MultiPhaseProblem, durations=None) -> np.ndarray:
    """A start vector for `problem` from `gait` (a solved multi-phase gait of the same model, any layout): the
    new phases last `durations` [s] (default: a phase of the same name keeps its duration, the others share the
    rest, all scaled to `gait`'s step time), every state and torque interpolated linearly in time since the
    step began, the effort so far too. ``O(G)``."""
    old = gait.problem
    if old.layout != problem.layout:
        raise ValueError("`guess`: a gait of another model (other coordinates or torques) cannot start this one.")
    L = problem.layout
    Z_old = np.asarray(gait.solution.x).reshape(-1, L.block)
    t_old, T = Z_old[:, L.t], float(Z_old[-1, L.t])
    names = [ph.name for ph in problem.gait.phases]
    if durations is None:
        kept = {ph.name: Z_old[o, L.tau] for ph, o in zip(old.gait.phases, old.offsets[:-1])}
        d = np.array([kept.get(n, np.nan) for n in names], float)
        rest = max(T - np.nansum(d), 0.0)
        d[np.isnan(d)] = rest / max(np.isnan(d).sum(), 1) if rest > 0 else T / len(names)
        d *= T / d.sum()
    else:
        d = np.asarray(as_float("durations", durations, shape=(len(names),)), float)
    s, phase = problem.times(), problem.mesh.phase_of_points()
    t_new = np.concatenate([[0.0], np.cumsum(d)])[phase] + d[phase] * s
    tu, inverse = np.unique(t_old, return_inverse=True)
    Zu = np.stack([Z_old[inverse == i].mean(axis=0) for i in range(tu.size)])
    Z = np.stack([np.interp(t_new, tu, Zu[:, i]) for i in range(L.block)], axis=1)
    Z[:, L.t], Z[:, L.tau] = t_new, d[phase]
    return Z.reshape(-1)


def start(problem: MultiPhaseProblem, guess):
    """`guess` as a start vector for `problem`: a flat vector as given; a solved gait of the same layout and mesh
    its optimum, of the same layout on another mesh resampled, of another layout retimed (:func:`retime`)."""
    if not _solved(guess):
        return as_float("guess", guess)  # traced where the caller's jit traces it
    old = guess.problem
    if old.gait == problem.gait and old.layout == problem.layout:
        x = np.asarray(guess.solution.x)
        return x if old.mesh == problem.mesh else resample(problem, old, x)
    return retime(guess, problem)
