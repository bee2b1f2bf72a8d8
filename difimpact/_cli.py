"""`difimpact` console command: ``difimpact list`` and ``difimpact reproduce [NAME ...]``."""

import argparse
import dataclasses
import functools
import gc
import json
import os
import pathlib
import shutil
import sys
import textwrap
import time

_DESCRIPTION = """Reproduce the tables and figures of the papers behind difimpact, paper beside ours.

  difimpact list                  the experiments, the figure or table each reproduces, and its paper
  difimpact reproduce             run them all: DIR/report.md, DIR/NAME/NAME.csv and the figures (PNG)
  difimpact reproduce NAME ...    run some of them"""


def _progress(quiet: bool):
    from tqdm.auto import tqdm

    def wrap(iterable, desc="", total=None):
        return tqdm(iterable, desc=desc, total=total, leave=False, disable=quiet, file=sys.stderr)

    return wrap


def _enable_compile_cache() -> pathlib.Path | None:
    """Turn on JAX's persistent compilation cache, so that a second run reuses the programs the first compiled:
    in ``$JAX_COMPILATION_CACHE_DIR`` when set, else in the user's cache folder (``$XDG_CACHE_HOME/difimpact/jax``,
    by default ``~/.cache/difimpact/jax``; ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows).
    ``DIFIMPACT_NO_COMPILE_CACHE=1`` (or ``--no-cache``) turns it off. Every program is stored, however short
    its compile, including those with run-time checks (``equinox.error_if``), which JAX alone would not store
    (:func:`difimpact._compile_cache.store_programs_with_callbacks`).

    **Returns:** the cache folder, or ``None`` when the cache is off.
    """
    import jax

    from ._compile_cache import store_programs_with_callbacks

    if os.environ.get("DIFIMPACT_NO_COMPILE_CACHE", "0") not in ("", "0"):
        return None
    folder = jax.config.jax_compilation_cache_dir
    if not folder:
        if sys.platform == "win32":
            base = os.environ.get("LOCALAPPDATA") or pathlib.Path.home() / "AppData" / "Local"
        elif sys.platform == "darwin":
            base = pathlib.Path.home() / "Library" / "Caches"
        else:
            base = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
        folder = pathlib.Path(base) / "difimpact" / "jax"
        jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    store_programs_with_callbacks()
    return pathlib.Path(folder)


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


def remember_traceback_filter() -> None:
    """Remember, per file name, JAX's answer to whether a stack frame is JAX's own. Each trace of
    ``equinox.error_if`` walks the Python stack and asks it of every frame, and JAX answers by comparing the
    frame's file with each excluded path through the file system (``os.path.samefile``), which adds up in a
    process that traces many programs (``difimpact reproduce``, the test suite; docs/performance.md). The answer
    depends only on the file name and the excluded paths. (``jax._src.traceback_util`` is private: where it
    differs, nothing is changed.)"""
    try:
        from jax._src import traceback_util

        excluded, include_filename = traceback_util._exclude_paths, traceback_util.include_filename
    except (ImportError, AttributeError):
        return
    if hasattr(include_filename, "remembered"):  # done already in this process
        return
    remembered = functools.cache(lambda filename, n_excluded: include_filename(filename))

    def include(filename: str) -> bool:
        return remembered(filename, len(excluded))

    include.remembered = remembered
    traceback_util.include_filename = include


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
    """Run the experiments into `out` (layout and report: :mod:`difimpact._experiments.report`)."""
    import jax

    jax.config.update("jax_enable_x64", True)
    import matplotlib

    matplotlib.use("Agg")

    from ._experiments import report, select

    experiments = select(names)
    remember_traceback_filter()
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


def _list(registry, verbose: bool) -> None:
    """One line per experiment (name, paper, the table or figure it reproduces) cut to the terminal's width,
    then the papers in full."""
    width = shutil.get_terminal_size((100, 24)).columns
    name_w = max(len(e.name) for e in registry.values()) + 2
    paper_w = max(len(e.reference.short()) if e.reference else 0 for e in registry.values()) + 2
    fit = lambda line: line if len(line) <= width else line[:width - 1] + "…"  # noqa: E731
    print(fit(f"{'NAME':{name_w}}{'PAPER':{paper_w}}REPRODUCES"))
    for e in registry.values():
        paper = e.reference.short() if e.reference else ""
        print(fit(f"{e.name:{name_w}}{paper:{paper_w}}{e.target}"))
        if verbose:
            print(textwrap.fill(e.description, width, initial_indent="    ", subsequent_indent="    "))
    papers = {r.short(): r for r in (e.reference for e in registry.values()) if r is not None}
    if papers:
        print("\nPapers:")
        for short, ref in papers.items():
            print(textwrap.fill(f"{short}: {ref}", width, subsequent_indent="    "))


def main(argv=None) -> int:
    from . import __version__

    parser = argparse.ArgumentParser(prog="difimpact", description=_DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"difimpact {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{list,reproduce}")
    lst = sub.add_parser("list", help="list the experiments and their papers",
                         description="List the experiments: name, the table or figure it reproduces, its paper.")
    lst.add_argument("-v", "--verbose", action="store_true", help="also describe each experiment")
    rep = sub.add_parser("reproduce", help="run experiments (all by default)",
                         description="Run experiments and write DIR/report.md (paper beside ours, ✓ / ✗ per "
                                     "statement), DIR/NAME/NAME.csv and the figures of each.")
    rep.add_argument("names", nargs="*", metavar="NAME",
                     help="an experiment to run, as named by `difimpact list` (default: all of them)")
    rep.add_argument("--out", default="reproduce-out", type=pathlib.Path, metavar="DIR",
                     help="output folder (default: reproduce-out)")
    rep.add_argument("--json", action="store_true",
                     help="print one JSON object per experiment: its paper, rows and checks")
    rep.add_argument("--quick", action="store_true", help="coarse grids, compliant sweeps of seed 001 skipped (CI)")
    rep.add_argument("--quiet", action="store_true", help="no progress bars (none are drawn unless stderr is a "
                                                          "terminal)")
    rep.add_argument("--no-cache", action="store_true",
                     help="do not use the persistent compilation cache (also DIFIMPACT_NO_COMPILE_CACHE=1)")
    args = parser.parse_args(argv)
    _compile_faster()  # before anything starts JAX's CPU client (importing the experiments does)

    from ._experiments import REGISTRY, select

    if args.command == "list":
        _list(REGISTRY, args.verbose)
        return 0
    try:
        select(args.names)
    except ValueError as err:
        parser.error(str(err))
    if not args.no_cache:
        _enable_compile_cache()
    return reproduce(args.names, args.out, args.json, args.quick, args.quiet)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
