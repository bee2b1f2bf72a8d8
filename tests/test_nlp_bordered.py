"""The bordered band factorisation (:mod:`difimpact._nlp.bordered`) against NumPy's dense solve and eigenvalues, on
random block-tridiagonal matrices closed into a ring (the periodic gait's structure) with the ring's first block
and closing rows as the border; and the layout's structure against a dense pattern's in linear time."""

import tracemalloc

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from difimpact._nlp import banded, bordered, newton, symmetric
from difimpact._nlp.matrix import Pattern
from difimpact._nlp.sparsity import Sparsity

SLOW = pytest.mark.slow  # CI's second stage: the README's command keeps one band by rows and one by blocks


def _ring(rng, stages=9, b=4, k_close=2, symmetric=False):
    """A block-tridiagonal matrix of `stages` blocks of size `b`, with `k_close` closing rows (and columns) that
    meet the first and the last block; the border: the first block and the closing rows."""
    n = stages * b + k_close
    a = np.zeros((n, n))
    for s in range(stages):
        i = slice(s * b, (s + 1) * b)
        a[i, i] = rng.normal(size=(b, b)) + 4 * np.eye(b)
        if s + 1 < stages:
            j = slice((s + 1) * b, (s + 2) * b)
            a[i, j], a[j, i] = rng.normal(size=(b, b)), rng.normal(size=(b, b))
    close = slice(stages * b, n)
    first, last = slice(0, b), slice((stages - 1) * b, stages * b)
    for blk in (first, last):
        a[close, blk] = rng.normal(size=(k_close, b))
        a[blk, close] = rng.normal(size=(b, k_close))
    if symmetric:
        a = a + a.T
    border = list(range(b)) + list(range(stages * b, n))
    return a, border


def _structure(a, border):
    rows, cols = np.nonzero(a)
    return bordered.BorderedStructure.of(rows, cols, a.shape[0], border)


def _storage(s, a):
    rows, cols = np.nonzero(a)
    return jnp.zeros(s.storage_size()).at[s.positions(rows, cols)].add(jnp.asarray(a[rows, cols]))


def test_solve_matches_dense_and_the_band_is_the_paths():
    rng = np.random.default_rng(0)
    for trial in range(4):
        a, border = _ring(rng)
        s = _structure(a, border)
        folded = banded.BandedStructure.of(a != 0)
        assert s.band.lower + s.band.upper < folded.lower + folded.upper  # the ring cut: a narrower band
        f = bordered.factor(s, _storage(s, a))
        b = rng.normal(size=a.shape[0])
        x = bordered.solve(s, f, jnp.asarray(b))
        np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-10 * np.linalg.cond(a), atol=1e-12)
        assert float(f.min_pivot) > 0


def test_pivots_across_the_band():
    """A main block whose diagonal is zero: elimination needs row exchanges (partial pivoting within the band)."""
    rng = np.random.default_rng(1)
    a, border = _ring(rng)
    main = [i for i in range(a.shape[0]) if i not in border]
    a[main, main] = 0.0
    s = _structure(a, border)
    b = rng.normal(size=a.shape[0])
    x = bordered.solve(s, bordered.factor(s, _storage(s, a)), jnp.asarray(b))
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-9 * np.linalg.cond(a), atol=1e-11)


def test_no_border_is_the_banded_factorisation():
    rng = np.random.default_rng(2)
    a, _ = _ring(rng)
    s = _structure(a, [])
    assert s.sizes == (a.shape[0], 0)
    f = bordered.factor(s, _storage(s, a))
    ref = banded.factor(s.band, banded.to_band(s.band, jnp.asarray(a)))
    np.testing.assert_array_equal(f.main.band, ref.band)


@pytest.mark.parametrize("shift", [-6.0, -1.0, 0.5, 6.0])
def test_inertia_from_the_pivots(shift):
    """Without pivoting, the main block's pivots and those of the border's Schur complement have the signs of
    the eigenvalues of the symmetric matrix (Sylvester, Haynsworth)."""
    rng = np.random.default_rng(3)
    a, border = _ring(rng, symmetric=True)
    a = a + shift * np.eye(a.shape[0])
    s = _structure(a, border)
    f = bordered.factor(s, _storage(s, a), pivoting=False)
    d = np.concatenate([np.asarray(f.main.band[:, s.band.lower]), np.linalg.eigvalsh(np.asarray(f.schur))])
    eig = np.linalg.eigvalsh(a)
    assert int(np.sum(d < 0)) == int(np.sum(eig < 0))
    assert int(np.sum(d > 0)) == int(np.sum(eig > 0))


def _symmetric_band(rng, n, kl, shift):
    """A random symmetric matrix of bandwidth `kl`, shifted by `shift` on the diagonal, its rows scrambled by a
    symmetric permutation (the ordering has work to do)."""
    a = np.zeros((n, n))
    for k in range(kl + 1):
        v = rng.normal(size=n - k)
        a[np.arange(k, n), np.arange(n - k)] = v
        a[np.arange(n - k), np.arange(k, n)] = v
    a += shift * np.eye(n)
    p = rng.permutation(n)
    return a[np.ix_(p, p)]


