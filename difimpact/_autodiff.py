"""Automatic-differentiation helpers."""

from collections.abc import Callable

import jax

from ._custom_types import Array, Float, Scalar


def forward_mode_gradient(fn: Callable[[Float[Array, " d"]], Scalar]) -> Callable[[Float[Array, " d"]], Scalar]:
    """`fn` with a reverse-mode derivative computed in forward mode, ``∇fn = jax.jacfwd(fn)``: with a few
    parameters ``d`` and a diffrax solve inside, ``d`` tangents cost less than reverse mode through the solve
    (docs/design.md). `fn` must support forward mode (``diffrax.ForwardMode()`` for a diffrax solve); the result
    supports ``jax.grad`` and ``jax.vmap``, not ``jax.jacfwd``."""

    def value_twice(x):
        y = fn(x)
        return y, y

    @jax.custom_vjp
    def wrapped(x):
        return fn(x)

    def forward(x):
        jac, y = jax.jacfwd(value_twice, has_aux=True)(x)
        return y, jac

    wrapped.defvjp(forward, lambda jac, cotangent: (cotangent * jac,))
    return wrapped
