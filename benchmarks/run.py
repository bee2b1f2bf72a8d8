"""Run every benchmark, each in its own process (x64 is a global JAX flag), and rewrite ``RESULTS.md``.

    python benchmarks/run.py [--quick] [--only impulsive compliant gradient gait latency suite powered human_gait mesh programs]
                             [--results PATH]
                             [--timeout S]

With ``--only`` the other benchmarks' rows are kept from the stored ``results.json`` (a note says from which run).
``gpu.py`` needs a GPU and is run apart, on such a machine; its rows join with
``python benchmarks/run.py --render benchmarks/results.json --add gpu64.json gpu32.json`` and every later run keeps
them.
"""

import argparse
import collections
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = {  # name: list of extra argument lists, one process each
    "impulsive": [["--dtype", "float64"], ["--dtype", "float32"]],
    "compliant": [[]],
    "gradient": [["--part", "impulsive"], ["--part", "compliant"]],
    "gait": [[]],
    "latency": [[]],
    "suite": [[]],
    "powered": [[]],
    "human_gait": [[]],
    "mesh": [[]],
    "programs": [[]],
}
KEPT = "come from the earlier run of"  # the note on rows that a run with --only kept
TITLES = {
    "impulsive": "1. Impulsive throughput — crutch walker frictional map, jit + vmap",
    "compliant": "2. Compliant throughput — Hunt–Crossley + exact Coulomb, end of compression",
    "gradient": "3. Gradient cost — jax.grad of the energy loss w.r.t. all 17 CrutchWalker parameters",
    "gait": "4. Periodic gaits — stride map and fixed point (simplest walker, round-footed compass gait), jit + vmap vs solve_ivp + fsolve",
    "latency": "5. Latency — the first compliant result, and `difimpact reproduce` cold and with the compilation cache",
    "suite": "6. The test suite — the README's test command, wall time on this machine",
    "gpu": "7. One GPU — impulsive map and compliant phase, jit + vmap (`gpu.py`, run apart on a GPU machine)",
    "powered": "8. Optimal powered gaits — Kelly's five-link biped against IPOPT on the same transcription, single and "
               "batched (`powered.py`)",
    "powered-gpu": "9. Optimal powered gaits on one GPU — the batch of Kelly's problem under `vmap` (`powered.py --gpu`, "
                   "run apart on a GPU machine)",
    "human_gait": "10. The seven-link human's predicted gait against IPOPT on the same transcription, single and over "
             "speeds (`human_gait.py`)",
    "mesh": "12. The gait optimiser at scale — Kelly's problem on 6 to 384 Hermite–Simpson segments against IPOPT on the "
            "same transcription, and a CPU batch by `vmap` and `lax.map` (`mesh.py`)",
    "programs": "13. The programs of the main entry points — StableHLO lines and seconds tracing, lowering and "
                "compiling, each first call in a fresh process without the cache (`programs.py`)",
    "human_gait_gpu": "11. The seven-link human's speed sweep on one GPU against IPOPT on a CPU (`human_gait_sweep.py`: the "
                      "sweep run apart on a GPU machine, IPOPT on this table's machine)",
}
APART = ("gpu", "powered-gpu", "human_gait_gpu")  # tables whose script run.py does not run: their rows come in with --render … --add


def fmt(x):
    if x is None:
        return ""
    if isinstance(x, bool):
        return "met" if x else "**missed**"
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x).replace("|", "\\|")


def judge(r):
    """Judge a goal on the CPU-time value: on a shared machine the wall time also counts the time other
    processes held the cores, and differently for each side of a ratio. Every ratio is value / goal. A row
    whose goal is a wall time on a named machine (the test suite) is judged on its wall time."""
    if r.get("met") is None or r.get("ratio") is None or r.get("cpu_value") is None or r.get("judged_on") == "wall":
        return r
    ratio = r["ratio"] * r["cpu_value"] / r["value"]
    higher_is_better = r["goal"].startswith(("≥", "about"))
    return dict(r, ratio=ratio, met=bool(ratio >= 1 if higher_is_better else ratio <= 1))


def table(rows, judged="CPU"):
    lines = [f"| item | measured (wall) | measured (CPU time) | unit | goal | measured ({judged}) / goal | | note |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append("| " + " | ".join(fmt(r.get(k)) for k in
                                        ("item", "value", "cpu_value", "unit", "goal", "ratio", "met", "note")) + " |")
    return "\n".join(lines)


