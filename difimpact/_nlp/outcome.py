"""The Python edge of a solve: its failure raised after its program, where the result is concrete."""

import equinox as eqx

from .solution import NLPResults


def raise_if_failed(solved, throw: bool):
    """`solved` (a result with a ``result`` field: a gait, a solution) with a failed solve raised where `throw`:
    after its program, in Python, where its ``result`` is concrete (``equinox.EquinoxRuntimeError`` with the
    result's message, as ``error_if`` raises it); by ``error_if`` in the caller's program where it is traced (the
    call inside the caller's ``jit``, ``vmap`` or ``grad``). The solve's own program thus holds no host callback,
    and JAX's persistent compilation cache keeps it."""
    result = solved.result
    if not throw:
        return solved
    if result.is_traced():
        return result.error_if(solved, result != NLPResults.successful)
    if not bool(result == NLPResults.successful):
        raise eqx.EquinoxRuntimeError(NLPResults[result])
    return solved
