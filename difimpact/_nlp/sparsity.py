r"""Derivatives of the problem's functions, dense or compressed by a column colouring.

A transcribed optimal-control problem has sparse derivatives: a collocation point's variables meet only their
own and their neighbours' constraints, and the Hessian of the Lagrangian is block diagonal but for a few
variables (a free final time). Columns that share no nonzero row can be seeded together: with ``S`` the
``n × p`` matrix of the colours' indicator vectors, ``J S`` takes ``p`` forward-mode products instead of ``n``,
and ``J_{ij} = (J S)_{i, \text{colour}(j)}`` on the pattern (Curtis, Powell & Reid 1974; Griewank & Walther,
*Evaluating Derivatives*, 2nd ed., §8.3). For the Hessian a variable whose row is dense takes a colour of its
own and its row is read from its column by symmetry, ``H_{ij} = (H S)_{j, \text{colour}(i)}`` (§8.4).
"""

import jax
import jax.numpy as jnp
import numpy as np


class Sparsity:
    """Column colourings and patterns of ``∇[c; d]`` (``(m_c + m_d) × n``) and of the Hessian of the Lagrangian
    (``n × n``), with `hessian_dense` the variables whose Hessian rows may be dense. Checked on construction: two
    columns of one colour share no nonzero row (for the Hessian, outside the dense rows)."""

    def __init__(self, jacobian_colours, jacobian_pattern, hessian_colours, hessian_pattern, hessian_dense):
        self.jacobian_colours = np.asarray(jacobian_colours, int)
        self.jacobian_pattern = np.asarray(jacobian_pattern, bool)
        self.hessian_colours = np.asarray(hessian_colours, int)
        self.hessian_pattern = np.asarray(hessian_pattern, bool)
        self.hessian_dense = np.asarray(hessian_dense, bool)
        _check(self.jacobian_pattern, self.jacobian_colours, "Jacobian")
        _check(self.hessian_pattern[~self.hessian_dense], self.hessian_colours, "Hessian")
        for i in np.flatnonzero(self.hessian_dense):
            if np.sum(self.hessian_colours == self.hessian_colours[i]) != 1:
                raise ValueError(f"Sparsity: the dense Hessian variable {i} must have a colour of its own.")
        self._key = tuple(a.tobytes() + str(a.shape).encode() for a in (
            self.jacobian_colours, self.jacobian_pattern, self.hessian_colours, self.hessian_pattern,
            self.hessian_dense))

    def __hash__(self):
        return hash(self._key)

    def __eq__(self, other):
        return isinstance(other, Sparsity) and self._key == other._key


def _check(pattern, colours, what):
    for c in np.unique(colours):
        if np.any(np.sum(pattern[:, colours == c], axis=1) > 1):
            raise ValueError(f"Sparsity: two {what} columns of colour {c} share a nonzero row.")


def _seeds(colours, dtype):
    return jnp.asarray(np.eye(colours.max() + 1)[colours], dtype)  # (n, p)


def _compressed(fn, x, colours):
    """``(fn(x), ∂fn · S)`` by one forward-mode product per colour."""
    seeds = _seeds(colours, x.dtype)
    value, tangents = jax.vmap(lambda s: jax.jvp(fn, (x,), (s,)), out_axes=(None, -1))(seeds.T)
    return value, tangents


def values_and_jacobians(f, cd, x, sparsity: Sparsity | None):
    """``(f, c, d)`` and ``(∇f, ∇c, ∇d)`` at ``x``; `cd` gives ``(c, d)`` from one evaluation."""
    if sparsity is None:
        twice = lambda v: (v, v)  # noqa: E731 (the values as the aux output: the functions traced once)
        jac, value = jax.jacfwd(lambda z: twice((f(z),) + tuple(cd(z))), has_aux=True)(x)
        return value, jac
    value_f, g = jax.value_and_grad(f)(x)
    (vc, vd), (tc, td) = _compressed(lambda z: tuple(cd(z)), x, sparsity.jacobian_colours)
    compressed = jnp.concatenate([tc, td], axis=0)
    J = jnp.where(sparsity.jacobian_pattern, compressed[:, sparsity.jacobian_colours], 0.0)
    mc = vc.shape[0]
    return (value_f, vc, vd), (g, J[:mc], J[mc:])


def hessian(f, cd, x, lam_c, lam_d, sparsity: Sparsity | None):
    """The Hessian of the Lagrangian ``f + λ_cᵀ c + λ_dᵀ d`` at ``x`` (`cd` as in :func:`values_and_jacobians`)."""

    def lagrangian(z):
        c, d = cd(z)
        return f(z) + lam_c @ c + lam_d @ d

    if sparsity is None:
        return jax.hessian(lagrangian)(x)
    colours = sparsity.hessian_colours
    _, HS = _compressed(jax.grad(lagrangian), x, colours)
    by_row = HS[:, colours]  # [i, j] = (H S)_{i, colour(j)}
    H = jnp.where(sparsity.hessian_dense[:, None], by_row.T, by_row)
    return jnp.where(sparsity.hessian_pattern, H, 0.0)
