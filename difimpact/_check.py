"""The one check of a value, in the two tiers of the library's validation (see :mod:`difimpact._validation`):
a concrete value raises ``ValueError`` in Python, a traced one through :func:`equinox.error_if` at run time.

A program that an entry point compiles for a call from Python is traced under :func:`checks_as_nan` instead:
there a traced check that fails makes the values it guards NaN, which the entry point's own result reports
(``nonfinite``, or a failed solve) and which the entry point raises after the program, in Python. Such a program
holds no host callback (`equinox.error_if` is one), and JAX's persistent compilation cache can keep it."""

import contextlib
import threading

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np


_MODE = threading.local()


def _is_concrete(x) -> bool:
    return not isinstance(x, jax.core.Tracer)


def _as_nan() -> bool:
    return getattr(_MODE, "as_nan", False)


@contextlib.contextmanager
def checks_as_nan():
    """Trace the body with every run-time check of :func:`check` made NaN where it fails (no host callback).

    For the program of an entry point whose result reports non-finite values and is raised after the program:
    never for a function a caller may trace inside their own ``jit``, where the check must raise."""
    before = _as_nan()
    _MODE.as_nan = True
    try:
        yield
    finally:
        _MODE.as_nan = before


def _nan_where(x, bad):
    """``x`` with every floating leaf NaN if any entry of ``bad`` is true."""
    bad = jnp.any(bad)
    return jax.tree.map(lambda leaf: jnp.where(bad, jnp.nan, leaf) if eqx.is_inexact_array(leaf) else leaf, x)


def check(x, bad, message: str):
    """Return ``x`` unchanged, raising ``ValueError(message)`` wherever ``bad`` is true (under
    :func:`checks_as_nan`, traced: ``x`` made NaN there)."""
    if _is_concrete(bad):
        if np.any(np.asarray(bad)):
            raise ValueError(message)
        return x
    if _as_nan() and any(eqx.is_inexact_array(leaf) for leaf in jax.tree.leaves(x)):
        return _nan_where(x, bad)
    return eqx.error_if(x, bad, message)