def find(rows, prefix):
    return next((r for r in rows if r["item"].startswith(prefix)), None)


def analysis(by_table):
    """Sentences computed from the rows: how far each missed goal is, and what the profile shows."""
    out = []
    for name, rows in by_table.items():
        for r in rows:
            if r.get("met") is False and r.get("ratio") is not None:
                factor = r["ratio"] if r["ratio"] < 1 else 1 / r["ratio"]
                measured = (f"{fmt(r['value'])} {r['unit']} (wall; CPU time {fmt(r.get('cpu_value'))})"
                            if r.get("judged_on") == "wall" else
                            f"{fmt(r.get('cpu_value'))} {r['unit']} (CPU time; wall {fmt(r['value'])})")
                out.append(f"- **{r['item']}** missed: {measured} against {r['goal']}, a factor {1 / factor:.3g} "
                           "short.")
            elif r.get("met") is False or r["item"].endswith("failed"):
                out.append(f"- **{r['item']}**: {fmt(r.get('value'))} {r['unit']} ({r.get('note', '')}).")
    imp = by_table.get("impulsive", [])
    for dtype in ("float64", "float32"):
        runs = [r for r in imp if r["item"].startswith("difimpact jit+vmap, batch") and dtype in r["item"]]
        if len(runs) > 1:
            best = max(runs, key=lambda r: r["cpu_value"])
            last = runs[-1]
            out.append(
                f"- Impulsive throughput by batch ({dtype}, CPU time): "
                + ", ".join(f"{r['item'].split('batch ')[1].split(' ')[0]}: {r['cpu_value']:.3g}/s" for r in runs)
                + f". The largest batch runs at {last['cpu_value'] / best['cpu_value']:.0%} of the best: every "
                "unfused intermediate (M, the Jacobian, the factor entries) is a whole-batch array that no "
                "longer fits in cache, so big batches should be fed in chunks of the best size "
                "(`difimpact.sweep(..., chunk_size=...)`).")
    full = find(imp, "profile: full map (M")
    if full:
        share = {k: find(imp, f"profile: {k}") for k in ("M(q) alone", "contact Jacobian", "unrolled LDLᵀ",
                                                          "batched jnp.linalg.solve", "batched Cholesky",
                                                          "frictional_impact_map given")}
        pct = {k: f"{v['cpu_value'] / full['cpu_value']:.0%}" for k, v in share.items() if v}
        pct = collections.defaultdict(lambda: "(not measured)", pct)
        throw = find(imp, "profile: full map with throw")
        out.append(
            f"- Impulsive profile (float64, CPU time, {full['cpu_value']:.0f} ns per impact for the full map): "
            f"building M(q) entry by entry from the closed-form Jacobian columns costs {pct['M(q) alone']} of "
            f"it, the contact Jacobian {pct['contact Jacobian']}, the unrolled LDLᵀ solve of M X = Aᵀ that the "
            f"map uses {pct['unrolled LDLᵀ']} (LAPACK's batched LU solve of the same system "
            f"{pct['batched jnp.linalg.solve']}, a batched Cholesky solve {pct['batched Cholesky']}), the "
            f"closed form given M and A {pct['frictional_impact_map given']}; dropping the approach_not_stopped "
            f"check (throw=False) changes the cost by "
            f"{(throw['cpu_value'] / full['cpu_value'] - 1 if throw else float('nan')):+.0%}. The pieces are timed "
            "separately, so they overlap and need not add up; XLA fuses them differently inside the full map.")
    for name in ("latency", "suite"):  # where the waiting goes: JAX's compile pipeline, per process
        out += [f"- Profile, {r['item'].removeprefix('profile: ')}: {r['note']}." for r in by_table.get(name, [])
                if r["item"].startswith("profile: ")]
    comp = by_table.get("compliant", [])
    rhs = find(comp, "profile: one right-hand side")
    runs = [r for r in comp if "batch" in r]
    if rhs and runs:
        n = max(r["batch"] for r in runs)
        for r in (r for r in runs if r["batch"] == n):
            est = 7 * r["steps"] * rhs["cpu_value"] * 1e-3  # ms
            out.append(
                f"- Compliant profile, {r['item'].split(':')[0]}, batch {n}: {r['steps']:.0f} accepted steps per "
                f"case; one batched right-hand side costs {rhs['cpu_value']:.3g} µs of CPU per case, so about 7 "
                f"evaluations per step (6 Tsit5 stages and the event function) make {est:.3g} ms of the "
                f"{r['cpu_value']:.3g} ms of CPU per case ({est / r['cpu_value']:.0%}); the rest is the solver's "
                "step control, the event root find and the lax.cond/while_loop bookkeeping under vmap.")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run, minutes)")
    parser.add_argument("--only", nargs="+", choices=list(SCRIPTS), default=list(SCRIPTS))
    parser.add_argument("--results", default=os.path.join(HERE, "RESULTS.md"))
    parser.add_argument("--timeout", type=float, default=2400, help="seconds allowed to each script's process")
    parser.add_argument("--render", metavar="JSON", help="only rewrite RESULTS.md from a results.json of a run")
    parser.add_argument("--add", nargs="+", default=[], metavar="JSON",
                        help="with --render: rows of a script's own --out file replace the stored rows of the same "
                             "items (for a script or part rerun alone), and the GPU files added together replace "
                             "the whole GPU table; results.json is updated and RESULTS.md says so")
    args = parser.parse_args()
    if args.render:
        with open(args.render) as f:
            run = json.load(f)
        added_files = []
        for path in args.add:
            with open(path) as f:
                added_files.append((path, json.load(f)))
        # A table run apart (the GPU) is replaced whole by the files added together: its item names carry the
        # device, so a run on another GPU would otherwise leave the old device's rows beside the new ones.
        apart = {r["table"] for _, (_, *rows) in added_files for r in rows} & set(APART)
        dropped = [r for r in run["rows"] if r["table"] in apart]
        run["rows"] = [r for r in run["rows"] if r["table"] not in apart]
        run["notes"] = [n for n in run.get("notes", []) if not any(r["item"] in n for r in dropped)]
        for path, (host, *rows) in added_files:
            added = {r["item"]: r for r in rows}  # rows of the same item are replaced in place, new ones appended
            run["rows"] = [added.pop(r["item"], r) for r in run["rows"]] + list(added.values())
            items = [r["item"] for r in rows]
            what = ("; ".join(items) if len(items) <= 3 else
                    f"of `{os.path.basename(path)}` ({len(items)}: {items[0]} … {items[-1]})")
            stamp = datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.timezone.utc)
            gpus = [d for d in host["devices"] if not d.startswith("cpu")]
            run["notes"] = [n for n in run.get("notes", []) if not any(r["item"] in n for r in rows)]
            run["notes"].append(
                f"The rows {what} come from a separate run of that script alone, finished "
                f"{stamp:%Y-%m-%d %H:%M} UTC on {host['cpu']}, {host['cores']} cores"
                f"{', ' + ', '.join(gpus) if gpus else ''} (JAX {host['jax']}"
                f"{''.join(f', {k} {v}' for k, v in host.get('versions', {}).items())}), load average "
                f"{', '.join(f'{x:.1f}' for x in host['loadavg'])} when it started.")
        if args.add:
            with open(args.render, "w") as f:
                json.dump(run, f, indent=1)
        render(args, **run)
        return
    start, load_before = time.perf_counter(), os.getloadavg()
    rows, machine = [], None
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only:
            for extra in SCRIPTS[name]:
                out = os.path.join(tmp, f"{name}{'_'.join(extra)}.json")
                cmd = [sys.executable, os.path.join(HERE, f"{name}.py"), "--out", out, *extra]
                cmd += ["--quick"] if args.quick else []
                print("$", " ".join(cmd), flush=True)
                t = time.perf_counter()
                try:
                    code = subprocess.run(cmd, timeout=args.timeout).returncode
                except subprocess.TimeoutExpired:
                    code = "timed out"
                print(f"  {time.perf_counter() - t:.0f} s", flush=True)
                if code:  # keep the other benchmarks' numbers; say which one failed
                    rows.append(dict(table=name, item=f"{name}.py {' '.join(extra)} failed", value=None,
                                     unit="", note=f"{code} (after {time.perf_counter() - t:.0f} s; limit "
                                                   f"{args.timeout} s); see the run's output"))
                    continue
                with open(out) as f:
                    got = json.load(f)
                machine = machine or got[0]
                rows += got[1:]
    total = time.perf_counter() - start
    if machine is None:  # every script failed: describe the machine from here
        from _common import machine as describe

        machine = describe()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    run = dict(rows=rows, machine=machine, total=total, now=now, only=args.only, quick=args.quick,
               load_before=load_before, load_after=os.getloadavg())
    stored = os.path.join(os.path.dirname(args.results), "results.json")
    if os.path.exists(stored):  # keep the rows of the tables not run now (and always those run apart)
        run = merge(stored, run, args.only)
    with open(stored, "w") as f:
        json.dump(run, f, indent=1)
    render(args, **run)


