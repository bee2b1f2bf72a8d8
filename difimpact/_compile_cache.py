"""JAX's persistent compilation cache, extended to programs that call back to Python.

JAX does not store a program with host callbacks in its persistent cache, and every difimpact program has
some: the run-time checks of :func:`equinox.error_if` are ``jax.pure_callback``\\ s. On the CPU a callback is
an FFI custom call (``xla_ffi_python_cpu_callback``) that names its Python function by its position in the
program's list of callbacks; the compiled program holds no pointer to it, and
``Client.deserialize_executable`` takes the list. A stored program can therefore be loaded with the
callbacks of the process that has just traced it: a cache hit means the same program text, so the same list
in the same order (the error messages live in the Python functions, not in the text).

:func:`store_programs_with_callbacks` makes JAX do so, on the CPU and for the JAX versions where callbacks
are lowered this way (0.10); elsewhere it leaves JAX as it is (programs with callbacks then compile every
time, the others are still cached).
"""

import functools
import inspect
import threading

import jax

_VERSIONS = ((0, 10),)  # JAX versions whose CPU callbacks are indexed FFI calls (checked by the test)
_local = threading.local()


def _patch(compiler, compilation_cache) -> None:
    compile_or_get_cached = compiler.compile_or_get_cached
    cache_write = compiler._cache_write
    get_executable_and_time = compilation_cache.get_executable_and_time

    @functools.wraps(compile_or_get_cached)
    def compile_with_callbacks(backend, computation, devices, compile_options, host_callbacks, *args, **kwargs):
        outer = getattr(_local, "callbacks", ())
        _local.callbacks = tuple(host_callbacks) if backend.platform == "cpu" else ()
        try:
            return compile_or_get_cached(backend, computation, devices, compile_options, host_callbacks, *args,
                                         **kwargs)
        finally:
            _local.callbacks = outer

    @functools.wraps(cache_write)
    def write_with_callbacks(cache_key, compile_time_secs, module_name, backend, executable, host_callbacks):
        callbacks = [] if backend.platform == "cpu" else host_callbacks
        return cache_write(cache_key, compile_time_secs, module_name, backend, executable, callbacks)

    @functools.wraps(get_executable_and_time)
    def get_with_callbacks(cache_key, compile_options, backend, executable_devices):
        callbacks = list(getattr(_local, "callbacks", ()))
        cache = compilation_cache._get_cache(backend) if callbacks else None
        if cache is None:
            return get_executable_and_time(cache_key, compile_options, backend, executable_devices)
        stored = cache.get(cache_key)
        if stored is None:
            return None, None
        serialized, compile_time = compilation_cache.extract_executable_and_time(
            compilation_cache.decompress_executable(stored))
        loaded = backend.deserialize_executable(serialized, executable_devices, compile_options, callbacks)
        return loaded, compile_time

    compile_with_callbacks._difimpact_callbacks = True
    compiler.compile_or_get_cached = compile_with_callbacks
    compiler._cache_write = write_with_callbacks
    compilation_cache.get_executable_and_time = get_with_callbacks


def store_programs_with_callbacks() -> bool:
    """Let JAX's persistent compilation cache store and reload CPU programs with host callbacks.

    **Returns:** whether it does (``False`` on JAX versions other than those listed in ``_VERSIONS``, or when
    the private functions it wraps have changed).
    """
    if jax.__version_info__[:2] not in _VERSIONS:
        return False
    try:
        from jax._src import compilation_cache, compiler
    except ImportError:
        return False
    if getattr(compiler.compile_or_get_cached, "_difimpact_callbacks", False):
        return True
    # (module, function, its leading parameters, whether those are all of them)
    expected = [(compiler, "compile_or_get_cached", ("backend", "computation", "devices", "compile_options",
                                                     "host_callbacks"), False),
                (compiler, "_cache_write", ("cache_key", "compile_time_secs", "module_name", "backend",
                                            "executable", "host_callbacks"), True),
                (compilation_cache, "get_executable_and_time", ("cache_key", "compile_options", "backend",
                                                                "executable_devices"), True),
                (compilation_cache, "_get_cache", ("backend",), True),
                (compilation_cache, "decompress_executable", (), False),
                (compilation_cache, "extract_executable_and_time", (), False)]
    for module, name, params, exact in expected:
        fn = getattr(module, name, None)
        got = tuple(inspect.signature(fn).parameters) if callable(fn) else None
        if got is None or got[:len(params)] != params or (exact and got != params):
            return False
    _patch(compiler, compilation_cache)
    return True
