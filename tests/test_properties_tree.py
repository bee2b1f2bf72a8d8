"""Property tests over random planar trees (2–9 bodies): the library's mass matrix against an
independent NumPy forward-kinematics + finite-difference computation, SPD-ness, shift invariance."""

import numpy as np
from hypothesis import given, strategies as st

import difimpact as di
from difimpact import Body, PlanarTree, Point


@st.composite
def random_trees(draw):
    nb = draw(st.integers(2, 9))
    floats = lambda lo, hi: st.floats(lo, hi, allow_nan=False)  # noqa: E731
    bodies = []
    for i in range(nb):
        parent = -1 if i == 0 else draw(st.integers(0, i - 1))
        bodies.append(Body(f"b{i}", parent, 2 + i, draw(floats(0.1, 20.0)), draw(floats(0.01, 2.0)),
                           (draw(floats(-0.5, 1.0)), draw(floats(-0.2, 0.2))),
                           (draw(floats(0.1, 1.0)), draw(floats(-0.2, 0.2))),
                           draw(st.sampled_from([1.0, -1.0])), draw(floats(-3.2, 3.2))))
    points = [Point("tip", nb - 1, (draw(floats(0.1, 1.0)), 0.0))]
    q = np.array(draw(st.lists(floats(-3.0, 3.0), min_size=nb + 2, max_size=nb + 2)))
    return PlanarTree.build(nb + 2, bodies, points), bodies, q


def numpy_fk(bodies, q):
    """Independent forward kinematics: COM positions and absolute angles."""
    origins, angles, coms = [], [], []
    for b in bodies:
        th = (0.0 if b.parent < 0 else angles[b.parent]) + b.sign * q[b.coord] + b.offset
        if b.parent < 0:
            r = q[:2].copy()
        else:
            tp = angles[b.parent]
            R = np.array([[np.sin(tp), np.cos(tp)], [np.cos(tp), -np.sin(tp)]]).T
            r = origins[b.parent] + R @ np.array(b.attach)
        R = np.array([[np.sin(th), np.cos(th)], [np.cos(th), -np.sin(th)]]).T
        origins.append(r)
        angles.append(th)
        coms.append(r + R @ np.array(b.com))
    return np.array(coms), np.array(angles)


def numpy_mass_matrix(bodies, q, h=1e-6):
    n = len(q)
    J = np.zeros((len(bodies), 2, n))
    Jt = np.zeros((len(bodies), n))
    for k in range(n):
        dq = np.zeros(n)
        dq[k] = h
        cp, tp = numpy_fk(bodies, q + dq)
        cm, tm = numpy_fk(bodies, q - dq)
        J[:, :, k] = (cp - cm) / (2 * h)
        Jt[:, k] = (tp - tm) / (2 * h)
    m = np.array([b.mass for b in bodies])
    inertia = np.array([b.inertia for b in bodies])
    return np.einsum("b,bin,bim->nm", m, J, J) + np.einsum("b,bn,bm->nm", inertia, Jt, Jt)


@given(random_trees())
def test_mass_matrix_matches_numpy(data):
    tree, bodies, q = data
    M = np.asarray(tree.mass_matrix(q))
    np.testing.assert_allclose(M, numpy_mass_matrix(bodies, q), rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(M, M.T, atol=1e-12)
    assert np.linalg.eigvalsh(M).min() > 0
    shifted = q.copy()
    shifted[:2] += np.array([3.7, -1.2])
    np.testing.assert_allclose(np.asarray(tree.mass_matrix(shifted)), M, atol=1e-12)


@given(random_trees())
def test_tree_model_wraps_tree(data):
    tree, _, q = data
    model = di.TreeModel(tree)
    qdot = np.linspace(-1, 1, tree.n)
    T = float(model.kinetic_energy(q, qdot))
    assert T > 0
    np.testing.assert_allclose(T, 0.5 * qdot @ np.asarray(tree.mass_matrix(q)) @ qdot, rtol=1e-12)
