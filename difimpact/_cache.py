"""JAX's persistent compilation cache, switched on in one call: the programs a process compiles are kept on disk
and loaded by the next process (a second run of a script, a restarted notebook kernel)."""

import importlib.metadata
import os
import pathlib
import sys


def _version() -> str:
    try:
        return importlib.metadata.version("difimpact")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout without metadata
        return "0.0.0"


def _default_folder() -> pathlib.Path:
    """``difimpact/jax/<version>`` in the user's cache folder: ``$XDG_CACHE_HOME`` (by default ``~/.cache``),
    ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or pathlib.Path.home() / "AppData" / "Local"
    elif sys.platform == "darwin":
        base = pathlib.Path.home() / "Library" / "Caches"
    else:
        base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(base) / "difimpact" / "jax" / _version()


def _writable(path, given: str | None) -> pathlib.Path:
    """The folder of :func:`use_compilation_cache`'s `path` (``None``: `given`, the folder JAX already uses, else
    the default), absolute, created, checked writable."""
    if path is None:
        folder = pathlib.Path(given) if given else _default_folder()
    elif isinstance(path, (str, os.PathLike)):
        folder = pathlib.Path(os.fspath(path))
        if not str(path).strip():
            raise ValueError("use_compilation_cache: `path` is empty; give a folder, or None for the default.")
    else:
        raise TypeError(f"use_compilation_cache: `path` must be a folder (a str or pathlib.Path) or None, not "
                        f"{type(path).__name__}.")
    folder = folder.expanduser().absolute()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"use_compilation_cache: cannot create the cache folder {folder} "
                         f"({err.strerror or err}); give another with `path`.") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"use_compilation_cache: the cache folder {folder} is not writable; give another with "
                         "`path`.")
    return folder


def use_compilation_cache(path: str | os.PathLike | None = None, *, programs: bool = True) -> pathlib.Path:
    """Switch on JAX's persistent compilation cache: every program that JAX compiles from now on is written to a
    folder on disk, and a later process that compiles the same program (same function, shapes, dtypes, options,
    JAX version and device) loads it from there instead of running XLA's compiler again.

    Call it once, near the top of a script or notebook, before computing anything:

    ```python
    import difimpact as di
    di.use_compilation_cache()
    ```

    Every program is kept, however short its compile or small its file. Nothing is switched on by importing
    difimpact; ``difimpact reproduce`` calls this function itself (``--no-cache`` turns it off).

    The programs of difimpact's entry points called from Python (the impact maps, the compliant phase, the
    optimal and human gaits) hold no host callback, which JAX would not store: their checks are flags the program
    returns, raised after it in Python. What it does not do:

    - A program with a host callback is not stored: a function of yours with an `equinox.error_if` or a
      ``jax.debug`` callback in it, including difimpact's checks when you call an entry point inside your own
      ``jit``, ``vmap`` or ``grad``, and :func:`~difimpact.periodic_gait`'s (a check inside lineax, which its
      derivative of diffrax's event location calls).
    - Tracing and lowering are kept only for the entry points called from Python: the impact maps
      (:func:`~difimpact.impact`, :func:`~difimpact.frictional_impact`, :func:`~difimpact.constrained_impact`,
      :func:`~difimpact.pushoff_impact`), :func:`~difimpact.compliant_impact`, :func:`~difimpact.stride` and
      the solves of the optimal and multi-phase gaits (:func:`~difimpact.optimal_gait`,
      :func:`~difimpact.kelly_gait`, :func:`~difimpact.human_gait`, :func:`~difimpact.multiphase_gait`).
      ``jax.export`` writes their programs into the subfolder ``exported/``, keyed by the versions of difimpact
      (and its sources), JAX and its libraries, the platform, x64 and the call's static structure; a later
      process calls them without tracing them, and a failure their program flags still raises after it. Not
      kept: a call holding a class or function from outside difimpact (your own model), a call inside your own
      ``jit``, ``vmap`` or ``grad``, :func:`~difimpact.periodic_gait` (its host callback, above) and everything
      else (a gait solve's set-up), which each process traces again. It needs the ``flatbuffers`` package
      (JAX's format).
    - Programs compiled before the call are not stored.
    - JAX's own off switch (``jax_enable_compilation_cache``, or ``JAX_ENABLE_COMPILATION_CACHE=false``) is
      left as it is.

    The folder is trusted: a program in it runs as your code, so do not share it with users you do not trust.
    Remove it to free the space; nothing else is lost.

    **Arguments:**

    - `path`: the folder for the programs, created if missing, used as given. By default the folder that JAX
      was already told to use (``$JAX_COMPILATION_CACHE_DIR``, or an earlier call), else
      ``difimpact/jax/<version>`` in the user's cache folder: ``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux,
      ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows. The version of difimpact in the name keeps a
      new release from reading an older one's programs.
    - `programs`: also keep the entry points' traced programs (the ``exported/`` subfolder, above); ``False``:
      only XLA's compiled programs, and each process traces them again.

    **Returns:**

    The folder used, as an absolute `pathlib.Path`.

    **Raises:**

    `TypeError` if `path` is not a string or path; `ValueError` if the folder cannot be created or written.
    """
    import jax
    from jax.experimental.compilation_cache import compilation_cache

    from ._exported import set_folder

    if not isinstance(programs, bool):
        raise TypeError(f"use_compilation_cache: `programs` must be True or False, not {programs!r}.")
    folder = _writable(path, jax.config.jax_compilation_cache_dir)
    if jax.config.jax_compilation_cache_dir != str(folder):
        jax.config.update("jax_compilation_cache_dir", str(folder))
        compilation_cache.reset_cache()  # a cache JAX already opened in another folder would otherwise stay in use
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)  # keep every program (default: ≥ 1 s)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)  # however small, and no backend override
    set_folder(folder / "exported" if programs else None)
    return folder
