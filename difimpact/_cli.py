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

from ._exported import MEASURED_JAXLIB, jaxlib_version

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


_MEASURED_JAXLIB = MEASURED_JAXLIB  # the jaxlib versions where the XLA flags below were measured


def add_xla_flags(flags: tuple[str, ...]) -> None:
    """Append ``flags`` to ``XLA_FLAGS``, but those it already names, on the jaxlib versions where they were
    measured (XLA aborts on a flag it does not know). XLA reads the variable when JAX starts its CPU client:
    in a process that has already computed something they take effect in the processes it starts."""
    if jaxlib_version() not in _MEASURED_JAXLIB:
        return
    given = os.environ.get("XLA_FLAGS", "").split()
    named = {f.split("=")[0] for f in given}
    os.environ["XLA_FLAGS"] = " ".join(given + [f for f in flags if f.split("=")[0] not in named])


def _compile_faster() -> None:
    """Compile the experiments' programs in less time (their run is mostly compiling): XLA's elemental emitter for
    loop fusions rather than its MLIR fusion emitters (less XLA compile time on the CPU; the compiled code may run
    somewhat slower and differ in the last bits), no YNNPACK fusions (slow to load from the cache), and no Python
    tracebacks in the programs' locations (less tracing; only XLA's own error messages would show them). A flag or
    variable the user has set wins, and ``DIFIMPACT_XLA_DEFAULTS=1`` keeps XLA's and JAX's defaults
    (docs/performance.md has the measurements)."""
    import jax

    if os.environ.get("DIFIMPACT_XLA_DEFAULTS", "0") not in ("", "0"):
        return
    add_xla_flags(("--xla_cpu_use_fusion_emitters=false", "--xla_cpu_experimental_ynn_fusion_type="))
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


def _setup() -> None:
    """The process's settings for the experiments: float64, matplotlib without a display."""
    import jax

    jax.config.update("jax_enable_x64", True)
    require_papers_extra()
    import matplotlib

    matplotlib.use("Agg")


def _run_one(name: str, out: pathlib.Path, quick: bool, run: int, progress) -> tuple[str, list, list, float, str]:
    """Run one experiment and write its folder: ``(name, rows, checks, seconds, folder)``."""
    from .papers import report
    from .papers.registry import REGISTRY

    exp = REGISTRY[name]
    progress = progress or _progress(True)
    start = time.perf_counter()
    outcome = exp.run(quick, progress)
    seconds = time.perf_counter() - start
    folder = report.save_outcome(out, exp, outcome, quick=quick, run=run, seconds=seconds)
    collect_and_freeze()
    return name, outcome.rows, outcome.checks, seconds, str(folder)


def _watch_parent(parent: int) -> None:
    """Exit this process when its parent `parent` is gone (killed, or stopped without ending its workers): a
    worker's experiment would otherwise run on, holding memory and cores, for a command that no longer exists."""
    import multiprocessing

    from .papers._ahead import exit_with_parent

    def end_children():  # the helper compiling ahead (papers._ahead), which also watches this process
        for child in multiprocessing.active_children():
            child.terminate()

    exit_with_parent(parent, end_children)


def _worker(cache: bool, parent: int) -> None:
    """A worker process of ``--jobs``: the command's settings (its XLA flags come with the environment); it ends
    itself when the command's process `parent` is gone."""
    _watch_parent(parent)
    _compile_faster()
    if cache:
        _enable_compile_cache()
    _setup()
    defer_full_collections()


