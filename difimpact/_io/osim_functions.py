"""OpenSim's functions of a coordinate (``Constant``, ``LinearFunction``, ``MultiplierFunction``, ``SimmSpline``,
``NaturalCubicSpline``, ``PiecewiseLinearFunction``), as the ``.osim`` reader evaluates them."""

import numpy as np

from .source import floats, scalar


def _vec(element, tag, where: str) -> np.ndarray:
    found = element.find(tag)
    return floats(None if found is None else found.text, None, f"{where} <{tag}>", default=())


def simm_spline(x, y, at: float) -> float:
    """The cubic spline of OpenSim's ``SimmSpline`` at `at`: end conditions matching the third derivatives of
    the cubics through the first and the last four points (Forsythe, Malcolm & Moler 1977, ``spline``), linear
    beyond the ends with the end slopes."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = len(x)
    if n < 4:
        return float(np.interp(at, x, y)) if n < 3 else float(np.polyval(np.polyfit(x, y, 2), at))
    h, slope = np.diff(x), np.diff(y) / np.diff(x)
    A, rhs = np.zeros((n, n)), np.zeros(n)
    for i in range(1, n - 1):  # continuity of the first derivative; unknowns σ_i = s''(x_i) / 6
        A[i, i - 1:i + 2] = h[i - 1], 2 * (h[i - 1] + h[i]), h[i]
        rhs[i] = slope[i] - slope[i - 1]
    third = lambda xs, ys: np.polyfit(xs, ys, 3)[0]  # noqa: E731  (s''' / 6 of the cubic through 4 points)
    A[0, :2], rhs[0] = (-h[0], h[0]), h[0] ** 2 * third(x[:4], y[:4])
    A[-1, -2:], rhs[-1] = (h[-1], -h[-1]), -h[-1] ** 2 * third(x[-4:], y[-4:])
    sigma = np.linalg.solve(A, rhs)
    b = slope - h * (sigma[1:] + 2 * sigma[:-1])
    if at <= x[0] or at >= x[-1]:
        end_slope = b[0] if at <= x[0] else slope[-1] + h[-1] * (sigma[-2] + 2 * sigma[-1])
        k = 0 if at <= x[0] else n - 1
        return float(y[k] + (at - x[k]) * end_slope)
    k = int(np.searchsorted(x, at) - 1)
    dx = at - x[k]
    return float(y[k] + dx * (b[k] + dx * (3 * sigma[k] + dx * (sigma[k + 1] - sigma[k]) / h[k])))


def function(element, joint: str):
    """An OpenSim function of one coordinate as ``(f, slope)``: ``slope`` is its constant derivative for a linear
    function, ``None`` otherwise."""
    kind, where = element.tag, f"joint {joint!r}: <{element.tag}>"
    if kind == "Constant":
        value = scalar(element.findtext("value"), f"{where} <value>")
        return (lambda q: value), 0.0
    if kind == "LinearFunction":
        a, b = floats(element.findtext("coefficients"), 2, f"{where} <coefficients>")
        return (lambda q: a * q + b), a
    if kind == "MultiplierFunction":
        inner = element.find("function")
        if inner is None or not len(inner):
            raise ValueError(f"{where} has no <function>.")
        inner, slope = function(inner[0], joint)
        scale = scalar(element.findtext("scale"), f"{where} <scale>", default=1.0)
        return (lambda q: scale * inner(q)), None if slope is None else scale * slope
    if kind in ("SimmSpline", "NaturalCubicSpline", "PiecewiseLinearFunction"):
        x, y = _vec(element, "x", where), _vec(element, "y", where)
        if len(x) != len(y) or len(x) < 2 or np.any(np.diff(x) <= 0):
            raise ValueError(f"{where} needs increasing <x> and as many <y>, two or more.")
        if kind == "PiecewiseLinearFunction":
            return (lambda q: float(np.interp(q, x, y))), None
        return (lambda q: simm_spline(x, y, q)), None
    raise ValueError(f"joint {joint!r}: OpenSim function {kind} is not supported.")
