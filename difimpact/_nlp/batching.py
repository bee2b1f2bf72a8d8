r"""Batches whose members do not wait for each other.

Under ``vmap`` a ``while_loop`` runs until its last member is done, and every member pays for every trip: a
batch of interior-point solves costs its slowest member's iteration count times the batch (on a CPU, where the
members' arithmetic is not done in parallel, that is all cost and no gain). :func:`member_by_member` gives a
function a batching rule that, on a CPU, solves the members one after another (``lax.map``), each to its own
iteration count, and on other devices vectorises them as ``vmap`` does (where the members run in parallel).
The cost of a CPU batch is then the sum of its members' costs, not the batch size times the slowest's.
"""

import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap


def member_by_member(fn):
    """`fn` (of array pytrees, returning arrays) with a batching rule: on a CPU ``lax.map`` over the members,
    elsewhere ``vmap``. The platform is the default backend's when the batched function is traced."""
    wrapped = custom_vmap(fn)

    @wrapped.def_vmap
    def rule(axis_size, in_batched, *args):
        if jax.default_backend() == "cpu":
            args = jax.tree.map(lambda x, b: x if b else jnp.broadcast_to(jnp.asarray(x), (axis_size,) + jnp.shape(x)),
                                args, tuple(in_batched))
            out = jax.lax.map(lambda a: fn(*a), args)
        else:
            axes = jax.tree.map(lambda b: 0 if b else None, tuple(in_batched))
            out = jax.vmap(fn, in_axes=axes)(*args)
        return out, jax.tree.map(lambda _: True, out)

    return wrapped
