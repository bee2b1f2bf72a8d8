"""The constant structure of a planar tree — which joint turns which body, how bodies chain to the base — and
the frame helpers of its kinematics."""

import functools
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from .._custom_types import Array
from .._linalg import full_precision


def _rotate(sin, cos, a, p):
    """``a e + p n``, ``(x, y)``, for body coordinates ``(a, p)`` with ``e = (sin θ, cos θ)`` and
    ``n = (cos θ, −sin θ)``; scalars or vectors over the bodies alike."""
    return a * sin + p * cos, a * cos - p * sin


def _perp(v):
    """``⊥(a, b) = (b, −a)``: ``∂/∂θ`` of a vector fixed in a body turning clockwise by ``θ`` (``∂e/∂θ = ⊥e``)."""
    return jnp.stack([v[1], -v[0]])


@full_precision
def _apply(matrix, x):
    """``matrix @ x`` for a constant (NumPy) ``matrix``. Under ``vmap`` it is one matrix product with the batch
    as a free dimension (fast on CPU), where a broadcast product summed over the bodies is not."""
    return jnp.asarray(matrix, x.dtype) @ x


class _Topology(NamedTuple):
    """Constants of a tree's topology, over bodies ``i, j`` and coordinates ``k``: `chain` ``[i, j] = 1`` where
    ``j`` is ``i`` or one of its ancestors; `joint` ``[j, k] = s_j`` where ``q_k`` turns body ``j`` (relative
    to its parent); `rows` ``= chain @ joint = ∂θ/∂q``; `parents` (a root's is ``0``) and `linked` (``0`` for a
    root); for the mass matrix, the pairs ``(j, j')`` of jointed bodies with ``j`` on the chain of ``j'``
    (`upper`, `lower`) and the matrices that place the terms of :meth:`PlanarTree._mass_matrix` in the lower
    triangle (`place`) and the lower triangle in the full matrix (`full`)."""

    chain: np.ndarray
    joint: np.ndarray
    rows: np.ndarray
    parents: np.ndarray
    linked: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    place: np.ndarray
    full: np.ndarray


class _Frames(NamedTuple):
    """:meth:`PlanarTree._frames`: over the bodies, angles `theta`, `sin`, `cos`, links `ux`, `uy` and joints
    relative to the base `rx`, `ry`."""

    theta: Array
    sin: Array
    cos: Array
    ux: Array
    uy: Array
    rx: Array
    ry: Array


def ancestry(parent: tuple[int, ...], body: int) -> list[int]:
    chain = [body]
    while parent[chain[-1]] >= 0:
        chain.append(parent[chain[-1]])
    return chain


@functools.cache
def _topology(n: int, parent: tuple[int, ...], coord: tuple[int, ...], sign: tuple[float, ...]) -> _Topology:
    """The :class:`_Topology` of a tree (built once per topology, at trace time)."""
    nb = len(parent)
    chain, joint = np.zeros((nb, nb)), np.zeros((nb, n))
    for i in range(nb):
        chain[i, ancestry(parent, i)] = 1.0
        if coord[i] >= 0:
            joint[i, coord[i]] = sign[i]
    pairs = [(j, i) for i in range(nb) for j in ancestry(parent, i) if coord[i] >= 0 and coord[j] >= 0]
    # M's lower triangle, entry (k, l) with k ≥ l at k (k + 1) / 2 + l, from the terms [pairs, A_x, A_y, m].
    tri = lambda k, l: max(k, l) * (max(k, l) + 1) // 2 + min(k, l)  # noqa: E731
    place = np.zeros((n * (n + 1) // 2, len(pairs) + 2 * nb + 1))
    for p, (j, i) in enumerate(pairs):
        place[tri(coord[j], coord[i]), p] += sign[j] * sign[i] * (2.0 if i != j and coord[i] == coord[j] else 1.0)
    for j in range(nb):
        if coord[j] >= 0:
            place[tri(0, coord[j]), len(pairs) + j] += sign[j]
            place[tri(1, coord[j]), len(pairs) + nb + j] += sign[j]
    place[tri(0, 0), -1] = place[tri(1, 1), -1] = 1.0
    # Indices as int32, JAX's integer type with and without x64: the cached arrays serve traces in both modes.
    index = lambda values: np.array(values, np.int32)  # noqa: E731
    return _Topology(chain, joint, chain @ joint, index([max(p, 0) for p in parent]),
                     np.array([float(p >= 0) for p in parent]), index([j for j, _ in pairs]),
                     index([i for _, i in pairs]), place, index([tri(k, l) for k in range(n) for l in range(n)]))
