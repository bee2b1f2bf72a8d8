"""`difimpact` console command: ``difimpact list`` and ``difimpact reproduce [NAME ...]``."""

import argparse
import csv
import json
import math
import pathlib
import sys
import time


def _progress(quiet: bool):
    from tqdm.auto import tqdm

    def wrap(iterable, desc="", total=None):
        return tqdm(iterable, desc=desc, total=total, leave=False, disable=quiet, file=sys.stderr)

    return wrap


def _format(v):
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else str(v)
    return v


def _write_csv(path: pathlib.Path, rows):
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=keys, lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: _format(r.get(k, "")) for k in keys})


def _section(exp, outcome, seconds) -> str:
    lines = [f"## `{exp.name}` — seed {exp.seed}, {exp.target}", "", exp.description, ""]
    if exp.units:
        lines += [f"Units: {exp.units}", ""]
    if outcome.markdown:
        lines += [outcome.markdown.rstrip(), ""]
    if outcome.checks:
        lines += ["| | statement | paper | ours |", "|---|---|---|---|"]
        lines += [f"| {'✓' if c.ok else '✗'} | {c.statement} | {c.paper} | {c.ours} |" for c in outcome.checks]
        lines.append("")
    for fig in outcome.figures:
        lines.append(f"![{fig}]({exp.name}/{fig}.png)")
    lines += ["", f"_{len(outcome.rows)} rows, {seconds:.1f} s._", ""]
    return "\n".join(lines)


def reproduce(names, out: pathlib.Path, as_json: bool, quick: bool, quiet: bool = False) -> int:
    import jax

    jax.config.update("jax_enable_x64", True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ._experiments import select

    experiments = select(names)
    out.mkdir(parents=True, exist_ok=True)
    report = out / "report.md"
    if not report.exists():
        report.write_text("# difimpact reproduction report\n\nPaper beside ours; ✓ = matches, ✗ = does not.\n\n")
    progress = _progress(quiet or as_json and not sys.stderr.isatty())
    for exp in progress(experiments, desc="experiments"):
        start = time.perf_counter()
        outcome = exp.run(quick, progress)
        seconds = time.perf_counter() - start
        folder = out / exp.name
        folder.mkdir(exist_ok=True)
        _write_csv(folder / f"{exp.name}.csv", outcome.rows)
        for fname, fig in outcome.figures.items():
            fig.savefig(folder / f"{fname}.png", dpi=120, metadata={"Software": None})
            plt.close(fig)
        with open(report, "a") as f:
            f.write(_section(exp, outcome, seconds))
        if as_json:
            print(json.dumps({"experiment": exp.name, "rows": outcome.rows}, default=float), flush=True)
        else:
            ok = sum(c.ok for c in outcome.checks)
            print(f"{exp.name}: {len(outcome.rows)} rows, {ok}/{len(outcome.checks)} checks match, "
                  f"{seconds:.1f} s -> {folder}", file=sys.stderr)
    if not as_json:
        print(f"report: {report}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="difimpact", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the experiments")
    rep = sub.add_parser("reproduce", help="run experiments (all by default)")
    rep.add_argument("names", nargs="*", metavar="NAME")
    rep.add_argument("--out", default="reproduce-out", type=pathlib.Path, help="output folder")
    rep.add_argument("--json", action="store_true", help="print one JSON object per experiment")
    rep.add_argument("--quick", action="store_true", help="coarse grids (CI)")
    rep.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)

    from ._experiments import REGISTRY, select

    if args.command == "list":
        for e in REGISTRY.values():
            print(f"{e.name:28s} seed {e.seed}  {e.target:22s} {e.description}")
        return 0
    try:
        select(args.names)
    except ValueError as err:
        parser.error(str(err))
    return reproduce(args.names, args.out, args.json, args.quick, args.quiet)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
