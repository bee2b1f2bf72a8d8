"""Input validation in two tiers (see STYLE.md).

Concrete values are checked in Python and raise ``ValueError`` naming the argument; traced values
(inside ``jit``/``vmap``/``grad``) are checked with :func:`equinox.error_if`, which raises the same
message at run time. Both return the validated array so the check cannot be optimised away.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np


def _is_concrete(x) -> bool:
    return not isinstance(x, jax.core.Tracer)


def check(x, bad, message: str):
    """Return ``x`` unchanged, raising ``ValueError(message)`` wherever ``bad`` is true."""
    if _is_concrete(bad):
        if np.any(np.asarray(bad)):
            raise ValueError(message)
        return x
    return eqx.error_if(x, bad, message)


def as_float(name: str, x, *, shape=None, finite: bool = True):
    """Convert ``x`` to a floating array, checking its shape (static) and, with ``finite``, its finiteness."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"`{name}` must be a number or an array of numbers, got {type(x).__name__}.")
    try:
        arr = jnp.asarray(x)
    except TypeError as err:
        raise TypeError(f"`{name}` must be a number or an array of numbers: {err}") from None
    if not (jnp.issubdtype(arr.dtype, jnp.floating) or jnp.issubdtype(arr.dtype, jnp.integer)
            or arr.dtype == bool):
        raise TypeError(f"`{name}` must have a real dtype, got {arr.dtype}.")
    if not jnp.issubdtype(arr.dtype, jnp.floating):
        arr = arr.astype(jnp.result_type(float))
    if shape is not None and arr.shape != tuple(shape):
        raise ValueError(f"`{name}` must have shape {tuple(shape)}, got {arr.shape}.")
    return check_finite(arr, **{name: arr}) if finite else arr


def check_finite(out, **arrays):
    """Return ``out``, raising ``"`name` contains NaN or infinite entries."`` for each named array that has
    one. Attached to a result computed from the arrays, the check leaves them unchanged, so that several
    results computed from the same array share its subexpressions."""
    for name, x in arrays.items():
        out = check(out, ~jnp.all(jnp.isfinite(x)), f"`{name}` contains NaN or infinite entries.")
    return out


def positive(name: str, x, *, allow_zero: bool = False, shape=None):
    """Validate a physical parameter: finite and ``> 0`` (``>= 0`` with ``allow_zero``), of ``shape`` if given."""
    arr = as_float(name, x, shape=shape)
    bad = (arr < 0) if allow_zero else (arr <= 0)
    word = "non-negative" if allow_zero else "positive"
    return check(arr, jnp.any(bad), f"`{name}` must be {word}, got {x!r}."
                 if _is_concrete(arr) else f"`{name}` must be {word}.")
