"""Input validation in two tiers (see STYLE.md), one function per kind of check.

Concrete values are checked in Python and raise ``ValueError``/``TypeError`` naming the argument; traced values
(inside ``jit``/``vmap``/``grad``) are checked with :func:`equinox.error_if`, which raises the same message at
run time. Inside the program of an entry point called from Python the same checks are flags that it returns and
raises after it, or NaN deeper in (:mod:`difimpact._check`). Value checks return the validated array so the check
cannot be optimised away.
"""

import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ._check import _is_concrete, check as check
from ._linalg import ldl_pivots


def _is_number(x) -> bool:
    """A Python or NumPy real number: checked in Python, even while tracing (inside ``jit`` an array made from
    it is staged, and its check would only run at run time)."""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def real(name: str, x, *, shape=None):
    """Convert ``x`` to a floating array, checking its dtype and shape (static checks only)."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"`{name}` must be a number or an array of numbers, got {type(x).__name__}.")
    try:
        arr = jnp.asarray(x)
    except (TypeError, ValueError) as err:
        raise TypeError(f"`{name}` must be a number or an array of numbers: {err}") from None
    if not (jnp.issubdtype(arr.dtype, jnp.floating) or jnp.issubdtype(arr.dtype, jnp.integer)
            or arr.dtype == bool):
        raise TypeError(f"`{name}` must have a real dtype, got {arr.dtype}.")
    if not jnp.issubdtype(arr.dtype, jnp.floating):
        arr = arr.astype(jnp.result_type(float))
    if shape is not None and arr.shape != tuple(shape):
        raise ValueError(f"`{name}` must have shape {tuple(shape)}, got {arr.shape}.")
    return arr


def stacked(name: str, values, shape: tuple[int, ...]):
    """``values`` (e.g. one field of every body), each converted by :func:`real` with ``shape``, stacked."""
    return jnp.stack([real(name, v, shape=shape) for v in values]) if values else jnp.zeros((0,) + tuple(shape))


def as_float(name: str, x, *, shape=None, finite: bool = True):
    """Convert ``x`` to a floating array, checking its dtype and shape (static) and, with ``finite``, its
    finiteness (in Python for a number, even while tracing)."""
    arr = real(name, x, shape=shape)
    if not finite:
        return arr
    if _is_number(x):
        if not math.isfinite(x):
            raise ValueError(f"`{name}` contains NaN or infinite entries.")
        return arr
    return check_finite(arr, **{name: arr})


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
    word = "non-negative" if allow_zero else "positive"
    if _is_number(x):
        if x < 0 or x == 0 and not allow_zero:
            raise ValueError(f"`{name}` must be {word}, got {x!r}.")
        return arr
    bad = (arr < 0) if allow_zero else (arr <= 0)
    return check(arr, jnp.any(bad), f"`{name}` must be {word}, got {x!r}."
                 if _is_concrete(arr) else f"`{name}` must be {word}.")


def tolerance(name: str, x, *, below: float | None = None, allow_zero: bool = False):
    """A tolerance: a finite scalar ``> 0`` (``>= 0`` with ``allow_zero``) and, if given, ``< below``
    (a relative tolerance of 1 or more accepts anything). A Python number is returned as a Python float (static
    under ``jit``); an array as a checked array."""
    arr = positive(name, x, allow_zero=allow_zero, shape=())
    if _is_number(x):
        if below is not None and x >= below:
            raise ValueError(f"`{name}` must be below {below}, got {x!r}.")
        return float(x)
    if below is None:
        return arr
    return check(arr, arr >= below, f"`{name}` must be below {below}, got {x!r}." if _is_concrete(arr)
                 else f"`{name}` must be below {below}.")


def count(name: str, x, *, minimum: int = 1) -> int:
    """A static integer option (a number of steps, phases, samples…): a Python or NumPy integer ``≥ minimum``."""
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"`{name}` must be an integer, got {x!r} ({type(x).__name__}).")
    if x < minimum:
        raise ValueError(f"`{name}` must be at least {minimum}, got {x}.")
    return int(x)


def number(name: str, x) -> float:
    """A static real option (a sign, an offset): a finite Python or NumPy number."""
    if not _is_number(x) or not math.isfinite(x):
        raise TypeError(f"`{name}` must be a finite Python number, got {x!r}.")
    return float(x)


def flag(name: str, x) -> bool:
    """A static boolean option."""
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"`{name}` must be True or False, got {x!r}.")
    return bool(x)


def instance(name: str, x, cls: type, example: str = ""):
    """``x`` must be an instance of ``cls``; a class passed instead of an instance gets its own message."""
    if isinstance(x, type):
        call = example or f"{x.__name__}()"
        raise TypeError(f"`{name}` must be an instance of {cls.__name__}, got the class {x.__name__} itself: "
                        f"pass an instance, e.g. `{call}`.")
    if not isinstance(x, cls):
        raise TypeError(f"`{name}` must be an instance of {cls.__name__}, got {type(x).__name__}.")
    return x


def names(name: str, x) -> tuple[str, ...]:
    """Point or coordinate names: one string is one name; otherwise a sequence of strings."""
    if isinstance(x, str):
        return (x,)
    if not isinstance(x, Sequence) or not all(isinstance(p, str) for p in x):
        raise TypeError(f"`{name}` must be a name or a sequence of names (strings), got {x!r}.")
    return tuple(x)


def square(name: str, x):
    """A finite square matrix ``(n, n)``."""
    arr = as_float(name, x)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"`{name}` must be a square matrix (n, n), got shape {arr.shape}.")
    return arr


def psd_matrix(name: str, x, *, definite: bool = False):
    r"""A mass matrix: finite, square, symmetric and positive semi-definite (definite with ``definite``).

    Symmetry to ``√ε`` relative (``|M − Mᵀ| ≤ √ε max|M|``). Definiteness from the pivots of the unrolled
    ``LDLᵀ`` of :mod:`difimpact._linalg` (no LAPACK call, safe under ``vmap``): by Sylvester's law of inertia
    ``M + δI`` with ``δ = √ε max_i M_ii`` has only positive pivots iff no eigenvalue of ``M`` is below ``−δ``
    (semi-definite); without the shift, every pivot above ``n ε max_i M_ii`` (definite).
    """
    M = square(name, x)
    n, eps = M.shape[0], jnp.finfo(M.dtype).eps
    scale = jnp.max(jnp.abs(M))
    M = check(M, jnp.max(jnp.abs(M - M.T)) > jnp.sqrt(eps) * scale, f"`{name}` must be symmetric.")
    diagonal = jnp.max(jnp.abs(jnp.diagonal(M)))
    shift = 0.0 if definite else jnp.sqrt(eps) * diagonal
    pivots = ldl_pivots(M + shift * jnp.eye(n, dtype=M.dtype))
    # A semi-definite M with a zero diagonal is the zero matrix (no shift, zero pivots): accepted.
    bad = ~jnp.all(pivots > n * eps * diagonal) if definite else ~jnp.all(pivots > 0) & (scale > 0)
    word = "definite" if definite else "semi-definite"
    return check(M, bad, f"`{name}` must be positive {word} (it has a "
                 f"{'non-positive' if definite else 'negative'} eigenvalue).")


def finite_result(what: str, x, inputs: str):
    """Outputs computed from validated (finite) inputs must be finite: an overflow names the inputs."""
    bad = jnp.any(jnp.stack([~jnp.all(jnp.isfinite(leaf)) for leaf in jax.tree.leaves(x)]))
    return check(x, bad, f"{what} is not finite although the inputs are finite: {inputs} are too large for "
                 "the floating-point range (overflow).")


def ordered(lower, upper, names: tuple[str, str]):
    """`lower`, checked against `upper` (of one shape) and both for NaN (no bound is ``±inf``), `names` theirs: in
    Python with the first offending index where both are concrete (``ValueError``), else at run time."""
    if _is_concrete(lower) and _is_concrete(upper):
        for name, b in zip(names, (lower, upper)):
            nan = np.flatnonzero(np.isnan(np.asarray(b)))
            if nan.size:
                raise ValueError(f"`{name}` is NaN at index {nan[0]}: a bound is a number, or ±inf for none.")
        lo, hi = np.asarray(lower), np.asarray(upper)
        bad = np.flatnonzero(lo > hi)
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"`{names[0]}` exceeds `{names[1]}` at index {i} ({lo[i]:g} > {hi[i]:g}): the bounds "
                             "admit no value.")
        return lower
    bad = jnp.any((lower > upper) | jnp.isnan(lower) | jnp.isnan(upper))
    return check(lower, bad, f"`{names[0]}` exceeds `{names[1]}` (or either is NaN): the bounds admit no value.")
