r"""Feasibility restoration and the least-squares multipliers of the interior-point method
(Wächter & Biegler 2006, §3.3 and §3.6).

Where the filter line search finds no acceptable step while the constraints are violated, the iterations switch
to restoration: each one solves the Newton system of the minimum-distance step to the linearised constraints,

$$\min_d\ \tfrac12 d^T (Σ + ζ I) d + ∇φ_μ^{\text{bounds}}(y)^T d \quad\text{s.t.}\quad ∇h(y)\, d = -h(y),
  \qquad ζ = \sqrt{μ},$$

(IPOPT's restoration problem, eq. 30, with its proximity weight ``ζ = √μ`` and the bounds' barrier, but
without the elastic variables: a Gauss–Newton step on ``‖h‖``), the objective dropped, and accepts by backtracking
on ``θ = ‖h‖_1`` alone (in the line search's loop, :func:`.filter.search`). Restoration returns to the normal
iterations at the first point that has ``θ`` at most ``κ_resto = 0.9`` times its value where restoration began
and that the filter (augmented with that point) accepts (§3.3); it fails, and the solve ends as locally
infeasible, where ``θ`` cannot be decreased. The multipliers ``λ`` are kept through restoration. The barrier
parameter is not changed while restoring.

The least-squares multipliers start the iterations (eq. 36):

$$\begin{bmatrix} I & ∇h^T \\ ∇h & 0 \end{bmatrix}\begin{bmatrix} w \\ λ \end{bmatrix}
  = -\begin{bmatrix} ∇f - z_L + z_U \\ 0 \end{bmatrix},$$

discarded (``λ = 0``) where ``max |λ|`` exceeds ``λ_max = 10^3`` (IPOPT's ``constr_mult_init_max``) or is not
finite.
"""

import jax.numpy as jnp

KAPPA_RESTO = 0.9
LAMBDA_MAX = 1e3


def least_squares_multipliers(solve_step, g, zl, zu, h):
    """``λ`` of eq. 36 by `solve_step(rhs)` (the Newton system with ``W = 0``, ``Σ = I``, no regularisation)."""
    _, lam = solve_step(-jnp.concatenate([g - zl + zu, jnp.zeros_like(h)]))
    ok = jnp.all(jnp.isfinite(lam)) & (jnp.max(jnp.abs(lam), initial=0.0) <= LAMBDA_MAX)
    return jnp.where(ok, lam, 0.0)
