"""The output folder of `difimpact reproduce`: each experiment's files, and ``report.md`` rebuilt from them.

Layout of an output folder ``DIR``:

- ``DIR/NAME/``: the experiment's rows ``NAME.csv``, its figures ``FIG.png`` and ``result.json`` (what the report
  says about it: quick or full, the run that wrote it, checks, notes, figure names, row count, seconds). The
  folder is written beside as ``DIR/.NAME.partial`` and swapped in whole when the experiment has finished, so
  ``DIR/NAME/`` always holds one complete run of one mode, never a mixture, and an interrupted experiment
  leaves the previous result untouched.
- ``DIR/run.json``: the latest run: its number, command, mode, planned and finished experiments and its state
  (``running``, ``complete``, ``interrupted`` or ``failed``).
- ``DIR/report.md``: rebuilt from ``run.json`` and every ``DIR/*/result.json`` after each experiment and at
  the end, never appended to: one section per experiment present, marked quick or full, and a status line that
  says whether the latest run finished and, if not, which experiments it did not finish.
"""

import csv
import json
import math
import pathlib
import shutil

from .experiment import Experiment, Outcome
from .registry import REGISTRY

RESULT = "result.json"
RUN = "run.json"
REPORT = "report.md"


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


def _dump(path: pathlib.Path, data) -> None:
    """Write JSON through a temporary file, so that a reader never sees half of it."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    tmp.replace(path)


def save_outcome(out: pathlib.Path, exp: Experiment, outcome: Outcome, *, quick: bool, run: int,
                 seconds: float) -> pathlib.Path:
    """Write the experiment's CSV, figures and ``result.json`` and swap them in for ``out/NAME`` as a whole."""
    import matplotlib.pyplot as plt

    partial = out / f".{exp.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    _write_csv(partial / f"{exp.name}.csv", outcome.rows)
    for fname, fig in outcome.figures.items():
        fig.savefig(partial / f"{fname}.png", dpi=120, metadata={"Software": None})
        plt.close(fig)
    checks = [dict(statement=c.statement, paper=c.paper, ours=c.ours, ok=c.ok) for c in outcome.checks]
    _dump(partial / RESULT, dict(
        name=exp.name, seed=exp.seed, target=exp.target, description=exp.description, units=exp.units,
        paper=exp.reference.short() if exp.reference else "", reference=str(exp.reference or ""),
        quick=quick, run=run, rows=len(outcome.rows), seconds=round(seconds, 1), figures=list(outcome.figures),
        checks=checks, markdown=outcome.markdown))
    folder = out / exp.name
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder


def _read(path: pathlib.Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def start_run(out: pathlib.Path, names: list[str], *, quick: bool, command: str) -> int:
    """Record a new run (state ``running``) in ``out/run.json``, rebuild the report, return the run's number."""
    previous = _read(out / RUN) or {}
    run = int(previous.get("run", 0)) + 1
    _dump(out / RUN, dict(run=run, command=command, quick=quick, experiments=names, finished=[], state="running",
                          stopped_in=None, error=None))
    write_report(out)
    return run


def update_run(out: pathlib.Path, *, finished: str | None = None, state: str | None = None,
               stopped_in: str | None = None, error: str | None = None) -> None:
    """Mark an experiment finished, or the run ended (``complete``, ``interrupted``, ``failed``); rebuild the
    report."""
    run = _read(out / RUN)
    if finished is not None:
        run["finished"].append(finished)
    if state is not None:
        run.update(state=state, stopped_in=stopped_in, error=error)
    _dump(out / RUN, run)
    write_report(out)


def _mode(quick: bool) -> str:
    return "quick" if quick else "full"


def _status(run, results) -> list[str]:
    """The report's opening lines about the latest run."""
    if run is None:
        return []
    what = f"Run {run['run']} (`{run['command']}`, {_mode(run['quick'])})"
    missing = [n for n in run["experiments"] if n not in run["finished"]]
    if run["state"] == "complete":
        return [f"{what} finished all {len(run['experiments'])} experiment(s) it was given.", ""]
    lines = [{
        "running": f"**{what} has not finished**: it was still running when this report was written, or it "
                   "was killed.",
        "interrupted": f"**{what} was interrupted** (Ctrl-C or SIGTERM) during `{run['stopped_in']}`.",
        "failed": f"**{what} failed** in `{run['stopped_in']}`: {run['error']}",
    }[run["state"]], "", f"Experiments of this run that did not finish: {', '.join(f'`{n}`' for n in missing)}."]
    older = [f"`{n}` (run {results[n]['run']}, {_mode(results[n]['quick'])})" for n in missing if n in results]
    if older:
        lines.append(f"Their sections below, where present, are from earlier runs: {', '.join(older)}.")
    return lines + [""]


def _section(r) -> str:
    lines = [f"## `{r['name']}` — {', '.join(x for x in (r['paper'], r['target']) if x)} · {_mode(r['quick'])}", "",
             f"_{'Quick run (`--quick`): coarse grids and figures.' if r['quick'] else 'Full run.'} "
             f"Written by run {r['run']}._", ""]
    if r["reference"]:
        lines += [f"_{r['reference']}_", ""]
    lines += [r["description"], ""]
    if r["units"]:
        lines += [f"Units: {r['units']}", ""]
    if r["markdown"]:
        lines += [r["markdown"].rstrip(), ""]
    if r["checks"]:
        lines += ["| | statement | paper | ours |", "|---|---|---|---|"]
        lines += [f"| {'✓' if c['ok'] else '✗'} | {c['statement']} | {c['paper']} | {c['ours']} |"
                  for c in r["checks"]]
        lines.append("")
    lines += [f"![{fig}]({r['name']}/{fig}.png)" for fig in r["figures"]]
    lines += ["", f"_{r['rows']} rows, {r['seconds']:.1f} s._", ""]
    return "\n".join(lines)


def build_report(out: pathlib.Path) -> str:
    """``report.md`` from ``out/run.json`` and every ``out/*/result.json``, experiments in registry order."""
    results = {}
    undescribed = []
    for folder in sorted(p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")):
        r = _read(folder / RESULT)
        if r is None:
            undescribed.append(folder.name)
        else:
            results[r["name"]] = r
    order = {name: i for i, name in enumerate(REGISTRY)}
    ordered = sorted(results.values(), key=lambda r: (order.get(r["name"], len(order)), r["name"]))
    lines = ["# difimpact reproduction report", "",
             "Paper beside ours; ✓ = matches, ✗ = does not. Rebuilt from the files in this folder after every "
             "experiment: one section per experiment folder, from its latest run (a `--quick` rerun replaces a "
             "full result, and its section then says quick).", ""]
    lines += _status(_read(out / RUN), results)
    if ordered:
        lines += ["| experiment | mode | run | checks matching |", "|---|---|---|---|"]
        lines += [f"| `{r['name']}` | {_mode(r['quick'])} | {r['run']} | "
                  f"{sum(c['ok'] for c in r['checks'])}/{len(r['checks'])} |" for r in ordered]
        lines.append("")
    if undescribed:
        lines += [f"Folders without `{RESULT}` (not described here): {', '.join(f'`{n}`' for n in undescribed)}.",
                  ""]
    return "\n".join(lines) + "\n" + "".join(_section(r) for r in ordered)


def write_report(out: pathlib.Path) -> pathlib.Path:
    path = out / REPORT
    tmp = out / f".{REPORT}.tmp"
    tmp.write_text(build_report(out))
    tmp.replace(path)
    return path
