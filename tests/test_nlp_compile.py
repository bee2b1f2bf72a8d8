"""What the size of `solve_nlp`'s compiled program rests on: the problem's functions are traced into it a fixed,
small number of times (each trace is a copy of the model's code that XLA compiles; for the gait problems those
copies are most of the compile time), and the last evaluation that this needs, a trip of the loop at the last
point rather than a separate evaluation, still gives the violation at the returned point."""

import jax
import jax.numpy as jnp
import numpy as np

import difimpact as di
from difimpact._nlp.sparsity import Sparsity

# Where the problem's functions are traced: their shapes (eval_shape, no code), the scaling and the first
# linearisation (one scan over the two points), the loop's linearisation, its Hessian and its line search (one
# trial for the filter and for restoration).
MAX_EQUALITY_TRACES = 6


def _counted(fn, counter):
    def wrapped(x, p):
        counter.append(1)
        return fn(x, p)

    return wrapped


def _chain(n=6):
    """A chain of ``n`` points: ``min Σ x²`` with ``x_{i+1} − x_i = p`` and ``x_i ≥ −1``; tridiagonal derivatives."""
    equality = lambda x, p: x[1:] - x[:-1] - p  # noqa: E731
    inequality = lambda x, p: x + 1.0  # noqa: E731
    jacobian = np.vstack([np.eye(n - 1, n) + np.eye(n - 1, n, 1), np.eye(n)]).astype(bool)
    sparsity = Sparsity(np.arange(n) % 2, jacobian, np.zeros(n, int), np.eye(n, dtype=bool), np.zeros(n, bool))
    return equality, inequality, sparsity


def test_functions_traced_a_fixed_number_of_times():
    equality, inequality, sparsity = _chain()
    for sp in (None, sparsity):
        traces = []
        solve = jax.jit(lambda p, sp=sp, traces=traces: di.solve_nlp(lambda x, p: x @ x, jnp.linspace(0.0, 1.0, 6), p,
                                                      equality=_counted(equality, traces), inequality=inequality,
                                                      sparsity=sp, throw=False))
        sol = solve(0.2)
        assert sol.result == di.NLPResults.successful
        assert 0 < len(traces) <= MAX_EQUALITY_TRACES, (sp, len(traces))


def test_violation_at_the_returned_point_after_the_iteration_limit():
    equality = lambda x, p: jnp.stack([x[0] ** 2 + x[1] ** 2 - 4.0, x[1] - x[0] ** 3 + p])  # noqa: E731
    for steps in (1, 3, 5):
        sol = jax.jit(lambda x0, steps=steps: di.solve_nlp(
            lambda x, p: x[0] + x[1], x0, 0.5, equality=equality, options=di.NLPOptions(max_steps=steps),
            throw=False))(jnp.array([10.0, -10.0]))
        assert sol.result == di.NLPResults.iteration_limit and int(sol.iterations) == steps
        np.testing.assert_allclose(sol.constraint_violation, jnp.max(jnp.abs(equality(sol.x, 0.5))), rtol=1e-12)
