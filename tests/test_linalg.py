"""The unrolled small-matrix factorisations of ``difimpact._linalg`` (``solve_spd``, ``solve``, ``row_basis``)
against LAPACK, finite differences and their errors on singular matrices; and the vmapped entry points free of
LAPACK calls (their lowered HLO names no ``lapack``/``cusolver`` target)."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact.papers.font_llagunes_2012.crutch_tip import tip_contact
from difimpact._linalg import row_basis, solve, solve_lu, solve_spd

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
    above the diagonal are not read: zero derivative) and of ``b``, for a matrix ``b`` and for its columns given
    as a tuple of right-hand sides (one factorisation)."""
    n = 6
    a0, b0 = _spd(rng, n, 1e2) + np.triu(rng.normal(size=(n, n)), 1), rng.normal(size=(n, 2))
    f = jax.jit(solve_spd)
    fd = (central_difference(lambda a: f(a, jnp.asarray(b0)), a0),
          central_difference(lambda b: f(jnp.asarray(a0), b), b0))
    assert np.all(fd[0][..., np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] == 0.0)

    def columns(a, b):
        x = solve_spd(a, (b[:, 0], b[:, 1]))
        assert isinstance(x, tuple) and len(x) == 2
        return jnp.stack(x, axis=1)

    for fn in (solve_spd, columns):
        for jac in (jax.jacrev, jax.jacfwd):
            got = jax.jit(jac(fn, argnums=(0, 1)))(jnp.asarray(a0), jnp.asarray(b0))
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
    with pytest.raises(ValueError, match=r"must be square .* \[\(2,\), \(3,\)\]"):
        solve_spd(jnp.eye(2), (jnp.ones(2), jnp.ones(3)), "M")


def test_frictional_map_reports_singular_mass_matrix():
    """With a massless, inertialess forearm (row and column of q6 zero) the crutch walker's M is singular:
    the frictional map names `M` instead of returning infinite impulses, eagerly and under jit."""
    walker = di.CrutchWalker()
    q, qdot = walker.pre_impact_state(0.2, -0.2)
    A = walker.contact_jacobian(q, "Q")
    M = walker.mass_matrix(q).at[5, :].set(0.0).at[:, 5].set(0.0)
    with pytest.raises(ValueError, match="`M` must be positive definite"):
        di.frictional_impact_map(M, A[0], A[1], qdot, 0.75)
    with pytest.raises(eqx.EquinoxRuntimeError, match="`M` must be positive definite"):
        eqx.filter_jit(di.frictional_impact_map)(M, A[0], A[1], qdot, 0.75)


# -- LU with partial pivoting (general square systems: the impact KKT matrix, kinematic conditions) ----------
def test_lu_matches_lapack(rng):
    """Sizes 1..17 (the KKT systems of the models), random and with a zero leading entry (needs pivoting):
    residual at rounding level and agreement with NumPy's LU solve within ε·cond."""
    f = jax.jit(solve)
    for n in (1, 3, 9, 17):
        for a in (rng.normal(size=(n, n)), np.roll(np.diag(rng.uniform(1, 2, n)), 1, axis=0) + 1e-3):
            b = rng.normal(size=(n, 3))
            x = np.asarray(f(jnp.asarray(a), jnp.asarray(b)))
            ref = np.linalg.solve(a, b)
            cond = np.linalg.cond(a)
            np.testing.assert_allclose(x, ref, rtol=0, atol=100 * n * np.finfo(float).eps * cond * np.abs(ref).max())
            assert np.abs(a @ x - b).max() <= 100 * n * np.finfo(float).eps * np.abs(a).max() * np.abs(x).max()
            np.testing.assert_allclose(f(jnp.asarray(a), jnp.asarray(b[:, 0])), ref[:, 0], rtol=1e-8, atol=1e-12)


def test_lu_gradient_matches_finite_differences(rng):
    n = 5
    a0, b0 = rng.normal(size=(n, n)) + 3 * np.eye(n), rng.normal(size=(n, 2))
    f = jax.jit(solve)
    fd = (central_difference(lambda a: f(a, jnp.asarray(b0)), a0),
          central_difference(lambda b: f(jnp.asarray(a0), b), b0))
    for jac in (jax.jacrev, jax.jacfwd):
        got = jax.jit(jac(solve, argnums=(0, 1)))(jnp.asarray(a0), jnp.asarray(b0))
        for g, ref in zip(got, fd):
            np.testing.assert_allclose(g, ref, rtol=1e-6, atol=1e-8 * np.abs(ref).max())


