"""The bordered band factorisation (:mod:`difimpact._nlp.bordered`) against NumPy's dense solve and eigenvalues, on
random block-tridiagonal matrices closed into a ring (the periodic gait's structure) with the ring's first block
and closing rows as the border; and the layout's structure against a dense pattern's in linear time."""

import tracemalloc

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from difimpact._nlp import banded, bordered
from difimpact._nlp.matrix import Pattern


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
