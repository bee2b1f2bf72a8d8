"""The options of :func:`~difimpact.impact` at its Python edge and inside its program: which points and
coordinates are constrained (static: they decide the shapes), and their values (traced)."""

from collections.abc import Mapping

import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Bool
from .._models.base import AbstractPlanarModel
from .._validation import _is_number, as_float, instance, names


def traced_values(*args, **kwargs) -> tuple[tuple, dict]:
    """The arguments of :func:`~difimpact.impact` (and :func:`~difimpact.pushoff_impact`) with the values of
    `blocked` and `restitution` that are Python numbers as checked float arrays and the Python booleans of
    `blocked_active` as boolean arrays. ``eqx.filter_jit`` makes a Python number a compile-time constant, so each
    new value would compile a new program; an array is traced, and one program serves every value. The keys
    (coordinates and points) stay static: they decide the constraint rows."""
    for arg in ("blocked", "restitution", "blocked_active"):
        x = kwargs.get(arg)
        if isinstance(x, Mapping):
            kwargs[arg] = {k: _traced(arg, k, v) for k, v in x.items()}
    return args, kwargs


def _traced(arg: str, key, value):
    if arg == "blocked_active":
        return jnp.asarray(value) if isinstance(value, (bool, np.bool_)) else value
    return as_float(f"{arg}[{key!r}]", value, shape=()) if _is_number(value) else value


def massless_keep(massless: str) -> bool | str:
    """`massless` as :func:`~difimpact._impact.kkt.solve_kkt`'s `keep`: ``False``, ``True`` or ``"limit"``."""
    if massless not in ("error", "keep", "limit"):
        raise ValueError(f"`massless` must be 'error', 'keep' or 'limit', got {massless!r}.")
    return {"error": False, "keep": True, "limit": "limit"}[massless]


def _coordinate(model: AbstractPlanarModel, c) -> int:
    names = model.coordinate_names
    if isinstance(c, str):
        if c not in names:
            raise ValueError(f"`blocked`: unknown coordinate {c!r}; this model has {list(names)}.")
        return names.index(c)
    if isinstance(c, int) and not isinstance(c, bool) and -len(names) <= c < len(names):
        return c % len(names)
    raise ValueError(f"`blocked`: {c!r} is neither a coordinate name nor an index in 0..{len(names) - 1}.")


def check_options(model, stick, blocked, unilateral, restitution, unilateral_tangent):
    """The static options, checked: points (a single name is one point), blocked rates by coordinate (at least
    one constraint in all), restitution by point."""
    instance("model", model, AbstractPlanarModel)
    if unilateral_tangent not in ("free", "stick", "always"):
        raise ValueError(f"`unilateral_tangent` must be 'free', 'stick' or 'always', got {unilateral_tangent!r}.")
    stick, unilateral = names("stick", stick), names("unilateral", unilateral)
    points = stick + unilateral
    if len(set(points)) != len(points):
        raise ValueError(f"a point may appear once in `stick` and `unilateral`, got {list(points)}.")
    if isinstance(blocked, str):
        raise ValueError(f"`blocked` must be a sequence or a mapping of coordinates, got {blocked!r}.")
    rates = dict(blocked) if isinstance(blocked, Mapping) else {c: 0.0 for c in blocked}
    coords = [_coordinate(model, c) for c in rates]
    if len(set(coords)) != len(coords):
        raise ValueError(f"`blocked` names a coordinate twice: {list(rates)}.")
    if not points and not coords:
        raise ValueError("`impact` needs at least one post-impact constraint: pass `stick`, `blocked` or "
                         "`unilateral` (without any, nothing collides and q̇⁺ = q̇⁻).")
    if restitution is not None and not isinstance(restitution, Mapping):
        raise TypeError(f"`restitution` must be a mapping {{point: e}}, got {restitution!r}.")
    restitution = {} if restitution is None else dict(restitution)
    for p in restitution:
        if p not in stick:
            raise ValueError(f"`restitution` point {p!r} is not in `stick` {list(stick)}.")
    return stick, unilateral, rates, coords, restitution


def _blocked_active(x, rates) -> Bool[Array, " b"]:
    """`blocked_active`, checked, as one flag per coordinate of `blocked` (``True`` where it names none)."""
    if not isinstance(x, Mapping):
        raise TypeError(f"`blocked_active` must be a mapping {{coordinate of `blocked`: bool}}, got {x!r}.")
    for c in x:
        if c not in rates:
            raise ValueError(f"`blocked_active` names {c!r}, which is not in `blocked` {list(rates)}.")
    flags = []
    for c in rates:
        f = jnp.asarray(x.get(c, True))
        if f.dtype != bool or f.shape != ():
            raise TypeError(f"`blocked_active[{c!r}]` must be a boolean scalar, got {f.dtype} {f.shape}.")
        flags.append(f)
    return jnp.stack(flags) if flags else jnp.zeros((0,), bool)


def mask_blocked(A_fixed, stick, rates, blocked_active):
    """``A_fixed`` with the rows of the coordinates that `blocked_active` unblocks zeroed, and the flags of its rows
    (``None`` without `blocked_active`: every row enforced)."""
    if blocked_active is None:
        return A_fixed, None
    active = jnp.concatenate([jnp.ones(2 * len(stick), bool), _blocked_active(blocked_active, rates)])
    return jnp.where(active[:, None], A_fixed, 0.0), active
