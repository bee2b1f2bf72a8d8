r"""The Newton system of the interior-point method with the inequalities' slacks eliminated.

With variables ``y = (x, s)``, constraints ``h = (c(x), d(x) − s)`` and barrier weights ``Σ = (Σ_x, Σ_s)``, the
primal-dual system (Wächter & Biegler 2006, eq. 13)

$$\begin{bmatrix} W + Σ_x + δ_w & 0 & J_c^T & J_d^T \\ 0 & Σ_s + δ_w & 0 & -I \\ J_c & 0 & -δ_c & 0 \\
  J_d & -I & 0 & -δ_c \end{bmatrix}\begin{bmatrix} d_x \\ d_s \\ λ_c \\ λ_d \end{bmatrix}
  = \begin{bmatrix} r_x \\ r_s \\ r_c \\ r_d \end{bmatrix}$$

is reduced, with ``D = Σ_s + δ_w`` and $E = (D^{-1} + \delta_c)^{-1}$ (diagonal), to

$$\begin{bmatrix} W + Σ_x + δ_w + J_d^T E J_d & J_c^T \\ J_c & -δ_c \end{bmatrix}
  \begin{bmatrix} d_x \\ λ_c \end{bmatrix} = \begin{bmatrix} r_x + J_d^T E (D^{-1} r_s + r_d) \\ r_c
  \end{bmatrix},\quad λ_d = E (J_d d_x - D^{-1} r_s - r_d),\quad d_s = D^{-1}(r_s + λ_d),$$

one factorisation of size ``n + m_c`` whatever the number of inequalities: banded (:mod:`.banded`) where the
problem's sparsity makes it so, dense (:mod:`.dense`) otherwise.
"""

import functools

import equinox as eqx
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Bool, Float
from . import banded, inertia
from .dense import LU, lu_factor, lu_solve
from .sparsity import Sparsity


@functools.cache
def structure(sparsity: Sparsity | None, mc: int) -> banded.BandedStructure | None:
    """The banded ordering of the reduced matrix's pattern, or ``None`` (dense) where there is no sparsity or
    the band would be wider than a third of the matrix (a dense row: a free final time)."""
    if sparsity is None:
        return None
    Jp = sparsity.jacobian_pattern
    Jc, Jd = Jp[:mc].astype(int), Jp[mc:].astype(int)
    A = sparsity.hessian_pattern | ((Jd.T @ Jd) > 0) | np.eye(Jp.shape[1], dtype=bool)
    K = np.block([[A, Jc.T > 0], [Jc > 0, np.eye(mc, dtype=bool)]])
    s = banded.BandedStructure.of(K)
    return s if 3 * (s.lower + s.upper) < K.shape[0] else None


class Reduced(eqx.Module):
    """The factors of the reduced system and what the back-substitution needs."""

    lu: LU | banded.BandedLU
    Jd: Float[Array, "md n"]
    E: Float[Array, " md"]
    D: Float[Array, " md"]
    inertia: Bool[Array, ""]
    band: banded.BandedStructure | None = eqx.field(static=True)


def matrix(W, Jc, Jd, sigma_x, sigma_s, delta_w, delta_c):
    """The reduced matrix and ``(D, E)``."""
    D = sigma_s + delta_w
    E = 1.0 / (1.0 / D + delta_c)
    A = W + jnp.diag(sigma_x + delta_w) + Jd.T @ (E[:, None] * Jd)
    mc = Jc.shape[0]
    K = jnp.block([[A, Jc.T], [Jc, -delta_c * jnp.eye(mc, dtype=W.dtype)]])
    return K, D, E


def factor(W, Jc, Jd, sigma_x, sigma_s, delta_w, delta_c, band: banded.BandedStructure | None = None,
           test_inertia: bool = False) -> Reduced:
    """The factors; with `test_inertia`, also whether the matrix has the inertia ``(n, m_c, 0)`` that IPOPT's
    inertia correction asks for (:mod:`.inertia`; else ``True``)."""
    K, D, E = matrix(W, Jc, Jd, sigma_x, sigma_s, delta_w, delta_c)
    lu = lu_factor(K) if band is None else banded.factor(band, banded.to_band(band, K))
    n = W.shape[0]
    if not test_inertia:
        ok = jnp.asarray(True)
    elif band is None:
        ok = inertia.dense(K[:n, :n], Jc, W)
    else:
        ok = inertia.band(band, K[:n, :n], Jc, W)
    return Reduced(lu, Jd, E, D, ok, band)


def solve(R: Reduced, rx, rs, rc, rd):
    """``(d_x, d_s, λ_c, λ_d)`` of the full system from the reduced factors."""
    n = rx.shape[0]
    top = rx + R.Jd.T @ (R.E * (rs / R.D + rd))
    rhs = jnp.concatenate([top, rc])
    sol = lu_solve(R.lu, rhs) if R.band is None else banded.solve(R.band, R.lu, rhs)
    dx, lam_c = sol[:n], sol[n:]
    lam_d = R.E * (R.Jd @ dx - rs / R.D - rd)
    ds = (rs + lam_d) / R.D
    return dx, ds, lam_c, lam_d
