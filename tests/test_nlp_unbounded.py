"""Unbounded problems end as `NLPResults.unbounded` within the default `max_steps` (issue 49), and bounded problems
with a minimiser far away are solved, never flagged.

Along a direction where the objective is linear (``min −x``, ``x ≥ 0``; a linear program without a bound on a
ray) the Newton step is as long as the model's curvature allows: the barrier's ``Σ`` alone, or ``δ_w`` where the
matrix is singular. The curvature test once demanded ``d ᵀ(W + Σ + δ_w) d ≥ 10⁻¹⁰ dᵀd`` of every step, which held
the steps to about ``‖∇f‖ / 10⁻¹⁰`` an iteration (``x = 1.2·10¹²`` after 300 iterations, never ``10²⁰``); and for a
linear program the inertia test's rounding held ``δ_w`` near ``10⁻¹⁰`` in the null space of the equalities. Each
family below is one ``jax.jit(jax.vmap(...))`` (one program)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di

MAX_STEPS = di.NLPOptions().max_steps


def _one(x, p):
    """``a x + b e⁻ˣ + c x²`` on ``x ≥ 0``."""
    return p[0] * x[0] + p[1] * jnp.exp(-x[0]) + p[2] * x[0] ** 2


def _solve_one(params):
    solve = jax.jit(jax.vmap(lambda p: di.solve_nlp(_one, jnp.ones(1), p, lower=0.0, throw=False)))
    return solve(jnp.asarray(params))


def _assert_unbounded(sol, members):
    assert np.all(np.asarray(sol.result._value)[members] == di.NLPResults.unbounded._value), di.failures(sol.result)
    assert np.all(np.asarray(sol.iterations)[members] < MAX_STEPS)
    assert np.all(np.max(np.abs(np.asarray(sol.x)[members]), axis=-1) > di.NLPOptions().diverging_iterates_tol)
    assert np.all(np.isfinite(sol.x)) and np.all(np.isfinite(sol.value))


def test_bounded_below_by_a_bound_alone_is_unbounded():
    """``min −x`` on ``x ≥ 0`` (the issue's case: the iteration limit at ``x = 1.2·10¹²`` before) and
    ``min e⁻ˣ − 10⁻³ x`` (convex, flat at infinity) end unbounded in a few iterations; ``min −x + 10⁻¹² x²``
    (``x* = 5·10¹¹``, further than 300 of the old steps reached) and ``min x² − 2x`` (``x* = 1``) are solved."""
    sol = _solve_one([[-1.0, 0.0, 0.0], [-1e-3, 1.0, 0.0], [-1.0, 0.0, 1e-12], [-2.0, 0.0, 1.0]])
    _assert_unbounded(sol, [0, 1])
    assert [i for i, _ in di.failures(sol.result)] == [0, 1]
    np.testing.assert_allclose(sol.x[2:, 0], [5e11, 1.0], rtol=1e-9)


def test_float32_unbounded():
    """``min −x`` on ``x ≥ 0`` in float32 (one solve: ``x²`` of a batch's other members overflows there)."""
    sol = jax.jit(lambda: di.solve_nlp(lambda x, p: -x[0], jnp.ones(1, jnp.float32), None, lower=0.0,
                                       throw=False))()
    assert sol.x.dtype == jnp.float32
    _assert_unbounded(jax.tree.map(lambda a: a[None], sol), [0])


def test_free_variable_is_unbounded():
    """``min −x`` without bounds: the Newton matrix is zero, ``δ_w`` alone makes the step, and falls by 3 an
    iteration as IPOPT's does."""
    sol = jax.jit(lambda: di.solve_nlp(lambda x, p: -x[0], jnp.ones(1), None, throw=False))()
    _assert_unbounded(jax.tree.map(lambda a: a[None], sol), [0])


def _two(x, p):
    """``a (x₀ + x₁) + c (x₀² + x₁²)`` with ``x₀ − x₁ = 1``: a ray in the null space of the equality."""
    return p[0] * (x[0] + x[1]) + p[1] * (x[0] ** 2 + x[1] ** 2)


def test_ray_in_the_null_space_of_the_equalities():
    """``min −x₀ − x₁`` with ``x₀ − x₁ = 1`` (a linear program unbounded along ``(1, 1)``) ends unbounded; with
    ``+10⁻¹² (x₀² + x₁²)`` its minimiser is ``x₁ = 5·10¹¹ − 1/2``, solved; ``+ (x₀² + x₁²)`` at ``(1, 0)``."""
    solve = jax.jit(jax.vmap(lambda p: di.solve_nlp(_two, jnp.ones(2), p, equality=lambda x, p: x[:1] - x[1:] - 1.0,
                                                    throw=False)))
    sol = solve(jnp.array([[-1.0, 0.0], [-1.0, 1e-12], [0.0, 1.0]]))
    _assert_unbounded(sol, [0])
    assert [i for i, _ in di.failures(sol.result)] == [0]
    np.testing.assert_allclose(sol.x[1], [5e11 + 0.5, 5e11 - 0.5], rtol=1e-9)
    np.testing.assert_allclose(sol.x[2], [0.5, -0.5], atol=1e-9)


def test_linear_program_through_an_inequality():
    """``min −x₀`` subject to ``x₀ − x₁ ≥ 0``, ``x₁ ≥ 0``: unbounded; with ``3 − x₀ − 2 x₁ ≥ 0`` instead,
    ``x* = (3, 0)``."""
    solve = jax.jit(jax.vmap(lambda p: di.solve_nlp(
        lambda x, p: -x[0], jnp.ones(2), p, inequality=lambda x, p: p[:1] + p[1] * x[:1] + p[2] * x[1:],
        lower=jnp.array([-jnp.inf, 0.0]), throw=False)))
    sol = solve(jnp.array([[0.0, 1.0, -1.0], [3.0, -1.0, -2.0]]))
    _assert_unbounded(sol, [0])
    assert [i for i, _ in di.failures(sol.result)] == [0]
    np.testing.assert_allclose(sol.x[1], [3.0, 0.0], atol=1e-8)


def test_unbounded_raises_with_the_reason_by_default():
    """With `throw` and default options the error says that the iterates diverged (it advised raising `max_steps`
    before)."""
    solve = eqx.filter_jit(lambda p: di.solve_nlp(_one, jnp.ones(1), p, lower=0.0).x)
    with pytest.raises(eqx.EquinoxRuntimeError, match="iterates diverged .* probably unbounded below"):
        solve(jnp.array([-1.0, 0.0, 0.0])).block_until_ready()
