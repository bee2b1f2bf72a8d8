"""Benchmark 13 — the programs each main entry point compiles: their size in StableHLO lines and the seconds
spent tracing, lowering and compiling them, so that a regression in program size is visible.

    python benchmarks/programs.py [--quick] [--out rows.json]

Each entry point runs in a fresh process with no persistent compilation cache, float64, the library's default
XLA flags (as a user's notebook), with JAX's IR dump (``jax_dump_ir_to``, a public configuration option) in a
temporary folder: the StableHLO of every program the first call compiles. Rows: the total lines over the
programs and the largest program's lines, and the stages' seconds from JAX's monitoring spans
(:mod:`_compile_profile`). The baseline in the same run is the smallest entry point, the frictional impact map:
each row's note gives the entry point's total as a multiple of it. ``--quick`` leaves out the seven-link human.
"""

import glob
import json
import os
import resource
import subprocess
import sys
import tempfile

from _common import machine, parse_args, write

HERE = os.path.dirname(os.path.abspath(__file__))
PRELUDE = """
import json, time
start = time.perf_counter()
import _compile_profile
import jax
from jax import monitoring
monitoring.register_event_time_span_listener(_compile_profile._listener)
jax.config.update("jax_enable_x64", True)
import difimpact as di
walker = di.CrutchWalker()
q, qdot = walker.pre_impact_state(0.2094395102393195, -0.2)
"""
ENTRIES = [  # (key, the entry point, the code of its first call)
    ("impact", "`frictional_impact` (crutch walker)",
     "di.frictional_impact(walker, q, qdot, 'Q', friction=di.Coulomb(0.75)).normal_impulse.block_until_ready()"),
    ("gradient", "`jax.grad` of `frictional_impact`",
     "jax.grad(lambda mu: di.frictional_impact(walker, q, qdot, 'Q', friction=di.Coulomb(mu)).normal_impulse)"
     "(0.75).block_until_ready()"),
    ("compliant", "`compliant_impact`, Table-3 case",
     "law = di.HuntCrossley(di.hertz_stiffness(0.05, 0.1e9, 0.5, 30e9, 0.2), 1e7)\n"
     "di.compliant_impact(walker, q, qdot, 'Q', normal=law, friction=di.Coulomb(0.75)).normal_impulse"
     ".block_until_ready()"),
    ("kelly", "`kelly_gait()` (6 segments)", "float(di.kelly_gait().cost)"),
    ("human", "`human_gait` (quick mesh 3/2/4/3)", "float(di.human_gait(di.SevenLinkHuman(), 1.3).cost)"),
]


def measure(key: str, code: str) -> dict:
    """One fresh process: the entry point's first call; its programs' StableHLO lines and its stages' seconds."""
    with tempfile.TemporaryDirectory() as dump:
        script = PRELUDE.format(dump=dump) + code + (
            "\nprint('RESULT', json.dumps(dict(_compile_profile.totals(), wall=time.perf_counter() - start)))\n")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   JAX_ENABLE_COMPILATION_CACHE="false", JAX_DUMP_IR_TO=dump)
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=HERE)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if out.returncode:
            raise RuntimeError(f"{key}: {out.stderr[-2000:]}")
        stages = json.loads(next(ln for ln in out.stdout.splitlines() if ln.startswith("RESULT"))[7:])
        sizes = {}
        for path in glob.glob(os.path.join(dump, "**", "*.mlir"), recursive=True):
            with open(path) as f:
                sizes[os.path.basename(path)] = sum(1 for _ in f)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    largest = max(sizes, key=sizes.get) if sizes else ""
    return dict(stages, cpu=cpu, lines=sum(sizes.values()), programs=len(sizes), largest=sizes.get(largest, 0),
                largest_name=largest)


def rows_for(entries) -> list[dict]:
    results = {key: measure(key, code) for key, _, code in entries}
    base = results["impact"]["lines"]
    rows = []
    for key, name, _ in entries:
        r = results[key]
        note = (f"{r['programs']} programs, the largest {r['largest']} lines ({r['largest_name']}); "
                f"{r['lines'] / base:.3g}× the impact map's lines")
        rows.append(dict(table="programs", item=f"StableHLO lines, first {name}", value=r["lines"], cpu_value=None, unit="lines",
                         goal=None, ratio=None, met=None, note=note))
        rows.append(dict(table="programs", item=f"tracing / lowering / XLA compile, first {name}", value=r["wall"],
                         cpu_value=r["cpu"], unit="s", goal=None, ratio=None, met=None,
                         note=f"{r['tracing']:.1f} / {r['lowering']:.1f} / {r['XLA compile']:.1f} s"))
    return rows


def main():
    args = parse_args(__doc__.splitlines()[0])
    entries = [e for e in ENTRIES if not (args.quick and e[0] == "human")]
    rows = rows_for(entries)
    write(args, [dict(table="machine", **machine())] + rows, echo=rows)


if __name__ == "__main__":
    main()
