"""Impulsive impact with post-impact velocity constraints and energy decomposition.

The impulse–momentum equations ``M (q̇⁺ − q̇⁻) = Aᵀ λ̄`` with the post-impact constraints ``A q̇⁺ = b⁺``
(Ros et al. 2015, eqs. 4–5; Font & Kövecses 2008, eqs. 3, 8) are solved in KKT form, never through ``M⁻¹``, so that
massless segments (Font & Kövecses 2008's μ = 0 and μ_T = 0, where ``M`` is singular) are handled. The spaces of
constrained and admissible motion (Font & Kövecses 2008, eqs. 9–23; Ros et al. 2015, eqs. 13–26) are read off the same
factorisation.

This is the matrix-level primitive of the impulsive maps: it takes a mass matrix ``M`` and constraint rows, not
contacts. The impact of a model on the ground, which names its contacts by their points and builds the rows, is
:func:`~difimpact.impact`.
"""

from typing import Literal

import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Array, Float, MassMatrix, Velocity
from .._check import failed_check, program
from .._validation import as_float, flag, psd_matrix
from .kkt import NONFINITE, ImpactResults, ImpactSolution, solve_kkt


def _keep(massless: str) -> bool:
    if massless not in ("error", "keep"):
        raise ValueError(f"`massless` must be 'error' or 'keep', got {massless!r}.")
    return massless == "keep"


def _raise(sol: ImpactSolution, throw: bool) -> ImpactSolution:
    """Flag a non-finite solution of a successful solve (an overflow), then raise on any failure with `throw`."""
    finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(sol) if x.dtype != bool]))
    result = ImpactResults.where(finite | (sol.result != ImpactResults.successful), sol.result,
                                 ImpactResults.nonfinite)
    sol = eqx.tree_at(lambda s: s.result, sol, result)
    return failed_check(sol, sol.result, ImpactResults, NONFINITE) if flag("throw", throw) else sol


@program
def constrained_impact(
    M: MassMatrix,
    A: Float[Array, "m n"],
    qdot_minus: Velocity,
    b_plus: Float[Array, " m"] | None = None,
    *,
    massless: Literal["error", "keep"] = "error",
    throw: bool = True,
) -> ImpactSolution:
    r"""Impulsive impact with bilateral post-impact constraints ``A q̇⁺ = b⁺`` (Ros et al. 2015, eqs. 4–5, 21–22), on
    matrices: the primitive under :func:`~difimpact.impact`, which builds ``M`` and ``A`` from a model and its
    contacts' point names.

    Solves the KKT system

    $$\begin{bmatrix} M & -A^T \\ A & 0 \end{bmatrix}\begin{bmatrix}\dot q^+ \\ \bar\lambda\end{bmatrix}
      = \begin{bmatrix} M \dot q^- \\ b^+ \end{bmatrix}$$

    and, from the same factorisation, ``P_a`` (the map ``q̇ ↦ q̇⁺`` at ``b⁺ = 0``), ``P_c = I − P_a`` and
    ``ᵍP_cˡ`` (Font & Kövecses 2008, eqs. 9–10; Ros et al. 2015, eq. 20), which equal the ``M⁻¹`` formulas when ``M`` is
    regular.

    **Arguments:**

    - `M`: mass matrix ``(n, n)``, symmetric positive semi-definite (may be singular); checked (to ``√ε``).
    - `A`: constraint rows ``(m, n)``, full row rank.
    - `qdot_minus`: pre-impact velocities ``(n,)``.
    - `b_plus`: prescribed post-impact values ``(m,)`` (rheonomic constraints, partial blocking); zero by
      default (sticking contacts, total blocking).
    - `massless`: ``"error"`` (default) reports ``ImpactResults.undetermined`` when a massless coordinate is left
      free by the constraints; ``"keep"`` keeps the pre-impact value of those velocity components (the
      Euclidean-nearest of the equally valid solutions; impulses and energies do not depend on this choice;
      their derivative there depends on how the mass vanishes, which `M` does not say, so it raises).
    - `throw`: raise on a failed result (else return it in ``result``).

    **Returns:** an :class:`ImpactSolution`.
    """
    keep = _keep(massless)
    M = psd_matrix("M", M)
    n = M.shape[0]
    A = as_float("A", A)
    if A.ndim != 2 or A.shape[1] != n:
        raise ValueError(f"`A` must have shape (m, {n}), got {A.shape}.")
    qdot_minus = as_float("qdot_minus", qdot_minus, shape=(n,))
    b_plus = jnp.zeros(A.shape[0], M.dtype) if b_plus is None else as_float("b_plus", b_plus, shape=A.shape[:1])
    return _raise(solve_kkt(M, A, qdot_minus, b_plus, keep), throw)
