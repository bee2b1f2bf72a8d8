"""Test functions of :func:`~difimpact.continue_gait` (Kuznetsov 2004, *Elements of Applied Bifurcation Theory*,
§10.2) and the location of their zeros on the arc."""

import numpy as np


def _fold_test(node):
    """The tangent's parameter component: it changes sign at a fold (``det(I − ∂P/∂x)`` does too)."""
    return node.tangent[-1]


def _flip_test(node):
    """``det(∂P/∂x + I)``: changes sign when a real multiplier crosses −1 (period doubling)."""
    k = node.y.shape[0] - 1
    return np.linalg.det(node.jacobian[:, :k] + 2 * np.eye(k))


def _lift_off_test(node):
    """The trailing foot's post-impact normal velocity (positive while it lifts off)."""
    return node.point.trailing_velocity


_TESTS = {"fold": _fold_test, "period-doubling": _flip_test, "lift-off": _lift_off_test}


def _locate(branch, a, s_b, f_a, f_b, test, steps):
    """The zero of ``test`` between `a` (arclength 0) and arclength `s_b` along `a`'s tangent, by the Illinois
    variant of regula falsi (bisection where the corrector fails or `f_b` is unknown: ``None``); the last
    point found, or `None`."""
    lo, hi, f_lo, f_hi, found, side = 0.0, s_b, f_a, f_b, None, 0
    for _ in range(steps):
        s = 0.5 * (lo + hi) if f_hi is None else (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        node = branch.along(a, s)
        if node is None:  # beyond the end of the branch: on `b`'s side
            hi, f_hi = s, None
            continue
        found, f = node, test(node)
        if f == 0:
            break
        if np.sign(f) == np.sign(f_lo):
            lo, f_lo = s, f
            if side == 1 and f_hi is not None:
                f_hi /= 2
            side = 1
        else:
            hi, f_hi = s, f
            if side == -1:
                f_lo /= 2
            side = -1
    return found