@pytest.mark.parametrize("n, kl, block, shift", [
    (61, 5, None, -3.0), (140, 66, None, 0.0), (9, 3, 16, 3.0),
    *[pytest.param(n, kl, block, shift, marks=SLOW) for n, kl, block in [(61, 5, None), (61, 5, 16), (140, 66, None),
                                                                         (97, 64, 7), (9, 3, 16)]
      for shift in (-3.0, 0.0, 3.0) if (n, kl, block, shift) not in [(61, 5, None, -3.0), (140, 66, None, 0.0),
                                                                      (9, 3, 16, 3.0)]]])
def test_ldl_pivots_are_the_unpivoted_elimination_s(n, kl, block, shift):
    """The symmetric elimination's pivots (the inertia test without a border) equal those of the unpivoted
    ``LU`` (to their growth) and have the signs of NumPy's eigenvalues; by rows and by blocks, a last block
    partly padding, a band wider than the matrix's blocks."""
    rng = np.random.default_rng(5 + n + kl)
    a = _symmetric_band(rng, n, kl, shift)
    s = banded.BandedStructure.of(a != 0)
    assert s.lower == s.upper == kl
    band = banded.to_band(s, jnp.asarray(a))
    d = np.asarray(jax.jit(lambda B: symmetric.ldl_pivots(s, B, block))(band))
    lu = np.asarray(banded.factor(s, band, pivoting=False, block=block).band[:, kl])
    np.testing.assert_allclose(d, lu, rtol=1e-7, atol=1e-9)
    eig = np.linalg.eigvalsh(a)
    assert int(np.sum(d < 0)) == int(np.sum(eig < 0)) and int(np.sum(d > 0)) == int(np.sum(eig > 0))


@pytest.mark.parametrize("stages, b, block, shift", [
    (9, 4, None, -6.0), (7, 70, None, 0.5),
    *[pytest.param(*case, marks=SLOW) for case in [(9, 4, None, 0.5), (9, 4, None, 6.0), (40, 20, None, -6.0),
                                                   (40, 20, 16, 0.5), (40, 20, 16, 6.0), (7, 70, None, -6.0),
                                                   (7, 70, None, 6.0)]]])
def test_bordered_ldl_pivots_are_the_unpivoted_elimination_s(stages, b, block, shift):
    """The symmetric sweep with a border (the inertia test of a ring): the main block's pivots equal the
    unpivoted bordered ``LU``'s and ``Bᵀ A⁻¹ B`` NumPy's (to the main block's conditioning); the pivots with those
    of the Schur complement ``C − Bᵀ A⁻¹ B`` have the signs of NumPy's eigenvalues of the whole matrix; by rows
    and by blocks (a band of ``k_l ≥ 64``), a last block partly padding."""
    rng = np.random.default_rng(11 + stages + b)
    a, border = _ring(rng, stages, b, k_close=3, symmetric=True)
    a = a + shift * np.eye(a.shape[0])
    s = _structure(a, border)
    band, B, C, D = s.split(_storage(s, a))
    np.testing.assert_array_equal(C, B.T)
    d, G = jax.jit(lambda band, B: symmetric.ldl_pivots_bordered(s.band, band, B, block))(band, B)
    f = bordered.factor(s, _storage(s, a), pivoting=False)
    # no pivoting, of an indefinite matrix: the two orders of elimination round apart as the pivots grow
    np.testing.assert_allclose(d, f.main.band[:, s.band.lower], rtol=1e-6, atol=1e-10)
    main = a[np.ix_(s.main, s.main)]
    Bm = a[np.ix_(s.main, s.border)]
    reference = Bm.T @ np.linalg.solve(main, Bm)
    np.testing.assert_allclose(G, reference, rtol=0, atol=1e-10 * np.linalg.cond(main) * np.abs(reference).max())
    pivots = np.concatenate([np.asarray(d), np.linalg.eigvalsh(np.asarray(D - G))])
    eig = np.linalg.eigvalsh(a)
    assert int(np.sum(pivots < 0)) == int(np.sum(eig < 0)) and int(np.sum(pivots > 0)) == int(np.sum(eig > 0))


def test_ldl_pivots_in_a_batch_and_its_errors():
    """Under ``vmap`` each member's pivots are its own; a band that is not symmetric is refused by name."""
    mats = np.stack([_symmetric_band(np.random.default_rng(i), 40, 4, 0.5) for i in range(3)])
    s = banded.BandedStructure.of(np.any(mats != 0, axis=0))
    bands = jax.vmap(lambda m: banded.to_band(s, m))(jnp.asarray(mats))
    d = jax.jit(jax.vmap(lambda B: symmetric.ldl_pivots(s, B)))(bands)
    for i in range(3):
        np.testing.assert_allclose(d[i], symmetric.ldl_pivots(s, bands[i]), rtol=1e-12)
    lopsided = banded.BandedStructure(s.perm, s.lower, s.upper + 1)
    with pytest.raises(ValueError, match="k_l = k_u"):
        symmetric.ldl_pivots(lopsided, jnp.zeros((40, lopsided.width)))