def merge(stored, run, only):
    """Keep the stored rows of the benchmarks not run now (with ``--only``; the GPU rows always), each marked
    with the run it comes from, and say so in the notes."""
    with open(stored) as f:
        old = json.load(f)
    kept = [dict(r, run=r.get("run", old["now"])) for r in old["rows"] if r["table"] not in only]
    # Drop the notes about rows this run replaced (a whole table, or rows named one by one by --add).
    notes = [n for n in old.get("notes", [])
             if not n.startswith(tuple(f"The {t} rows" for t in only)) and KEPT not in n
             and not any(r["item"] in n for r in old["rows"] if r["table"] in only)]
    by_run = {}
    for r in kept:
        if r["table"] not in APART:  # those have the note of their own run
            by_run.setdefault(r["run"], set()).add(r["table"])
    for when, tables in by_run.items():
        notes.append(f"The {', '.join(sorted(tables, key=list(SCRIPTS).index))} rows {KEPT} {when} (this run, "
                     f"`--only {' '.join(only)}`, replaced the others).")
    return dict(run, rows=kept + run["rows"], notes=notes)


def render(args, rows, machine, total, now, load_before, load_after, notes=(), only=None, quick=None):
    only = args.only if only is None else only  # what the stored run ran (a --render keeps it)
    quick = args.quick if quick is None else quick
    by_table = {name: [judge(r) for r in rows if r["table"] == name] for name in TITLES
                if any(r["table"] == name for r in rows)}
    text = [
        "# Benchmark results",
        "",
        f"Written by `python benchmarks/run.py{' --quick' if quick else ''}"
        f"{' --only ' + ' '.join(only) if set(only) != set(SCRIPTS) else ''}` on {now}; the whole run took "
        f"{total / 60:.1f} min. Do not edit by hand: rerun the command.",
        "",
        f"- Machine: {machine['cpu']}, {machine['cores']} cores, devices {', '.join(machine['devices'])}.",
        f"- Versions: JAX {machine['jax']}, NumPy {machine['numpy']}, SciPy {version('scipy')}, "
        f"Pinocchio {version('pin')}, equinox {version('equinox')}, diffrax {version('diffrax')}.",
        "- dtype: float64 unless a row says float32 (the float32 rows run in their own process without x64).",
        f"- Load average (1, 5, 15 min) before: {', '.join(f'{x:.1f}' for x in load_before)}; after: "
        f"{', '.join(f'{x:.1f}' for x in load_after)}. Other processes shared the cores while this ran: the wall "
        "times include the time they held the cores, and the CPU-time column (this process's CPU seconds, all "
        "threads) is the better measure of the work: goals are judged on it. It is conservative: on an idle "
        "machine XLA may also use the second core, so wall throughput could be up to twice the per-CPU-second "
        "rate; the baselines (Pinocchio, NumPy loops, scipy) are single-threaded.",
        "- GPU rows: " + ("table 7, from a separate run of `benchmarks/gpu.py` on a GPU machine (its note below names "
                          "the machine); those rows are wall times of the device and carry no CPU-time column."
                          if "gpu" in by_table else "not run — no GPU machine was available (`benchmarks/gpu.py`)."),
        "- Method: each difimpact function is compiled once with `jax.jit(f).lower(...).compile()` (compile time "
        "reported apart), warmed up, then timed as the median of several repeats with `block_until_ready`; each "
        "side is checked against the baseline before it is timed (agreement rows).",
        *(f"- {note}" for note in notes),
        "",
    ]
    for name, rs in by_table.items():
        text += [f"## {TITLES[name]}", "", table(rs, "wall" if name in APART else "CPU"), ""]
    text += ["## Missed goals and what the profile shows", "", analysis(by_table), ""]
    apart = os.path.join(HERE, "MEASURED_APART.md")  # measurements by hand (not by a script here), kept as written
    if os.path.exists(apart):
        with open(apart) as f:
            text += [f.read().rstrip(), ""]
    with open(args.results, "w") as f:
        f.write("\n".join(text))
    print(f"wrote {args.results} ({total / 60:.1f} min)")


if __name__ == "__main__":
    main()
