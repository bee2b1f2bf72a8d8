r"""Direct collocation of one step: the grid, the defects and the quadrature of a running cost.

Hermite–Simpson in separated form (Kelly 2017, §4.2 and eqs. 4.4–4.5; OptimTraj ``hermiteSimpson.m``): the
states and controls at the ``2N + 1`` points of ``N`` segments (the midpoints included) are variables, and with
``h = T/N`` each segment ``k`` has the interpolation and Simpson defects

$$x_{k+½} - \tfrac12 (x_k + x_{k+1}) - \tfrac{h}{8} (f_k - f_{k+1}) = 0,\qquad
  x_{k+1} - x_k - \tfrac{h}{6} (f_k + 4 f_{k+½} + f_{k+1}) = 0;$$

the running cost is Simpson's rule with the same points. Trapezoid (Kelly 2017, §3): ``N + 1`` points,
``x_{k+1} - x_k - \tfrac{h}{2}(f_k + f_{k+1}) = 0`` and the trapezoid rule.
"""

import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Float

METHODS = ("hermite-simpson", "trapezoid")


def check_method(method: str, segments) -> None:
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}, got {method!r}.")
    if isinstance(segments, bool) or not isinstance(segments, (int, np.integer)) or segments < 1:
        raise ValueError(f"`segments` must be a positive integer, got {segments!r}.")


def points(method: str, segments: int) -> int:
    """Number of grid points (midpoints included)."""
    return 2 * segments + 1 if method == "hermite-simpson" else segments + 1


def weights(method: str, segments: int) -> np.ndarray:
    """Quadrature weights ``w`` with $\\int_0^T g dt \\approx  T \\Sigma  w_i g_i$."""
    if method == "hermite-simpson":
        w = np.full(2 * segments + 1, 2.0)
        w[1::2] = 4.0
        w[[0, -1]] = 1.0
        return w / (6.0 * segments)
    w = np.full(segments + 1, 1.0)
    w[[0, -1]] = 0.5
    return w / segments


def times(method: str, segments: int, T) -> Float[Array, " G"]:
    return T * jnp.linspace(0.0, 1.0, points(method, segments))


def defects(method: str, x: Float[Array, "G s"], f: Float[Array, "G s"], T) -> Float[Array, "D s"]:
    """The collocation defects (rows per segment: interpolation then Simpson, or the trapezoid's one)."""
    if method == "hermite-simpson":
        N = (x.shape[0] - 1) // 2
        h = T / N
        x0, xm, x1 = x[0:-1:2], x[1::2], x[2::2]
        f0, fm, f1 = f[0:-1:2], f[1::2], f[2::2]
        interpolation = xm - 0.5 * (x0 + x1) - h / 8 * (f0 - f1)
        simpson = x1 - x0 - h / 6 * (f0 + 4 * fm + f1)
        return jnp.concatenate([interpolation, simpson], axis=0)
    h = T / (x.shape[0] - 1)
    return x[1:] - x[:-1] - h / 2 * (f[:-1] + f[1:])


def interpolate(method: str, t_grid, x, f, u, t) -> tuple[Float[Array, " s"], Float[Array, " k"]]:
    """State and control at time ``t`` from the collocation solution: Hermite–Simpson's cubic state and quadratic
    control per segment (Kelly 2017, eqs. 4.8, 4.10), or the trapezoid's quadratic state and linear control
    (eqs. 3.8–3.9)."""
    T = t_grid[-1]
    if method == "hermite-simpson":
        N = (x.shape[0] - 1) // 2
        h = T / N
        k = jnp.clip(jnp.floor(t / h).astype(int), 0, N - 1)
        tau = t - k * h
        i0, im, i1 = 2 * k, 2 * k + 1, 2 * k + 2
        s = tau / h
        u_t = (2 * (s - 0.5) * (s - 1)) * u[i0] - 4 * s * (s - 1) * u[im] + 2 * s * (s - 0.5) * u[i1]
        f0, fm, f1 = f[i0], f[im], f[i1]
        x_t = (x[i0] + f0 * tau + 0.5 * (-3 * f0 + 4 * fm - f1) * tau**2 / h
               + (2 * f0 - 4 * fm + 2 * f1) * tau**3 / (3 * h**2))
        return x_t, u_t
    N = x.shape[0] - 1
    h = T / N
    k = jnp.clip(jnp.floor(t / h).astype(int), 0, N - 1)
    tau = t - k * h
    u_t = u[k] + tau / h * (u[k + 1] - u[k])
    x_t = x[k] + f[k] * tau + tau**2 / (2 * h) * (f[k + 1] - f[k])
    return x_t, u_t
