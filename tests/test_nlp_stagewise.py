"""The stage-wise Newton factorisation (:mod:`difimpact._nlp.stagewise`: block cyclic reduction) against NumPy on
random block tridiagonal matrices: solutions to the matrix's conditioning, several right-hand sides, the smallest
pivot of a singular reduction, and the inertia from the eliminated blocks' pivots against NumPy's eigenvalues."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from difimpact._collocation.stages import StageRows, point_stages, stage_sparsity
from difimpact._nlp import newton, stagewise


def _block_tridiagonal(rng, sizes, symmetric=False, shift=0.0):
    """A random matrix whose unknowns sit in stages of `sizes`, entries only between neighbouring stages, and
    the stage of each unknown (shuffled, so that the ordering is the structure's to find)."""
    stage = np.repeat(np.arange(len(sizes)), sizes)
    m = stage.size
    a = rng.standard_normal((m, m)) * (np.abs(stage[:, None] - stage[None, :]) <= 1)
    if symmetric:
        a = a + a.T
    a += shift * np.eye(m)
    shuffle = rng.permutation(m)
    return a[np.ix_(shuffle, shuffle)], stage[shuffle]


def _stored(a, stage):
    rows, cols = np.nonzero(a)
    st = stagewise.StageStructure.of(rows, cols, stage)
    flat = jnp.zeros(st.storage_size()).at[st.positions(rows, cols)].set(a[rows, cols])
    return st, flat


@pytest.mark.parametrize("sizes", [[3, 4], [2, 5, 3, 4, 4, 1, 3, 2, 3, 4, 2, 2, 3]])
def test_solve_against_numpy(sizes):
    """One and several right-hand sides, stages of unequal sizes (padded), an odd number of stages at a level."""
    rng = np.random.default_rng(len(sizes))
    a, stage = _block_tridiagonal(rng, sizes)
    st, flat = _stored(a, stage)
    f = jax.jit(lambda x: stagewise.factor(st, x))(flat)
    b = rng.standard_normal((a.shape[0], 3))
    expected = np.linalg.solve(a, b)
    tolerance = 10 * np.linalg.cond(a) * np.finfo(float).eps
    for got, want in ((stagewise.solve(st, f, b), expected), (stagewise.solve(st, f, b[:, 1]), expected[:, 1])):
        assert np.linalg.norm(got - want) <= tolerance * np.linalg.norm(want)
    assert float(f.min_pivot) > 0


def test_a_singular_reduction_is_seen():
    """A stage block of zeros with no coupling: the reduction's smallest pivot is zero."""
    rng = np.random.default_rng(7)
    a, stage = _block_tridiagonal(rng, [3, 3, 3, 3])
    dead = stage == 1
    a[dead, :] = 0.0
    a[:, dead] = 0.0
    st, flat = _stored(a, stage)
    assert float(stagewise.factor(st, flat).min_pivot) == 0.0


def test_inertia_and_border_against_numpy():
    """The eliminated blocks' pivots have the signs of the symmetric matrix's eigenvalues (Haynsworth), and
    ``Bᵀ M⁻¹ B`` equals NumPy's, for a border of 2 columns, the matrix shifted from definite to indefinite."""
    rng = np.random.default_rng(11)
    a, stage = _block_tridiagonal(rng, [3, 2, 4, 3, 3, 2, 4], symmetric=True)
    st, _ = _stored(a, stage)
    rows, cols = np.nonzero((a != 0) | np.eye(a.shape[0], dtype=bool))  # the diagonal, which the shifts fill
    at = st.positions(rows, cols)
    border = rng.standard_normal((a.shape[0], 2))
    pivots = jax.jit(lambda x: stagewise.ldl_pivots_bordered(
        st, jnp.zeros(st.storage_size()).at[at].set(x[rows, cols]), jnp.asarray(border)))
    counts = set()
    for shift in (-9.0, -3.0, 0.0, 4.0, 9.0):
        shifted = a + shift * np.eye(a.shape[0])
        d, G = pivots(jnp.asarray(shifted))
        eig = np.linalg.eigvalsh(shifted)
        assert np.all(np.abs(np.asarray(d)) > 1e-12)
        assert int(np.sum(np.asarray(d) < 0)) == int(np.sum(eig < 0)), shift
        counts.add(int(np.sum(eig < 0)))
        np.testing.assert_allclose(G, border.T @ np.linalg.solve(shifted, border), rtol=1e-8, atol=1e-10)
    assert len(counts) >= 3  # the shifts cross eigenvalues: a wrong count would show


def test_structure_errors():
    with pytest.raises(ValueError, match="more than one apart"):
        stagewise.StageStructure.of([0], [2], [0, 1, 2])
    with pytest.raises(ValueError, match="needs a stage"):
        stagewise.StageStructure.of([0], [0], [-1, 0])


def test_the_choice_is_by_backend_and_size():
    """By stage only off a CPU, from ``STAGES_MIN`` stages on and where the sparsity gives them; the stages of a
    Hermite–Simpson mesh pair each point with its midpoint."""
    G = 2 * newton.STAGES_MIN + 1
    rows = StageRows(np.arange(2 * G).reshape(G, 2), 2 * G)
    for i in range(0, G - 1, 2):
        rows.add((i, i + 1, i + 2), count=2)
    stages = point_stages([G], True)
    np.testing.assert_array_equal(stages[:5], [0, 0, 1, 1, 2])
    np.testing.assert_array_equal(point_stages([3, 5], True), [0, 0, 1, 2, 2, 3, 3, 4])
    sparsity = stage_sparsity(rows, groups=3, point_stages=stages)
    assert sparsity.stages.max() + 1 >= newton.STAGES_MIN
    assert newton.by_stage(sparsity) == (jax.default_backend() != "cpu")
    assert not newton.by_stage(stage_sparsity(rows, groups=3))
    assert newton.structure(sparsity, 2 * (G // 2), stagewise=True).structure.stagewise


def test_under_vmap():
    """A batch of matrices of one structure (the GPU's batched solves): each member's solution NumPy's."""
    rng = np.random.default_rng(5)
    sizes = [3, 2, 4, 3, 3]
    a, stage = _block_tridiagonal(rng, sizes)
    rows, cols = np.nonzero(a)
    st = stagewise.StageStructure.of(rows, cols, stage)
    at = st.positions(rows, cols)
    mats = np.stack([a * (1.0 + 0.3 * rng.standard_normal(a.shape)) for _ in range(3)])
    b = rng.standard_normal((3, a.shape[0]))

    def one(m, r):
        flat = jnp.zeros(st.storage_size()).at[at].set(m[rows, cols])
        return stagewise.solve(st, stagewise.factor(st, flat), r)

    x = jax.jit(jax.vmap(one))(jnp.asarray(mats), jnp.asarray(b))
    for k in range(3):
        np.testing.assert_allclose(x[k], np.linalg.solve(mats[k], b[k]), rtol=1e-8, atol=1e-10)
