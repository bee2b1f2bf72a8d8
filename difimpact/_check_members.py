"""A run-time check that names the failing member of a ``jax.vmap`` batch.

``equinox.error_if``'s message is fixed when the program is traced, and the check does not see the batch axis: under a
plain ``vmap`` a failed check says what failed but not in which member. :func:`check_members` raises the message of
:func:`difimpact._check.check` with the member's index appended, ``(member 3 of a jax.vmap batch)``, or under nested
``vmap``s ``(member (1, 3) of nested jax.vmap batches)``, outermost first: the first failing member (in row-major
order) is named. It is a ``jax.custom_batching.custom_vmap`` rule that sees the batch axis and its size: the flag and
the index pass through it, never the checked value, whose derivatives are those of :func:`check`.

A batch past :data:`MAX_NAMED` members (all axes together) keeps the index of its inner axes only. Where checks are
recorded or made NaN (:mod:`difimpact._check`'s modes), or on concrete values, this is :func:`~difimpact._check.check`.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap

from ._check import _is_concrete, check, mode

MAX_NAMED = 65536  # messages kept for one check (one per member)


def _render(message: str, member: tuple[int, ...]) -> str:
    if not member:
        return message
    if len(member) == 1:
        return f"{message} (member {member[0]} of a jax.vmap batch)"
    return f"{message} (member ({', '.join(map(str, member))}) of nested jax.vmap batches)"


def _named(message: str, members: tuple[tuple[int, ...], ...]):
    """``flag(bad, index)``: `bad` (a scalar), raising the message of ``members[index]`` where it is true; under
    ``vmap`` the first failing member's index joins the members'."""

    @custom_vmap
    def flag(bad, index):
        return eqx.internal.branched_error_if(bad, bad, index, tuple(_render(message, m) for m in members))

    @flag.def_vmap
    def rule(axis_size, in_batched, bad, index):
        if not any(in_batched):  # neither batched at this level: nothing member-specific here
            return flag(bad, index), False
        bad, index = (x if b else jnp.broadcast_to(x, (axis_size,)) for x, b in zip((bad, index), in_batched))
        if axis_size * len(members) > MAX_NAMED:
            first = jnp.argmax(bad)
            return jnp.broadcast_to(_named(message, members)(jnp.any(bad), index[first]), (axis_size,)), True
        first = jnp.argmax(bad)  # the first failing member (0 where none fails: then no error)
        outer = tuple((i,) + m for i in range(axis_size) for m in members)
        out = _named(message, outer)(jnp.any(bad), first * len(members) + index[first])
        return jnp.broadcast_to(out, (axis_size,)), True

    return flag


def check_members(x, bad, message: str):
    """:func:`difimpact._check.check` (``x`` unchanged, ``message`` raised wherever ``bad``), naming under
    ``jax.vmap`` the first member whose ``bad`` holds (see the module's docstring)."""
    if _is_concrete(bad) or mode() != "raise":
        return check(x, bad, message)
    flag = _named(message, ((),))(jnp.any(bad), jnp.asarray(0, jnp.int32))
    # x depends on the checked flag, so that the check stays in the program; where it fails the error is raised
    return jax.tree.map(lambda leaf: jnp.where(flag, jnp.nan, leaf) if eqx.is_inexact_array(leaf) else leaf, x)

