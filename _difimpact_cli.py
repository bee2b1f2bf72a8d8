"""The `difimpact` command: ``difimpact list`` and ``difimpact reproduce [NAME ...]``.

A module beside the ``difimpact`` package rather than in it: importing anything from the package imports the
library, and with it JAX, which takes seconds. ``--help``, ``--version`` and ``list`` answer from the standard
library and ``difimpact/papers/catalogue.json`` (the experiments' names, papers and targets, written from the
registry by ``python -m difimpact.papers.catalogue``, and read here through that module's file); ``reproduce``
hands over to :mod:`difimpact._cli`, which imports JAX and runs the experiments. The imports run one way: this
module imports the catalogue and :mod:`difimpact._cli`, and neither imports it.
"""

import argparse
import importlib.util
import json
import os
import pathlib
import shutil
import sys
import textwrap

_DESCRIPTION = """Reproduce the tables and figures of the papers behind difimpact, paper beside ours.

  difimpact list                  the experiments, the figure or table each reproduces, and its paper
  difimpact reproduce             run them all: DIR/report.md, DIR/NAME/NAME.csv and the figures (PNG)
  difimpact reproduce NAME ...    run some of them"""
_QUICK_SKIPS = "Font-Llagunes et al. 2010"  # the paper whose compliant sweeps --quick skips


def papers_folder() -> pathlib.Path:
    """The folder of ``difimpact.papers``, found without importing the package."""
    spec = importlib.util.find_spec("difimpact")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("the difimpact package is not installed")
    return pathlib.Path(next(iter(spec.submodule_search_locations))) / "papers"


def _catalogue_module():
    """``difimpact/papers/catalogue.py`` loaded from its file: it imports the standard library only, where
    importing it from the package would import the library (and JAX)."""
    spec = importlib.util.spec_from_file_location("_difimpact_catalogue", papers_folder() / "catalogue.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fingerprint(folder: pathlib.Path) -> str:
    """A hash of the papers' source files under `folder` (:func:`difimpact.papers.catalogue.fingerprint`)."""
    return _catalogue_module().fingerprint(folder)


def catalogue() -> list[dict]:
    """The experiments as ``difimpact list`` shows them (name, paper, paper_full, target, description), in
    registry order: from ``catalogue.json`` when it was written from the present sources, else from the registry
    itself (importing the experiments, and JAX)."""
    module = _catalogue_module()
    try:
        stored = json.loads(module.PATH.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stored = {}
    if stored.get("fingerprint") == fingerprint(module.PATH.parent):
        return stored["experiments"]
    return module.entries()


def _list(entries: list[dict], verbose: bool) -> None:
    """One line per experiment (name, paper, the table or figure it reproduces) cut to the terminal's width,
    then the papers in full."""
    width = shutil.get_terminal_size((100, 24)).columns
    name_w = max(len(e["name"]) for e in entries) + 2
    paper_w = max(len(e["paper"]) for e in entries) + 2
    fit = lambda line: line if len(line) <= width else line[:width - 1] + "…"  # noqa: E731
    print(fit(f"{'NAME':{name_w}}{'PAPER':{paper_w}}REPRODUCES"))
    for e in entries:
        print(fit(f"{e['name']:{name_w}}{e['paper']:{paper_w}}{e['target']}"))
        if verbose:
            print(textwrap.fill(e["description"], width, initial_indent="    ", subsequent_indent="    "))
    papers = {e["paper"]: e["paper_full"] for e in entries if e["paper"]}
    if papers:
        print("\nPapers:")
        for short, full in papers.items():
            print(textwrap.fill(f"{short}: {full}", width, subsequent_indent="    "))


class _Version(argparse.Action):
    """``--version``, read from the installed metadata only when asked: ``importlib.metadata`` is slow to import,
    and ``--help`` and ``list`` need none of it."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit", **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        import importlib.metadata

        try:
            version = importlib.metadata.version("difimpact")
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover - source checkout
            version = "0.0.0"
        print(f"difimpact {version}")
        parser.exit()


_MAX_JOBS = 4  # worker processes by default: each holds its own JAX and compiles on one core


def default_jobs() -> int:
    """The CPU cores this process may use, at most ``_MAX_JOBS``."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(_MAX_JOBS, cores))


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of processes, at least 1, got {text!r}")
    return n


def parser() -> argparse.ArgumentParser:
    """The command's arguments: ``list [-v]`` and ``reproduce [NAME ...] [options]``."""
    top = argparse.ArgumentParser(prog="difimpact", description=_DESCRIPTION,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action=_Version)
    sub = top.add_subparsers(dest="command", required=True, metavar="{list,reproduce}")
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
    rep.add_argument("--quick", action="store_true",
                     help=f"coarse grids; the compliant sweeps of {_QUICK_SKIPS} skipped (CI)")
    rep.add_argument("--quiet", action="store_true", help="no progress bars (none are drawn unless stderr is a "
                                                          "terminal)")
    rep.add_argument("--jobs", type=_jobs, default=default_jobs(), metavar="N",
                     help="experiments run at once, each in its own process (default: the CPU cores, at most "
                          f"{_MAX_JOBS}: {default_jobs()} here); 1 runs them one after another in this process")
    rep.add_argument("--no-cache", action="store_true",
                     help="do not use the persistent compilation cache (also DIFIMPACT_NO_COMPILE_CACHE=1)")
    return top


def main(argv=None) -> int:
    """Run the command with the arguments `argv` (default: the process's); returns the exit status."""
    cli = parser()
    args = cli.parse_args(argv)
    if args.command == "list":
        _list(catalogue(), args.verbose)
        return 0
    # one LAPACK thread unless the user set one (read when OpenBLAS loads, before JAX starts): the optimal gaits'
    # Newton matrices are factored one at a time, and threads that spin against other work cost far more
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from difimpact import _cli

    return _cli.run(args, cli.error)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
