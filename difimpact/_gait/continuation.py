"""Continuation of periodic gaits in one parameter, with detection of period doubling, folds and the loss of
the trailing foot's lift-off, and switching to the period-2 branch at a period doubling."""

import dataclasses
from typing import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._models.walker import AbstractWalker
from .fixed_point import periodic_gait, stride_power
from .stability import eigenvalues
from .stride import GaitResults, StanceTolerances


@dataclasses.dataclass(frozen=True)
class BranchPoint:
    """One gait on a branch: the parameter `p`, the fixed point `x`, its `multipliers`, `step_time` (mean over
    the period), `step_length`, `speed`, `energy_loss` (mean per step), the trailing foot's smallest
    post-impact normal velocity `trailing_velocity`, each step's duration `step_times` and `kind`: ``"orbit"``, ``"period-doubling"``,
    ``"fold"`` or ``"lift-off"`` (the trailing foot stops lifting off)."""

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

    @property
    def rho(self) -> float:
        return float(np.max(np.abs(self.multipliers)))


@eqx.filter_jit
def _solve(make_walker, p, x0, period, options):
    """The gait at ``p`` from the guess ``x0``, ``∂P^p/∂x`` and ``∂P^p/∂p`` at it."""
    walker = make_walker(p)
    gait = periodic_gait(walker, x0, period=period, options=options)
    J = jax.jacfwd(lambda x: stride_power(walker, x, period, options=options))(gait.x)
    dPdp = jax.jacfwd(lambda q: stride_power(make_walker(q), gait.x, period, options=options))(p)
    return gait, J, dPdp


def _point(make_walker, p, x0, period, options, kind="orbit"):
    gait, J, dPdp = _solve(make_walker, jnp.asarray(p, float), jnp.asarray(x0), period, options)
    if gait.result != GaitResults.successful:
        return None, gait.result
    J = np.asarray(J)
    tangent = np.linalg.solve(np.eye(J.shape[0]) - J, np.asarray(dPdp))  # dx*/dp, implicit-function theorem
    s = gait.strides
    point = BranchPoint(float(p), np.asarray(gait.x), np.asarray(eigenvalues(jnp.asarray(J))),
                        float(gait.step_time), float(gait.step_length), float(gait.speed), float(gait.energy_loss),
                        float(jnp.min(s.trailing_velocity)), period, np.asarray(s.step_time), kind)
    return point, (J, tangent)


def _crossing(J, value):
    """``det(J − value I)``: changes sign when a real multiplier crosses `value`."""
    return float(np.linalg.det(J - value * np.eye(J.shape[0])))


def _bisect(make_walker, a, b, fa, test, period, options, steps):
    """Bisection in the parameter between branch points `a` and `b` for a sign change of ``test``."""
    lo, hi, x = a.p, b.p, a.x
    found = None
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        pt, aux = _point(make_walker, mid, x, period, options)
        if pt is None:
            hi = mid
            continue
        found, x = pt, pt.x
        lo, hi = (mid, hi) if np.sign(test(pt, aux)) == np.sign(fa) else (lo, mid)
    return found


def continue_gait(make_walker: Callable[[jax.Array], AbstractWalker], x0, p0: float, p1: float, *,
                  period: int = 1, step: float | None = None, min_step: float | None = None,
                  max_points: int = 200, bisections: int = 20, switch: bool = True,
                  options: StanceTolerances = StanceTolerances()) -> list[BranchPoint]:
    r"""Follow the periodic gait of ``make_walker(p)`` from ``p0`` toward ``p1``.

    Predictor: the implicit-function tangent ``dx*/dp = (I − ∂P/∂x)^{-1} ∂P/∂p``; corrector: Newton
    (:func:`periodic_gait`); step control: the step halves when the corrector fails (down to `min_step`) and
    grows by 1.5 after a success. Between consecutive points a sign change of ``det(∂P/∂x + I)`` (a multiplier
    through −1: period doubling), of ``det(∂P/∂x − I)`` (through +1: fold) or of the trailing foot's
    post-impact normal velocity (lift-off lost) is located by bisection and added as a point of that `kind`.
    With `switch`, a period doubling starts the period-2 branch from ``x ± ε v`` (``v`` the eigenvector of the
    multiplier −1), continued to ``p1`` and appended. Runs in Python around jitted solves (one compilation per
    `period`); eigenvectors and tangents use NumPy outside any ``vmap``.

    **Returns:** the branch points in order (the period-2 branch follows, its points with ``period = 2``).
    """
    step = (p1 - p0) / 20 if step is None else step
    min_step = abs(step) / 256 if min_step is None else min_step
    point, aux = _point(make_walker, p0, x0, period, options)
    if point is None:
        raise ValueError(f"no periodic gait at p0 = {p0} from the initial guess `x0`.")
    branch, h = [point], step
    direction = np.sign(p1 - p0)
    tests = {"period-doubling": lambda pt, a: _crossing(a[0], -1.0), "fold": lambda pt, a: _crossing(a[0], 1.0),
             "lift-off": lambda pt, a: pt.trailing_velocity}
    while len(branch) < max_points and direction * (p1 - point.p) > 1e-14:
        h = direction * min(abs(h), abs(p1 - point.p))
        new, new_aux = _point(make_walker, point.p + h, point.x + h * aux[1], period, options)
        if new is None:
            if abs(h) / 2 < min_step:
                # the corrector cannot pass: the trailing foot stays down, or a turning point of the branch
                stays = new_aux == GaitResults.trailing_foot_stays
                branch.append(dataclasses.replace(point, kind="lift-off" if stays else "fold"))
                break
            h /= 2
            continue
        for kind, test in tests.items():
            fa, fb = test(point, aux), test(new, new_aux)
            if np.sign(fa) != np.sign(fb):
                hit = _bisect(make_walker, point, new, fa, test, period, options, bisections)
                if hit is not None:
                    branch.append(dataclasses.replace(hit, kind=kind))
                    if kind == "period-doubling" and switch and period == 1:
                        p_start = hit.p + 0.25 * (new.p - hit.p)
                        branch += _switch(make_walker, hit, p_start, p1, bisections, options)
        branch.append(new)
        point, aux, h = new, new_aux, 1.5 * h
    return branch


def _switch(make_walker, pd: BranchPoint, p_start, p1, bisections, options):
    """The period-2 branch born at the period doubling `pd`, from ``x ± ε v`` at ``p_start``."""
    J, _ = _point(make_walker, pd.p, pd.x, 1, options)[1]
    lam, vecs = np.linalg.eig(J)
    v = np.real(vecs[:, np.argmin(np.abs(lam + 1))])
    for eps in (1e-2, 3e-2, -1e-2, -3e-2):
        start, _ = _point(make_walker, p_start, pd.x + eps * v, 2, options)
        if start is not None and np.max(np.abs(start.x - pd.x)) > 1e-4:  # not the period-1 gait again
            return continue_gait(make_walker, start.x, p_start, p1, period=2, switch=False,
                                 bisections=bisections, options=options)
    return []
