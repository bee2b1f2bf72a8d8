"""``difimpact reproduce``: the experiments run with the compile settings of the command (the persistent
compilation cache, XLA flags, garbage collection between experiments). The command's arguments, ``--help`` and
``difimpact list`` are those of :mod:`_difimpact_cli`, which imports this module only to run experiments (and
which this module does not import: ``python -m _difimpact_cli`` runs the command from a source checkout).

The experiments draw with matplotlib and show progress with tqdm, the extra ``difimpact[papers]``."""

import dataclasses
import gc
import json
import os
import pathlib
import sys
import time

_EXTRA = "pip install 'difimpact[papers]'"


def require_papers_extra() -> None:
    """Raise ``ImportError`` naming the extra when matplotlib or tqdm, which the experiments need, is missing."""
    for module in ("matplotlib", "tqdm"):
        try:
            __import__(module)
        except ImportError as err:
            raise ImportError(f"`difimpact reproduce` needs {module}, which the extra `papers` brings: "
                              f"{_EXTRA}") from err


def _progress(quiet: bool):
    from tqdm.auto import tqdm

    def wrap(iterable, desc="", total=None):
        return tqdm(iterable, desc=desc, total=total, leave=False, disable=quiet, file=sys.stderr)

    return wrap


def _enable_compile_cache() -> pathlib.Path | None:
    """Turn on JAX's persistent compilation cache (:func:`difimpact.use_compilation_cache`), so that a second run
    reuses the programs the first compiled: in ``$JAX_COMPILATION_CACHE_DIR`` when set, else in the user's cache
    folder (``$XDG_CACHE_HOME/difimpact/jax/<version>``, by default ``~/.cache/difimpact/jax/<version>``).
    ``DIFIMPACT_NO_COMPILE_CACHE=1`` (or ``--no-cache``) turns it off; a folder that cannot be created or written
    turns it off with a warning rather than stopping the run.

    **Returns:** the cache folder, or ``None`` when the cache is off.
    """
    if os.environ.get("DIFIMPACT_NO_COMPILE_CACHE", "0") not in ("", "0"):
        return None
    from ._cache import use_compilation_cache

    try:
        return use_compilation_cache()
    except ValueError as err:
        print(f"difimpact: {err} Running without the compilation cache.", file=sys.stderr)
        return None


_MEASURED_JAXLIB = ((0, 10),)  # the jaxlib versions where the XLA flags below were measured


def add_xla_flags(flags: tuple[str, ...]) -> None:
    """Append ``flags`` to ``XLA_FLAGS``, but those it already names, on the jaxlib versions where they were
    measured (XLA aborts on a flag it does not know). XLA reads the variable when JAX starts its CPU client:
    in a process that has already computed something they take effect in the processes it starts."""
    from importlib.metadata import version

    if tuple(int(v) for v in version("jaxlib").split(".")[:2]) not in _MEASURED_JAXLIB:
        return
    given = os.environ.get("XLA_FLAGS", "").split()
    named = {f.split("=")[0] for f in given}
    os.environ["XLA_FLAGS"] = " ".join(given + [f for f in flags if f.split("=")[0] not in named])


def _compile_faster() -> None:
    """Compile the experiments' programs in less time (their run is mostly compiling): XLA's elemental emitter for
    loop fusions rather than its MLIR fusion emitters (less XLA compile time on the CPU; the compiled code may run
    somewhat slower and differ in the last bits), and no Python tracebacks in the programs' locations (less
    tracing; only XLA's own error messages would show them). A flag or variable the user has set wins, and
    ``DIFIMPACT_XLA_DEFAULTS=1`` keeps XLA's and JAX's defaults (docs/performance.md has the measurements)."""
    import jax

    if os.environ.get("DIFIMPACT_XLA_DEFAULTS", "0") not in ("", "0"):
        return
    add_xla_flags(("--xla_cpu_use_fusion_emitters=false",))
    for name, value in (("jax_include_full_tracebacks_in_locations", False), ("jax_traceback_in_locations_limit", 0)):
        if name.upper() not in os.environ:
            jax.config.update(name, value)


