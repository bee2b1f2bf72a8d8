"""The one check of a value, in the two tiers of the library's validation (see :mod:`difimpact._validation`):
a concrete value raises ``ValueError`` in Python, a traced one through :func:`equinox.error_if` at run time.

An entry point called from Python compiles a program without host callbacks (`equinox.error_if` is one), so that
JAX's persistent compilation cache can keep it (:func:`program`). A check traced at the top level of the entry
point's function is recorded as a flag that the program returns, and the entry point raises its message after the
program, in Python; called inside a caller's own ``jit``, ``vmap`` or ``grad``, that check is an ``error_if`` in
the caller's program. A check deeper in (inside a solver's loop, a ``vmap``, a nested ``jit`` or a custom
derivative) makes the values it guards NaN in both cases, which the entry point's own result reports
(``nonfinite``, a failed step or solve). Outside an entry point every traced check is an ``error_if``."""

import contextlib
import functools
import threading
from collections.abc import Callable

import equinox as eqx
import jax
import jax.extend.core as jex
import jax.numpy as jnp
import numpy as np

from ._custom_types import Array, Bool, Int
from ._exported import PROGRAM_OPTIONS, inside_a_trace, stored

_MODE = threading.local()


def _is_concrete(x) -> bool:
    return not isinstance(x, jax.core.Tracer)


class Failures(eqx.Module):
    """The checks recorded at a program's top level: check ``i`` failed where ``bad[i]``, with message
    ``messages[i][index[i]]``."""

    bad: Bool[Array, " k"]
    index: Int[Array, " k"]
    messages: tuple[tuple[str, ...], ...] = eqx.field(static=True)

    def raise_first(self, out):
        """`out`, raising the message of the first failed check: ``equinox.EquinoxRuntimeError`` in Python where
        the flags are concrete, by ``equinox.error_if`` in the caller's program where they are traced (an entry
        point called with constant arguments inside a caller's ``jit``)."""
        if not _is_concrete(self.bad):
            for i, messages in enumerate(self.messages):
                out = eqx.internal.branched_error_if(out, self.bad[i], self.index[i], messages)
            return out
        bad = np.flatnonzero(np.asarray(self.bad))
        if bad.size:
            i = int(bad[0])
            raise eqx.EquinoxRuntimeError(self.messages[i][int(self.index[i])])
        return out


class _Scope:
    """The checks of one entry point's program being traced, and the trace they belong to (its top level)."""

    def __init__(self, record: bool):
        self.trace = jex.get_opaque_trace_state()
        self.record = record
        self.bad, self.index, self.messages = [], [], []

    def at_top(self) -> bool:
        return jex.get_opaque_trace_state() == self.trace

    def add(self, bad, index, messages: tuple[str, ...]):
        self.bad.append(jnp.any(bad))
        self.index.append(jnp.asarray(index, jnp.int32))
        self.messages.append(messages)

    def failures(self) -> Failures:
        return Failures(jnp.stack(self.bad) if self.bad else jnp.zeros(0, bool),
                        jnp.stack(self.index) if self.index else jnp.zeros(0, jnp.int32), tuple(self.messages))


def _scope() -> _Scope | None:
    return getattr(_MODE, "scope", None)


def _as_nan() -> bool:
    return getattr(_MODE, "as_nan", False) or _scope() is not None


@contextlib.contextmanager
def checks_as_nan():
    """Trace the library's run-time checks inside the body as NaN where they fail, instead of raising.

    Inside a function you compile with `jax.jit`, an entry point's checks (a point above the ground, a contact
    separating, a walker falling back) are ``equinox.error_if``: host callbacks, which raise, but which keep JAX's
    persistent compilation cache (:func:`~difimpact.use_compilation_cache`) from storing your program, so that every
    new process compiles it again. Traced inside this context, a check that fails makes the values it guards NaN,
    and what is computed from them: the program holds no host callback and the cache keeps it. Nothing raises then:
    test the solution's ``result`` (not ``successful`` wherever a check failed) or the values for NaN yourself, as
    a quantity the failed check does not reach may keep a number (the impulse of a point above the ground is
    zero). Calls from Python with concrete arguments are not affected (they raise, as always).

    ```python
    def rates(q, qdot):
        with di.checks_as_nan():  # inside the traced function
            return di.frictional_impact(walker, q, qdot, "Q", friction=di.Coulomb(0.75)).qdot_plus
    jax.jit(rates)(q, qdot)  # NaN where the tip is above the ground, instead of an error
    ```
    """
    before = getattr(_MODE, "as_nan", False)
    _MODE.as_nan = True
    try:
        yield
    finally:
        _MODE.as_nan = before


