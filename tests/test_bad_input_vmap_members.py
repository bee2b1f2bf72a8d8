"""Under a plain ``jax.vmap`` the run-time checks of traced values name the failing member (issue 49): the walker's
total mass within 1e-60…1e60 kg and traced `StanceTolerances` fields, which before said what failed but not where.
The member is the first failing one in row-major order, outermost axis first under nested ``vmap``s
(:mod:`difimpact._check_members`)."""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact._check_members import check_members

X = jnp.array([-0.27, 1.09, 0.72])


@pytest.fixture(scope="module")
def strides():
    """One program: a batch of compass walkers scaled by `scale` (the gait is the same at any scale), each with its
    own traced `rtol`."""

    def one(scale, rtol):
        walker = di.CompassGait(R=0.0, m=5 * scale, m_H=10 * scale, slope=math.radians(3.0))
        return di.stride(walker, X, options=di.StanceTolerances(rtol=rtol)).x

    return eqx.filter_jit(jax.vmap(one))


def test_mass_range_names_the_member(strides):
    scales = jnp.array([1.0, 2.0, 1e61, 1e-62])
    with pytest.raises(eqx.EquinoxRuntimeError,
                       match=r"total mass must lie within .* \(member 2 of a jax\.vmap batch\)"):
        strides(scales, jnp.full(4, 1e-10)).block_until_ready()


def test_traced_stance_tolerance_names_the_member(strides):
    rtol = jnp.array([1e-10, 1e-10, 1e-10, -1.0])
    message = r"`StanceTolerances\.rtol` must be finite and positive and below 1\.0 \(a traced option\) \(member 3 of"
    with pytest.raises(eqx.EquinoxRuntimeError, match=message + r" a jax\.vmap batch\)"):
        strides(jnp.ones(4), rtol).block_until_ready()


def test_a_good_batch_is_unchanged(strides):
    """Scaled walkers take the same stride (scale invariance): the checks pass a good batch through."""
    out = strides(jnp.array([1.0, 1e3, 1e-3, 1e50]), jnp.full(4, 1e-10))
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, jnp.broadcast_to(out[0], out.shape), rtol=1e-8, atol=1e-10)


def _f(m, x):
    return jnp.sum(check_members(x, m <= 0, "`m` must be positive") ** 2) * m


def test_nested_vmap_names_both_indices_outermost_first():
    f = eqx.filter_jit(jax.vmap(jax.vmap(_f, (0, None)), (0, None)))
    with pytest.raises(eqx.EquinoxRuntimeError, match=r"`m` must be positive \(member \(1, 2\) of nested jax\.vmap"):
        f(jnp.array([[1.0, 2.0, 3.0], [1.0, 1.0, -1.0]]), jnp.arange(3.0)).block_until_ready()


def test_first_failing_member_is_named_and_inside_loops():
    """Two failing members: the first is named, also where the check runs in a loop's body under ``vmap``."""
    def looped(m, x):
        return jax.lax.fori_loop(0, 2, lambda i, y: y + _f(m, y), x)

    f = eqx.filter_jit(jax.vmap(looped, (0, None)))
    with pytest.raises(eqx.EquinoxRuntimeError, match=r"\(member 1 of a jax\.vmap batch\)"):
        f(jnp.array([1.0, -1.0, 2.0, -3.0]), jnp.arange(3.0)).block_until_ready()


def test_derivatives_pass_through_and_concrete_values_raise_value_error():
    """The checked value's derivatives are those of the unchecked function (forward and reverse, batched); a
    concrete failing value raises ``ValueError`` as :func:`difimpact._check.check` does, without a member."""
    x = jnp.arange(3.0)
    np.testing.assert_allclose(jax.grad(_f, argnums=1)(2.0, x), 4.0 * x)
    np.testing.assert_allclose(jax.vmap(jax.jacfwd(_f, argnums=1), (0, None))(jnp.array([1.0, 3.0]), x),
                               [2.0 * x, 6.0 * x])
    np.testing.assert_allclose(jax.jit(jax.vmap(jax.grad(_f), (0, None)))(jnp.array([1.0, 3.0]), x), [5.0, 5.0])
    with pytest.raises(ValueError, match=r"^`m` must be positive$"):
        _f(-1.0, x)