def test_lu_singular_and_vmap():
    """A singular matrix raises naming the argument (eagerly, under jit/vmap); `solve_lu` reports a zero
    relative pivot with finite values instead; vmap equals a loop."""
    singular = jnp.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]])
    with pytest.raises(ValueError, match="`K` is singular"):
        solve(singular, jnp.ones(3), "K")
    x, pivot = solve_lu(singular, jnp.ones(3))
    assert pivot < 1e-15 and np.all(np.isfinite(x))
    a = jnp.stack([jnp.eye(3) + 0.1 * k * jnp.ones((3, 3)) for k in range(4)])
    got = eqx.filter_jit(jax.vmap(solve))(a, jnp.ones((4, 3)))
    np.testing.assert_allclose(got, [np.linalg.solve(x, np.ones(3)) for x in a], rtol=1e-14)
    with pytest.raises(eqx.EquinoxRuntimeError, match="`a` is singular"):
        jax.block_until_ready(eqx.filter_jit(jax.vmap(solve))(a.at[2].set(singular), jnp.ones((4, 3))))


# -- rank-revealing pivoted Gram–Schmidt (rank checks of the impact map) --------------------------------------
def test_row_basis_matches_svd():
    """Rank, and the projector onto the row space, of random rank-deficient stacks equal NumPy's SVD; the basis
    orthonormal to Gram–Schmidt's accuracy, whose loss of orthogonality grows with κ = σ_1/σ_rank (measured
    ``‖Q Qᵀ − I‖_max ≤ 1.4 ε κ`` over 1200 draws); the residual norms bracket the singular values as a rank-revealing QR's
    diagonal does. Its own generator: the draws do not depend on which tests ran before in the process."""
    rng = np.random.default_rng(11)
    for n, k, rank in ((5, 7, 3), (9, 11, 9), (6, 8, 0), (4, 2, 2), (9, 12, 5)):
        rows = rng.normal(size=(k, rank)) @ rng.normal(size=(rank, n))
        Q, kept, r = map(np.asarray, jax.jit(row_basis, static_argnums=(1, 2))(jnp.asarray(rows), n, 1e-10))
        assert kept.sum() == rank == np.linalg.matrix_rank(rows)
        _, s, vt = np.linalg.svd(rows)
        np.testing.assert_allclose(Q.T @ Q, vt[:rank].T @ vt[:rank], atol=1e-12)
        kappa = s[0] / s[rank - 1] if rank else 1.0
        np.testing.assert_allclose(Q[kept] @ Q[kept].T, np.eye(rank), atol=4 * np.finfo(float).eps * kappa)
        assert np.all(np.diff(r) <= 1e-12 * r[0])
        if rank:
            assert s[rank - 1] <= r[rank - 1] * np.sqrt(n) * (1 + 1e-12) and r[0] <= s[0] * (1 + 1e-12)


# -- no LAPACK on a vmapped path ------------------------------------------------------------------------------
def _lapack_targets(fn, *args):
    text = jax.jit(jax.vmap(fn)).lower(*args).as_text().lower()
    return [t for t in ("lapack", "cusolver", "getrf", "gesdd", "syevd", "potrf") if t in text]


def test_vmapped_entry_points_call_no_lapack():
    """The lowered HLO of ``vmap`` of the batched entry points contains no LAPACK/cuSOLVER custom call:
    ``impact`` (biped with torso, stick ``P_L``, unilateral ``P_R``, ``massless="keep"``: every KKT solve and
    rank check), ``frictional_impact``, ``model.accelerations`` and ``SevenLinkHuman.heel_strike_state``.
    (Batched LAPACK on tiny matrices can deadlock jaxlib's CPU thread pool.)"""
    biped, walker = di.BipedWithTorso(), di.CrutchWalker()

    def biped_impact(q4):
        q, qd = biped.pre_impact_state(q4)
        return di.impact(biped, q, qd, stick=("P_L",), unilateral=("P_R",), massless="keep", throw=False)

    assert _lapack_targets(biped_impact, jnp.full(3, 0.5)) == []
    assert _lapack_targets(lambda q: biped.accelerations(q, q), jnp.ones((3, 5))) == []
    assert _lapack_targets(lambda w: di.SevenLinkHuman().heel_strike_state(w)[1], -jnp.ones(3)) == []
    coulomb = di.Coulomb(0.75)
    assert _lapack_targets(lambda q3: di.frictional_impact(walker, *walker.pre_impact_state(q3, -0.2), "Q",
                                                           friction=coulomb), jnp.full(3, 0.2)) == []
    # The check can fail: a vmapped jnp.linalg.solve lowers to LAPACK's getrf on CPU.
    if jax.default_backend() == "cpu":
        assert _lapack_targets(jnp.linalg.solve, jnp.ones((3, 2, 2)), jnp.ones((3, 2))) != []


@pytest.mark.slow
def test_vmapped_compliant_phase_calls_no_lapack():
    """The same for ``compliant_impact`` (its contact system is solved by ``solve_spd``); slow: tracing the
    whole diffrax solve takes a minute and a half."""
    walker = di.CrutchWalker()

    def compliant(q3):
        q, qd = walker.pre_impact_state(q3, -0.2)
        tip = tip_contact()
        return di.compliant_impact(walker, q, qd, "Q", normal=tip.normal_law, friction=tip.friction_law,
                                   max_steps=16, throw=False).peak_normal_force

    assert _lapack_targets(compliant, jnp.full(3, 0.2)) == []
