"""The one check of a value, in the two tiers of the library's validation (see :mod:`difimpact._validation`):
a concrete value raises ``ValueError`` in Python, a traced one through :func:`equinox.error_if` at run time."""

import equinox as eqx
import jax
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