def test_under_vmap():
    rng = np.random.default_rng(4)
    a, border = _ring(rng)
    s = _structure(a, border)
    rows, cols = np.nonzero(a)
    mats = np.stack([a + np.diag(rng.normal(size=a.shape[0])) * (a.diagonal() != 0) for _ in range(3)])
    b = rng.normal(size=(3, a.shape[0]))
    store = jax.vmap(lambda m: jnp.zeros(s.storage_size()).at[s.positions(rows, cols)].add(m[rows, cols]))

    @jax.jit
    @jax.vmap
    def solve(storage, rhs):
        return bordered.solve(s, bordered.factor(s, storage), rhs)

    x = solve(store(jnp.asarray(mats)), jnp.asarray(b))
    for i in range(3):
        np.testing.assert_allclose(x[i], np.linalg.solve(mats[i], b[i]), rtol=1e-9, atol=1e-11)


def test_structure_holds_no_dense_pattern():
    """The ordering and positions of a ring of 1500 blocks (18 013 unknowns) from its nonzeros: the host's peak
    memory stays within a few times the nonzeros' (a dense boolean pattern alone would be 324 MB)."""

    def pattern(stages, b=12):
        blocks = np.arange(stages)[:, None, None] * b
        i, j = np.meshgrid(np.arange(2 * b), np.arange(2 * b), indexing="ij")
        rows, cols = (blocks + i[None]).reshape(-1), (blocks + j[None]).reshape(-1)
        n = (stages + 1) * b
        keep = (rows < n) & (cols < n)
        closing = np.concatenate([np.arange(b), n - b + np.arange(b)])
        rows = np.concatenate([rows[keep], np.full(2 * b, n), closing])
        cols = np.concatenate([cols[keep], closing, np.full(2 * b, n)])
        return rows, cols, n + 1

    rows, cols, n = pattern(1500)
    tracemalloc.start()
    try:
        s = bordered.BorderedStructure.of(rows, cols, n, list(range(12)) + [n - 1])
        s.positions(rows, cols)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert s.band.lower <= 2 * 12 and s.band.upper <= 2 * 12
    assert peak < 20 * rows.nbytes, (peak, rows.nbytes)  # measured 13×; a dense pattern 47×


def _ring_nlp(n=16):
    """``min Σ u² + Σ (x − sin i)²`` subject to ``x_{i+1} = x_i + u_i`` around a ring (``x_0 = x_{n−1} + u_{n−1}``):
    variables ``(x_i, u_i)`` point after point; the last row (the ring's closure) and the first point are the
    border."""
    target = jnp.sin(jnp.arange(n))
    objective = lambda z, p: jnp.sum(z[1::2] ** 2) + p * jnp.sum((z[0::2] - target) ** 2)  # noqa: E731
    equality = lambda z, p: jnp.roll(z[0::2], -1) - z[0::2] - z[1::2]  # noqa: E731
    rows = np.repeat(np.arange(n), 3)
    cols = np.stack([2 * np.arange(n), 2 * ((np.arange(n) + 1) % n), 2 * np.arange(n) + 1], axis=1).reshape(-1)
    jacobian = Pattern(rows, cols, (n, 2 * n))
    colours = np.concatenate([np.arange(2 * n - 2) % 6, [6, 7]])  # the last point meets the first
    hessian = Pattern(np.arange(2 * n), np.arange(2 * n), (2 * n, 2 * n))

    def sparsity(border):
        extra = dict(border_variables=[0, 1], border_equalities=[n - 1]) if border else {}
        return Sparsity(colours, jacobian, np.zeros(2 * n, int), hessian, np.zeros(2 * n, bool), **extra)

    return objective, equality, sparsity


def test_a_ring_solved_through_its_border_equals_dense(monkeypatch):
    """`solve_nlp` on a periodic chain with the border forced (`BORDER_MIN` = 0) and dense: the same optimum,
    multipliers and gradient of the optimum (the implicit function theorem through the bordered factors)."""
    import difimpact as di

    objective, equality, sparsity = _ring_nlp()
    monkeypatch.setattr(newton, "BORDER_MIN", 0)
    newton.structure.cache_clear()
    out = {}
    for name, sp in (("border", sparsity(True)), ("dense", None)):
        solve = jax.jit(lambda p, sp=sp: di.solve_nlp(objective, jnp.zeros(32), p, equality=equality, sparsity=sp))
        sol = solve(0.7)
        grad = jax.grad(lambda p, solve=solve: solve(p).value)(0.7)
        out[name] = (sol.x, sol.multipliers, grad)
    assert newton.structure(sparsity(True), 16).structure.sizes == (45, 3)
    newton.structure.cache_clear()
    for a, b in zip(out["border"], out["dense"]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)
