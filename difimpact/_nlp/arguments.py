"""The checks of :func:`~difimpact.solve_nlp`'s arguments before anything is traced: the types of the functions
and options, the starting point, and the shapes of what the functions return (by :func:`jax.eval_shape`, nothing
compiled)."""

from collections.abc import Callable

import equinox as eqx
import jax

from .._validation import as_float, instance
from .solution import NLPOptions
from .sparsity import Sparsity


class Separate(eqx.Module):
    """``(c, d)`` of separate `equality` and `inequality` functions (either ``None``)."""

    equality: Callable | None = eqx.field(static=True)
    inequality: Callable | None = eqx.field(static=True)

    def __call__(self, x, p):
        return (None if self.equality is None else self.equality(x, p),
                None if self.inequality is None else self.inequality(x, p))


def checked_x0(objective, x0, equality, inequality, constraints, sparsity, options, finite: bool = True):
    """`x0` as a float vector, after checking the arguments' types (and, with `finite`, `x0`'s values)."""
    instance("options", options, NLPOptions)
    if not callable(objective):
        raise TypeError(f"`objective` must be callable f(x, params), got {objective!r}.")
    for name, fn in (("equality", equality), ("inequality", inequality), ("constraints", constraints)):
        if fn is not None and not callable(fn):
            raise TypeError(f"`{name}` must be callable or None, got {fn!r}.")
    if constraints is not None and (equality is not None or inequality is not None):
        raise TypeError("Give `constraints` (both kinds from one function) or `equality`/`inequality`, not both.")
    if sparsity is not None and not isinstance(sparsity, Sparsity):
        raise TypeError(f"`sparsity` must be a Sparsity or None, got {sparsity!r}.")
    x0 = as_float("x0", x0, finite=finite)
    if x0.ndim != 1:
        raise ValueError(f"`x0` must be a vector (n,), got shape {x0.shape}.")
    return x0


def sizes(objective, constraints, x0, params) -> tuple[int, int]:
    """The numbers of equalities and of inequalities, after checking (by their shapes alone, nothing compiled)
    that `objective` returns a scalar and `constraints` a pair of vectors (or scalars, or ``None``)."""
    value = jax.eval_shape(objective, x0, params)
    if not hasattr(value, "shape") or value.shape != ():
        got = f"shape {value.shape}" if hasattr(value, "shape") else type(value).__name__
        raise TypeError(f"`objective` must return a scalar f(x, params), got {got}.")
    out = jax.eval_shape(constraints, x0, params)
    names = ("equality", "inequality") if isinstance(constraints, Separate) else ("constraints",) * 2
    if not (isinstance(out, tuple | list) and len(out) == 2):
        raise TypeError(f"`constraints` must return a pair (c, d) (either None), got {out!r}.")
    for name, kind, v in zip(names, ("c", "d"), out):
        if v is not None and (not hasattr(v, "ndim") or v.ndim > 1):
            got = f"shape {v.shape}" if hasattr(v, "shape") else type(v).__name__
            raise TypeError(f"`{name}` must return a vector {kind}(x, params) (or a scalar, or None), got {got}.")
    return tuple(0 if v is None else 1 if v.ndim == 0 else v.shape[0] for v in out)
