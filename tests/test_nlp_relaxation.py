"""Problems without a strict interior: a variable that an equality fixes at its own bound. The barrier problem then
has no interior point, the fraction-to-the-boundary rule cuts that variable's slack a hundredfold each iteration,
its barrier weight grows without end and the iterations stall; IPOPT's relaxation of the bounds
(``bound_relax_factor``; Wächter & Biegler 2006, §3.5) gives it an interior, and the solution is projected back
onto the original bounds. Dense and banded Newton matrices, and without the relaxation (the default) the failure
it prevents."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact._nlp.sparsity import Sparsity

N = 12


def _objective(x, p):
    return jnp.sum((x - p) ** 2) + jnp.sum(jnp.diff(x) ** 2)


def _equality(x, p):
    return jnp.stack([x[0], x[-1] - 0.5 * x[-2]])  # x₀ = 0 = its lower bound


def _sparsity():
    jac = np.zeros((2, N), bool)
    jac[0, 0] = jac[1, -2:] = True
    hess = np.eye(N, dtype=bool) | np.eye(N, k=1, dtype=bool) | np.eye(N, k=-1, dtype=bool)
    return Sparsity(np.arange(N) % 2, jac, np.arange(N) % 3, hess, np.zeros(N, bool))


def _reference():
    """The equality-constrained quadratic's solution by its KKT system (the bound is inactive but for x₀)."""
    H = 2 * (np.eye(N) + np.diff(np.eye(N), axis=0).T @ np.diff(np.eye(N), axis=0))
    A = np.zeros((2, N))
    A[0, 0], A[1, -1], A[1, -2] = 1.0, 1.0, -0.5
    K = np.block([[H, A.T], [A, np.zeros((2, 2))]])
    return np.linalg.solve(K, np.concatenate([2 * np.ones(N), np.zeros(2)]))[:N]


@pytest.mark.parametrize("sparsity", [None, _sparsity()], ids=["dense", "banded"])
def test_variable_fixed_at_its_bound(sparsity):
    solve = jax.jit(lambda p, relax: di.solve_nlp(
        _objective, jnp.full(N, 0.5), p, equality=_equality, lower=jnp.zeros(N), sparsity=sparsity,
        options=di.NLPOptions(bound_relax_factor=relax), throw=False))
    sol = solve(1.0, 1e-8)
    assert int(sol.result._value) == 0, sol.result
    np.testing.assert_allclose(sol.x, _reference(), atol=1e-7)
    assert 0.0 <= float(sol.x[0]) < 1e-12  # on the original bound, not below it
    failed = solve(1.0, 0.0)  # no strict interior: the slack of x₀ is cut a hundredfold per iteration
    assert int(failed.result._value) != 0 and float(failed.x[0]) < 1e-8
