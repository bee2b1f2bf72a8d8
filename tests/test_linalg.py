"""The unrolled small-matrix solver (``difimpact._linalg.solve_spd``) against LAPACK, finite differences and
its error on a singular matrix (issue 7)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact._linalg import solve_spd

from .helpers import central_difference

SIZES = range(1, 9)


def _spd(rng, n, cond):
    """Random SPD matrix with condition number ``cond`` (eigenvalues log-spaced, random eigenvectors)."""
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (Q * np.logspace(0, -np.log10(cond), n)) @ Q.T


@pytest.mark.parametrize("cond", [1e1, 1e10])
def test_matches_lapack(rng, cond):
    """Sizes 1..8, one and two right-hand sides: relative error within a few ε·cond of NumPy's LU solve; the
    residual ``‖a x − b‖`` at rounding level (backward stable: no pivoting is needed for SPD)."""
    for n in SIZES:
        a = _spd(rng, n, cond if n > 1 else 1.0)
        for b in (rng.normal(size=n), rng.normal(size=(n, 2))):
            x = np.asarray(solve_spd(jnp.asarray(a), jnp.asarray(b)))
            ref = np.linalg.solve(a, b)
            assert x.shape == b.shape
            np.testing.assert_allclose(x, ref, rtol=0, atol=50 * n * np.finfo(float).eps * cond * np.abs(ref).max())
            assert np.abs(a @ x - b).max() <= 50 * n * np.finfo(float).eps * np.abs(a).max() * np.abs(x).max()


def test_reads_lower_triangle_and_symmetric_indefinite(rng):
    """Only the lower triangle is read (as LAPACK ``potrf``); a symmetric indefinite matrix with nonzero
    leading minors is solved exactly too (``LDLᵀ`` needs no square roots)."""
    a = _spd(rng, 5, 1e3)
    garbage = np.triu(rng.normal(size=(5, 5)), 1)
    b = rng.normal(size=5)
    np.testing.assert_allclose(solve_spd(jnp.asarray(np.tril(a) + garbage), jnp.asarray(b)), np.linalg.solve(a, b),
                               rtol=1e-10)
    indefinite = np.array([[-1.0, 2.0], [2.0, -1.0]]) / 3  # leading minors −1/3, −1/3
    np.testing.assert_allclose(solve_spd(jnp.asarray(indefinite), jnp.ones(2)), np.linalg.solve(indefinite, np.ones(2)),
                               rtol=1e-14)


def test_gradient_matches_finite_differences(rng):
    """d x / d(a, b) in forward and reverse mode equal central differences over every entry of ``a`` (those
    above the diagonal are not read: zero derivative) and of ``b``."""
    n = 6
    a0, b0 = _spd(rng, n, 1e2) + np.triu(rng.normal(size=(n, n)), 1), rng.normal(size=(n, 2))
    f = jax.jit(solve_spd)
    fd = (central_difference(lambda a: f(a, jnp.asarray(b0)), a0),
          central_difference(lambda b: f(jnp.asarray(a0), b), b0))
    assert np.all(fd[0][..., np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] == 0.0)
    for jac in (jax.jacrev, jax.jacfwd):
        got = jax.jit(jac(solve_spd, argnums=(0, 1)))(jnp.asarray(a0), jnp.asarray(b0))
        for g, ref in zip(got, fd):
            np.testing.assert_allclose(g, ref, rtol=1e-6, atol=1e-8 * np.abs(ref).max())


def test_vmap_equals_loop(rng):
    a = np.stack([_spd(rng, 6, 1e4) for _ in range(5)])
    b = rng.normal(size=(5, 6, 2))
    got = jax.jit(jax.vmap(solve_spd))(jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(got, np.stack([np.linalg.solve(x, y) for x, y in zip(a, b)]), rtol=1e-10)


def test_singular_matrix_raises_naming_the_argument():
    """A zero pivot (singular to working precision) raises, eagerly and under ``jit``/``vmap``, never NaN."""
    singular = jnp.diag(jnp.array([2.0, 1.0, 0.0]))
    near = jnp.diag(jnp.array([2.0, 1.0, 1e-17]))
    for a in (singular, near, jnp.array([[1.0, 2.0], [2.0, 4.0]])):
        with pytest.raises(ValueError, match="`M` has a zero LDLᵀ pivot"):
            solve_spd(a, jnp.ones(a.shape[0]), "M")
    batched = eqx.filter_jit(jax.vmap(lambda a, b: solve_spd(a, b, "M")))
    good = jnp.stack([jnp.eye(3), 2 * jnp.eye(3)])
    assert np.all(np.isfinite(batched(good, jnp.ones((2, 3)))))
    with pytest.raises(eqx.EquinoxRuntimeError, match="`M` has a zero LDLᵀ pivot"):
        jax.block_until_ready(batched(good.at[1].set(singular), jnp.ones((2, 3))))
    with pytest.raises(ValueError, match="must be square"):
        solve_spd(jnp.ones((2, 3)), jnp.ones(2), "M")


def test_frictional_map_reports_singular_mass_matrix():
    """With a massless, inertialess forearm (row and column of q6 zero) the crutch walker's M is singular:
    the frictional map names `mass_matrix` instead of returning infinite impulses, eagerly and under jit."""
    walker = di.CrutchWalker()
    q, qdot = walker.pre_impact_state(0.2, -0.2)
    A = walker.contact_jacobian(q, "Q")
    M = walker.mass_matrix(q).at[5, :].set(0.0).at[:, 5].set(0.0)
    with pytest.raises(ValueError, match="`mass_matrix` must be positive definite"):
        di.frictional_impact_map(M, A[0], A[1], qdot, 0.75)
    with pytest.raises(eqx.EquinoxRuntimeError, match="`mass_matrix` must be positive definite"):
        eqx.filter_jit(di.frictional_impact_map)(M, A[0], A[1], qdot, 0.75)
