"""Run every benchmark, each in its own process (x64 is a global JAX flag), and rewrite ``RESULTS.md``.

    python benchmarks/run.py [--quick] [--only impulsive compliant gradient] [--results PATH]
"""

import argparse
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
    "gradient": [[]],
}
TITLES = {
    "impulsive": "1. Impulsive throughput — crutch walker frictional map, jit + vmap",
    "compliant": "2. Compliant throughput — Hunt–Crossley + exact Coulomb, end of compression",
    "gradient": "3. Gradient cost — jax.grad of the energy loss w.r.t. all 17 CrutchWalker parameters",
}


def fmt(x):
    if x is None:
        return ""
    if isinstance(x, bool):
        return "met" if x else "**missed**"
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


def table(rows):
    lines = ["| item | measured (wall) | measured (CPU time) | unit | goal | measured / goal | | note |",
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
            if r.get("met") is False:
                factor = r["ratio"] if r["ratio"] < 1 else 1 / r["ratio"]
                out.append(f"- **{r['item']}** missed: {fmt(r['value'])} {r['unit']} against {r['goal']} "
                           f"(a factor {1 / factor:.2g} short; in CPU time {fmt(r.get('cpu_value'))}).")
    imp = by_table.get("impulsive", [])
    full = find(imp, "profile: full map (M")
    if full:
        share = {k: find(imp, f"profile: {k}") for k in ("full map with throw", "M(q) alone", "contact Jacobian",
                                                          "batched jnp.linalg.solve", "batched Cholesky",
                                                          "frictional_impact_map given")}
        pct = {k: v["value"] / full["value"] for k, v in share.items() if v}
        out.append(
            f"- Impulsive profile (float64, {full['value']:.0f} ns per impact for the full map): building M(q) by "
            f"forward-mode autodiff of the tree costs {pct['M(q) alone']:.0%} of it, the contact Jacobian "
            f"{pct['contact Jacobian']:.0%}, the batched 6×6 LU solve alone {pct['batched jnp.linalg.solve']:.0%} "
            f"(a batched Cholesky solve of the same system {pct['batched Cholesky']:.0%}), and the error_if checks "
            f"{1 - pct['full map with throw']:.0%} (the map without them). The pieces are timed separately, so "
            "they overlap and need not add up; XLA fuses them differently inside the full map.")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run, minutes)")
    parser.add_argument("--only", nargs="+", choices=list(SCRIPTS), default=list(SCRIPTS))
    parser.add_argument("--results", default=os.path.join(HERE, "RESULTS.md"))
    args = parser.parse_args()
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
                subprocess.run(cmd, check=True)
                print(f"  {time.perf_counter() - t:.0f} s", flush=True)
                with open(out) as f:
                    got = json.load(f)
                machine = machine or got[0]
                rows += got[1:]
    total = time.perf_counter() - start
    by_table = {name: [r for r in rows if r["table"] == name] for name in args.only}
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_after = os.getloadavg()
    text = [
        "# Benchmark results",
        "",
        f"Written by `python benchmarks/run.py{' --quick' if args.quick else ''}` on {now}; the whole run took "
        f"{total / 60:.1f} min. Do not edit by hand: rerun the command.",
        "",
        f"- Machine: {machine['cpu']}, {machine['cores']} cores, devices {', '.join(machine['devices'])}.",
        f"- Versions: JAX {machine['jax']}, NumPy {machine['numpy']}, SciPy {version('scipy')}, "
        f"Pinocchio {version('pin')}, equinox {version('equinox')}, diffrax {version('diffrax')}.",
        "- dtype: float64 unless a row says float32 (the float32 rows run in their own process without x64).",
        f"- Load average (1, 5, 15 min) before: {', '.join(f'{x:.1f}' for x in load_before)}; after: "
        f"{', '.join(f'{x:.1f}' for x in load_after)}. Other processes shared the cores while this ran: the wall "
        "times include the time they held the cores, and the CPU-time column (this process's CPU seconds, all "
        "threads) is the better measure of the work. Goals are judged on the wall time.",
        "- GPU rows: not run — no device lent to this session.",
        "- Method: each difimpact function is compiled once with `jax.jit(f).lower(...).compile()` (compile time "
        "reported apart), warmed up, then timed as the median of several repeats with `block_until_ready`; each "
        "side is checked against the baseline before it is timed (agreement rows).",
        "",
    ]
    for name, rs in by_table.items():
        text += [f"## {TITLES[name]}", "", table(rs), ""]
    text += ["## GPU", "", "| benchmark | goal | measured |", "| --- | --- | --- |",
             "| impulsive, batch up to 1e7 | ≥ 1e8 impacts/s | not run — no device lent to this session |",
             "| compliant | ≥ 1e5 solves/s | not run — no device lent to this session |", ""]
    text += ["## Missed goals and what the profile shows", "", analysis(by_table), ""]
    with open(args.results, "w") as f:
        f.write("\n".join(text))
    print(f"wrote {args.results} ({total / 60:.1f} min)")


if __name__ == "__main__":
    main()