def _in_workers(names: list[str], out: pathlib.Path, quick: bool, run: int, jobs: int, cache: bool):
    """Yield ``_run_one``'s results as worker processes finish them, the experiments that took longest in the
    last run in `out` started first (the others in reverse registry order: the gaits, registered last, take
    longest). A failure stops those not yet started, yields those running and then raises."""
    import concurrent.futures as cf
    import multiprocessing

    from .papers import report

    def weight(name):
        previous = report._read(out / name / report.RESULT) or {}
        return previous.get("seconds", float("inf")), names.index(name)

    order = sorted(names, key=weight, reverse=True)
    pool = cf.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_worker,
                                  initargs=(cache, os.getpid()))
    try:
        futures = {pool.submit(_run_one, name, out, quick, run, None): name for name in order}
        failure = None
        for done in cf.as_completed(futures):
            if done.cancelled():
                continue
            try:
                yield done.result()
            except Exception as err:  # noqa: BLE001 - raised after the running ones are recorded
                if failure is None:
                    failure, err.difimpact_experiment = err, futures[done]
                for f in futures:
                    f.cancel()
        if failure is not None:
            raise failure
    except BaseException:  # interrupted (Ctrl-C, SIGTERM, the consumer stopped): nothing of the run goes on
        _end_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _end_workers(pool) -> None:
    """Cancel `pool`'s queued experiments and end its worker processes now, rather than waiting for the running
    experiments to finish (``shutdown(wait=True)`` alone would, and a second interrupt would leave them running
    without the command)."""
    if hasattr(pool, "terminate_workers"):  # Python ≥ 3.14
        pool.terminate_workers()
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())  # the executor's own record of them
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=10)


def reproduce(names, out: pathlib.Path, as_json: bool, quick: bool, quiet: bool = False, jobs: int = 1,
              cache: bool = True) -> int:
    """Run the experiments into `out` (layout and report: :mod:`difimpact.papers.report`), in `jobs` worker
    processes where there are several (`cache`: whether they use the compilation cache)."""
    _setup()
    from .papers import report
    from .papers.registry import select

    experiments = [e.name for e in select(names)]
    defer_full_collections()
    out.mkdir(parents=True, exist_ok=True)
    command = " ".join(["difimpact reproduce", *names, *(["--quick"] if quick else [])])
    run = report.start_run(out, experiments, quick=quick, command=command)
    progress = _progress(quiet or not sys.stderr.isatty())  # no bars (escape codes) in a piped log
    jobs = max(1, min(jobs, len(experiments)))
    if jobs > 1:
        source = _in_workers(experiments, out, quick, run, jobs, cache)
        results = progress(source, desc="experiments", total=len(experiments))
    else:
        source = results = (_run_one(name, out, quick, run, progress)
                            for name in progress(experiments, desc="experiments"))
    running = set(experiments)
    previous = _stop_on_sigterm()
    try:
        for name, rows, checks, seconds, folder in results:
            running.discard(name)
            report.update_run(out, finished=name)
            if as_json:
                exp = select([name])[0]
                print(json.dumps({"experiment": name, "paper": str(exp.reference or ""), "target": exp.target,
                                  "rows": rows, "checks": [dataclasses.asdict(c) for c in checks]},
                                 default=float), flush=True)
            else:
                print(f"{name}: {len(rows)} rows, {sum(c.ok for c in checks)}/{len(checks)} checks match, "
                      f"{seconds:.1f} s -> {folder}", file=sys.stderr)
    except BaseException as err:
        interrupted = isinstance(err, KeyboardInterrupt)
        stopped = getattr(err, "difimpact_experiment", None) or next((n for n in experiments if n in running), None)
        report.update_run(out, state="interrupted" if interrupted else "failed", stopped_in=stopped,
                          error=None if interrupted else f"{type(err).__name__}: {err}"[:300])
        print(f"run {'interrupted' if interrupted else 'failed'}; report: {out / report.REPORT}", file=sys.stderr)
        raise
    finally:
        source.close()  # the workers end with the run, however it ends
        _restore_sigterm(previous)
    report.update_run(out, state="complete")
    if not as_json:
        print(f"report: {out / report.REPORT}", file=sys.stderr)
    return 0


def _stop_on_sigterm():
    """``SIGTERM`` (``kill``, a job scheduler's time limit) stops the run as Ctrl-C does: the report records the
    interruption and the worker processes end with the command. In the main thread only (elsewhere nothing).

    **Returns:** the handler it replaced, for :func:`_restore_sigterm`."""
    import signal
    import threading

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, interrupt)


def _restore_sigterm(previous) -> None:
    import signal

    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


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
    return reproduce(args.names, args.out, args.json, args.quick, args.quiet, args.jobs, not args.no_cache)