def defer_full_collections() -> None:
    """Python's full garbage collections walk every object alive, and the traces, programs and caches of JAX make
    millions of them: in a process that traces many programs, the automatic ones recur while the traces grow.
    After this they wait for 1000 collections of the middle generation (practically never) and run when
    :func:`collect_and_freeze` is called, between pieces of work (experiments, test modules)."""
    gc.set_threshold(*gc.get_threshold()[:2], 1000)


def collect_and_freeze() -> None:
    """A full garbage collection, then what survives it frozen (``gc.freeze``): later collections leave it out, and
    reference counting still frees it."""
    gc.collect()
    gc.freeze()


def reproduce(names, out: pathlib.Path, as_json: bool, quick: bool, quiet: bool = False) -> int:
    """Run the experiments into `out` (layout and report: :mod:`difimpact.papers.report`)."""
    import jax

    jax.config.update("jax_enable_x64", True)
    require_papers_extra()
    import matplotlib

    matplotlib.use("Agg")

    from .papers import report
    from .papers.registry import select

    experiments = select(names)
    defer_full_collections()
    out.mkdir(parents=True, exist_ok=True)
    command = " ".join(["difimpact reproduce", *names, *(["--quick"] if quick else [])])
    run = report.start_run(out, [e.name for e in experiments], quick=quick, command=command)
    progress = _progress(quiet or not sys.stderr.isatty())  # no bars (escape codes) in a piped log
    exp = None
    try:
        for exp in progress(experiments, desc="experiments"):
            start = time.perf_counter()
            outcome = exp.run(quick, progress)
            seconds = time.perf_counter() - start
            folder = report.save_outcome(out, exp, outcome, quick=quick, run=run, seconds=seconds)
            report.update_run(out, finished=exp.name)
            collect_and_freeze()
            if as_json:
                print(json.dumps({"experiment": exp.name, "paper": str(exp.reference or ""), "target": exp.target,
                                  "rows": outcome.rows, "checks": [dataclasses.asdict(c) for c in outcome.checks]},
                                 default=float), flush=True)
            else:
                ok = sum(c.ok for c in outcome.checks)
                print(f"{exp.name}: {len(outcome.rows)} rows, {ok}/{len(outcome.checks)} checks match, "
                      f"{seconds:.1f} s -> {folder}", file=sys.stderr)
    except BaseException as err:
        interrupted = isinstance(err, KeyboardInterrupt)
        report.update_run(out, state="interrupted" if interrupted else "failed", stopped_in=exp and exp.name,
                          error=None if interrupted else f"{type(err).__name__}: {err}"[:300])
        print(f"run {'interrupted' if interrupted else 'failed'}; report: {out / report.REPORT}", file=sys.stderr)
        raise
    report.update_run(out, state="complete")
    if not as_json:
        print(f"report: {out / report.REPORT}", file=sys.stderr)
    return 0


def _check_out(out: pathlib.Path, error) -> None:
    """`out` must be a folder this process can write (created if missing), else `error(message)`."""
    if out.exists() and not out.is_dir():
        error(f"--out {out}: exists and is not a folder; name a folder (it is created if missing).")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        error(f"--out {out}: cannot create the folder ({err.strerror or err}).")
    if not os.access(out, os.W_OK | os.X_OK):
        error(f"--out {out}: the folder is not writable; name another with --out.")


def run(args, error) -> int:
    """``difimpact reproduce`` with the parsed arguments `args`; `error(message)` reports an unknown experiment
    name (the parser's ``error``, which exits)."""
    _compile_faster()  # before anything starts JAX's CPU client (importing the experiments does)

    try:
        require_papers_extra()
    except ImportError as err:
        error(str(err))
    from .papers.registry import select

    try:
        select(args.names)
    except ValueError as err:
        error(str(err))
    _check_out(args.out, error)
    if not args.no_cache:
        _enable_compile_cache()
    return reproduce(args.names, args.out, args.json, args.quick, args.quiet)