@contextlib.contextmanager
def entry_point(record: bool):
    """Trace the body (an entry point's function, inside its program) with the checks at its top level recorded
    (`record`; the program returns ``scope.failures()``) or left to ``equinox.error_if``, and every deeper check
    made NaN: in both cases alike, so that a nested ``jit`` (a solver's loop) traced in one is reused in the other
    as it is. Yields the :class:`_Scope`."""
    before = _scope()
    _MODE.scope = _Scope(record)
    try:
        yield _MODE.scope
    finally:
        _MODE.scope = before


def mode() -> str:
    """How a run-time check traced here is applied: ``"raise"`` (``equinox.error_if``), ``"record"`` (a flag the
    program returns) or ``"nan"``. A nested ``jit`` with checks in it takes it as a static argument, so that its
    program in one mode is not reused in another."""
    scope = _scope()
    if scope is not None and scope.at_top():
        return "record" if scope.record else "raise"
    return "nan" if _as_nan() else "raise"


def _nan_where(x, bad):
    """``x`` with every floating leaf NaN if any entry of ``bad`` is true."""
    bad = jnp.any(bad)
    return jax.tree.map(lambda leaf: jnp.where(bad, jnp.nan, leaf) if eqx.is_inexact_array(leaf) else leaf, x)


def _branched(x, bad, index, messages: tuple[str, ...]):
    """``x``, with message ``messages[index]`` raised where ``bad``, traced in the current :func:`mode`."""
    how = mode()
    if how == "record":
        _scope().add(bad, index, messages)
        return x
    if how == "nan" and any(eqx.is_inexact_array(leaf) for leaf in jax.tree.leaves(x)):
        return _nan_where(x, bad)
    return eqx.internal.branched_error_if(x, bad, index, messages)


def check(x, bad, message: str):
    """Return ``x`` unchanged, raising ``ValueError(message)`` wherever ``bad`` is true (traced: in the current
    mode, see the module's docstring)."""
    if _is_concrete(bad):
        if np.any(np.asarray(bad)):
            raise ValueError(message)
        return x
    return _branched(x, bad, 0, (message,))


def result_check(x, result, bad):
    """``result.error_if(x, bad)`` of an ``equinox.Enumeration`` item, traced in the current mode."""
    return _branched(x, bad, result._value, result._enumeration._index_to_message)


def failed_check(x, result, results, nonfinite: str):
    """``x``, raising on a failed `result` (an item of `results`): ``nonfinite`` (what overflowed, and why) for
    ``results.nonfinite``, any other failure with its item's message."""
    x = _branched(x, result == results.nonfinite, 0, (nonfinite,))
    return result_check(x, result, result != results.successful)


def _traced_as(fn: Callable, record: bool) -> Callable:
    """`fn` traced under :func:`entry_point`: with `record`, returning ``(out, failures)``."""

    @functools.wraps(fn)  # the program named for the entry point, in JAX's logs and its cache's file names
    def traced(*args, **kwargs):
        with entry_point(record) as scope:
            out = fn(*args, **kwargs)
            return (out, scope.failures()) if record else out

    return traced


def program(fn: Callable, normalise: Callable[..., tuple[tuple, dict]] | None = None) -> Callable:
    """An entry point compiled with ``eqx.filter_jit``, whose program holds no host callback when called from
    Python: the checks at its top level recorded and raised after it (:func:`entry_point`). Called with traced
    arguments (in a caller's ``jit``, ``vmap`` or ``grad``) they are ``equinox.error_if`` in the caller's program.
    `normalise(*args, **kwargs)`, if given, returns the ``(args, kwargs)`` to pass, in Python on every call (and
    may check them there). Called inside another entry point's function it is traced into that one's program.

    The program of a call from Python goes through :func:`difimpact._exported.stored`, under the entry point's
    name: with the store on, a later process calls it without tracing `fn` again. Its flags are outputs like its
    result, so a stored program's failures raise after it with the same messages.
    """
    traced = eqx.filter_jit(_traced_as(fn, record=False))
    recorded = eqx.filter_jit(_traced_as(fn, record=True))
    kept = stored(fn.__name__, PROGRAM_OPTIONS)(recorded)  # its traced program kept across processes (store on)

    @functools.wraps(fn)
    def edge(*args, **kwargs):
        if normalise is not None:
            args, kwargs = normalise(*args, **kwargs)
        traced_args = any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves((args, kwargs)))
        if _as_nan() and (traced_args or inside_a_trace()):  # inside a function being traced with its checks as
            return fn(*args, **kwargs)  # NaN (another entry point's, or a caller's in checks_as_nan): part of it
        if traced_args:
            return traced(*args, **kwargs)
        out, failures = kept(*args, **kwargs)
        return failures.raise_first(out)

    edge.recorded = recorded  # the program of a call from Python, for lowering it
    return edge
