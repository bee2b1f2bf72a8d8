"""The one check of a value, in the two tiers of the library's validation (see :mod:`difimpact._validation`):
a concrete value raises ``ValueError`` in Python, a traced one through :func:`equinox.error_if` at run time.

An entry point called from Python compiles a program without host callbacks (`equinox.error_if` is one), so that
JAX's persistent compilation cache can keep it (:func:`program`): its checks are traced under a record
(:func:`checks_recorded`). A check traced at the program's top level is recorded as a flag that the program
returns, and the entry point raises its message after the program, in Python; a check deeper in (inside a loop,
a ``vmap``, a nested ``jit`` or a custom derivative) makes the values it guards NaN instead, which the entry
point's own result reports (``nonfinite``, a failed step or solve). Inside a caller's own ``jit``, ``vmap`` or
``grad`` every check stays an ``equinox.error_if``."""

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


_MODE = threading.local()


def _is_concrete(x) -> bool:
    return not isinstance(x, jax.core.Tracer)


class Failures(eqx.Module):
    """The checks recorded at a program's top level: check ``i`` failed where ``bad[i]``, with message
    ``messages[i][index[i]]``."""

    bad: Bool[Array, " k"]
    index: Int[Array, " k"]
    messages: tuple[tuple[str, ...], ...] = eqx.field(static=True)

    def raise_first(self):
        """Raise ``equinox.EquinoxRuntimeError`` with the message of the first failed check (concrete values)."""
        bad = np.flatnonzero(np.asarray(self.bad))
        if bad.size:
            i = int(bad[0])
            raise eqx.EquinoxRuntimeError(self.messages[i][int(self.index[i])])


class _Record:
    """The checks of one program being traced, and the trace they belong to."""

    def __init__(self):
        self.trace = jex.get_opaque_trace_state()
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


def _record() -> _Record | None:
    return getattr(_MODE, "record", None)


def _as_nan() -> bool:
    return getattr(_MODE, "as_nan", False) or _record() is not None


@contextlib.contextmanager
def checks_as_nan():
    """Trace the body with every run-time check made NaN where it fails (no host callback): for a program whose
    result reports non-finite values (a solve) and is raised after it."""
    before = getattr(_MODE, "as_nan", False)
    _MODE.as_nan = True
    try:
        yield
    finally:
        _MODE.as_nan = before


@contextlib.contextmanager
def checks_recorded():
    """Trace the body (inside the program's function) with its run-time checks recorded: yields the
    :class:`_Record`, whose ``failures()`` the program returns."""
    before = _record()
    _MODE.record = _Record()
    try:
        yield _MODE.record
    finally:
        _MODE.record = before


def mode() -> str:
    """How run-time checks are traced now: ``"raise"`` (``equinox.error_if``), ``"nan"`` or ``"record"``. A
    nested ``jit`` takes it as a static argument, so that its program in one mode is not reused in another."""
    return "record" if _record() is not None else "nan" if _as_nan() else "raise"


def _nan_where(x, bad):
    """``x`` with every floating leaf NaN if any entry of ``bad`` is true."""
    bad = jnp.any(bad)
    return jax.tree.map(lambda leaf: jnp.where(bad, jnp.nan, leaf) if eqx.is_inexact_array(leaf) else leaf, x)


def _branched(x, bad, index, messages: tuple[str, ...]):
    """``x``, with message ``messages[index]`` raised where ``bad``, traced in the current mode."""
    record = _record()
    if record is not None and record.at_top():
        record.add(bad, index, messages)
        return x
    if _as_nan() and any(eqx.is_inexact_array(leaf) for leaf in jax.tree.leaves(x)):
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


def program(fn: Callable, normalise: Callable[..., tuple[tuple, dict]] | None = None) -> Callable:
    """An entry point compiled with ``eqx.filter_jit``, whose program holds no host callback when called from
    Python: its checks recorded (:func:`checks_recorded`) and raised after it. Called with traced arguments (in a
    caller's ``jit``, ``vmap`` or ``grad``) it is the plain ``eqx.filter_jit(fn)``, checks by ``error_if``.
    `normalise(*args, **kwargs)`, if given, returns the ``(args, kwargs)`` to pass, in Python on every call."""
    traced = eqx.filter_jit(fn)

    @eqx.filter_jit
    def recorded(*args, **kwargs):
        with checks_recorded() as record:
            out = fn(*args, **kwargs)
        return out, record.failures()

    @functools.wraps(fn)
    def edge(*args, **kwargs):
        if normalise is not None:
            args, kwargs = normalise(*args, **kwargs)
        if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves((args, kwargs))):
            return traced(*args, **kwargs)
        out, failures = recorded(*args, **kwargs)
        failures.raise_first()
        return out

    edge.recorded = recorded  # the program of a call from Python, for lowering it
    return edge
