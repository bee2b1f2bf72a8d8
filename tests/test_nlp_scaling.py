"""IPOPT's gradient-based scaling of the constraints (``nlp_scaling_method = gradient-based``; Wächter & Biegler
2006, §3.8): a row whose gradient at the start is steep (a constraint written in small units, ×10⁸) is scaled
down to ``max_gradient``, so that the optimality error, the filter's ``θ`` and the line search see rows of one
size. Unscaled, ``tol`` asks that row's residual be 10⁻⁹ in its own units, near its rounding (10⁸ ε), and its
multiplier is so small that the dual residual of a slack says little: the iterations take longer (22 against 12;
they ended at the iteration limit away from the solution while the curvature test refused steps of tiny positive
curvature, issue 49). The multipliers and the violation are reported in the problem's own units."""

import jax.numpy as jnp
import numpy as np

import difimpact as di

BIG = 1e8
A = np.array([1.0, 2.0, 0.0])


def _objective(x, p):
    return jnp.sum((x - A) ** 2)


def _equality(x, p):
    return BIG * (x @ x - 2.0)  # on the sphere |x|² = 2, in units 10⁻⁸


def _inequality(x, p):
    return BIG * (x[0] + x[2])  # x₀ + x₂ ≥ 0 (inactive at the solution), in units 10⁻⁸


def _solve(scale_constraints):
    options = di.NLPOptions(scale_constraints=scale_constraints, max_steps=60)
    return di.solve_nlp(_objective, jnp.array([0.3, 0.4, 0.1]), equality=_equality, inequality=_inequality,
                        options=options, throw=False)


def test_scaled_rows_converge():
    """The point of the sphere nearest ``a = (1, 2, 0)``, ``x = √2 a/|a|``, with ``∇f + λ_c ∇c = 0``:
    ``λ_c = (|a|/√2 − 1) / 10⁸`` in the row's own units, and ``λ_d = 0``."""
    sol = _solve(True)
    assert sol.result == di.NLPResults.successful
    np.testing.assert_allclose(sol.x, np.sqrt(2) * A / np.linalg.norm(A), atol=1e-8)
    np.testing.assert_allclose(sol.multipliers, [(np.sqrt(2.5) - 1) / BIG, 0.0], rtol=1e-6, atol=1e-15)
    assert float(sol.constraint_violation) <= 1e-6  # in the row's own units: |x|² − 2 to 10⁻¹⁴


def test_unscaled_rows_take_longer():
    scaled, unscaled = _solve(True), _solve(False)
    assert unscaled.result == di.NLPResults.successful
    np.testing.assert_allclose(unscaled.x, scaled.x, atol=1e-8)
    assert int(unscaled.iterations) > int(scaled.iterations)
