"""The members of a `vmap` of `solve_nlp` are independent: a batched `while_loop` runs until every member is done,
and a member's iterations, result and solution must be those of its own solve, whatever the other members do (one
that fails, runs to the iteration limit or turns non-finite included)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

import difimpact as di


def _objective(x, p):  # Hock & Schittkowski 71, as in test_nlp.py: Σ x² = p, Π x ≥ 25, 1 ≤ x ≤ 5
    return x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2]


def _equality(x, p):
    return jnp.array([jnp.sum(x**2) - p])


def _inequality(x, p):
    return jnp.array([jnp.prod(x)])


def _hs071(p):
    sol = di.solve_nlp(_objective, jnp.array([1.0, 5.0, 5.0, 1.0]), p, equality=_equality, inequality=_inequality,
                       inequality_lower=25.0, lower=1.0, upper=5.0, throw=False)
    return sol.x, sol.iterations, sol.result, sol.value


@functools.cache
def _solo():
    return jax.jit(_hs071)


@functools.cache
def _batch():
    return jax.jit(jax.vmap(_hs071))


GOOD = (40.0, 38.0, 42.0)
BAD = (400.0, float("nan"))  # Σ x² ≤ 100 within the bounds: cannot be met; a non-finite parameter


def test_batch_members_equal_their_solo_solves():
    ps = jnp.array([GOOD[0], BAD[0], GOOD[1], BAD[1], GOOD[2]])
    x, iterations, result, value = _batch()(ps)
    assert [i for i, _ in di.failures(result)] == [1, 3]
    assert int(iterations[1]) > int(iterations[0])  # the failing member ran on after the others were done
    for i in (0, 2, 4):
        xs, its, rs, vs = _solo()(ps[i])
        assert int(iterations[i]) == int(its) and int(result._value[i]) == int(rs._value)
        np.testing.assert_allclose(x[i], xs, rtol=0, atol=1e-12)
        np.testing.assert_allclose(value[i], vs, rtol=1e-14)
    for i in (1, 3):  # the failing members, alone, fail in the same way
        _, its, rs, _ = _solo()(ps[i])
        assert int(iterations[i]) == int(its) and int(result._value[i]) == int(rs._value)


def test_batch_members_do_not_depend_on_the_other_members():
    """One compiled batch program: replacing the failing members by good ones leaves every other member's
    iterations, result and solution bit for bit as they were."""
    with_bad = _batch()(jnp.array([GOOD[0], BAD[0], GOOD[1], BAD[1], GOOD[2]]))
    all_good = _batch()(jnp.array([GOOD[0], GOOD[1], GOOD[1], GOOD[2], GOOD[2]]))
    for i in (0, 2, 4):
        for a, b in zip(jax.tree.leaves(with_bad), jax.tree.leaves(all_good)):
            np.testing.assert_array_equal(a[i], b[i])


def test_line_search_accepts_a_trial_equal_but_for_rounding():
    """What made a member of a vmapped optimal-gait solve fail where its solo solve converged: at the solution
    (``θ ≈ 10⁻¹²``) the step changes ``φ`` by rounding alone, and a batched program rounds differently from a
    single one; a trial ``φ`` one ulp above ``φ`` and a ``θ`` not reduced were rejected, the step halved, until
    the line search failed. Compared as IPOPT does (``Compare_le``: within ``10 ε |φ|``) the trial is taken."""
    from difimpact._nlp.filter import _judge, Filter

    flt = Filter.start(jnp.asarray(1.0))
    theta, phi = jnp.asarray(3e-12), jnp.asarray(276.6)
    for slope in (8.5e-11, -2e-10):  # the slope's sign is noise there too
        ok, _ = _judge(flt, theta, phi, jnp.asarray(slope), jnp.asarray(3.1e-12), jnp.nextafter(phi, jnp.inf), 1.0)
        assert bool(ok)
