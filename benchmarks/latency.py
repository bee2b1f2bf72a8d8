"""Benchmark 4 — latency a user waits for: the first compliant result after import, and ``difimpact
reproduce`` with an empty persistent compilation cache and again with the cache the first run left.

    python benchmarks/latency.py [--quick] [--out rows.json]

Each measurement is a fresh process (``sys.executable``), timed in wall seconds and in the CPU seconds of that
process (``RUSAGE_CHILDREN``); the cache lives in a temporary ``XDG_CACHE_HOME``. ``--quick`` runs
``reproduce --quick``. Each process also records how long it spent tracing, lowering and compiling
(:mod:`_compile_profile`): a profile row per measurement.
"""

import os
import resource
import subprocess
import sys
import tempfile
import time

import _compile_profile
from _common import machine, parse_args, write

HERE = os.path.dirname(os.path.abspath(__file__))
FIRST_RESULT = """
import time
start = time.perf_counter()
import _compile_profile
import jax
jax.config.update("jax_enable_x64", True)
import difimpact as di
imported = time.perf_counter() - start
walker = di.CrutchWalker()
q, qdot = walker.pre_impact_state(0.2094395102393195, -0.2)
law = di.HuntCrossley(di.hertz_stiffness(0.05, 0.1e9, 0.5, 30e9, 0.2), 1e7)
sol = di.compliant_impact(walker, q, qdot, "Q", normal=law, friction=di.Coulomb(0.75))
print(float(sol.normal_impulse[0]), time.perf_counter() - start, imported)
"""
REPRODUCE = "import sys, _compile_profile; from difimpact._cli import main; sys.exit(main(sys.argv[1:]))"


def timed(cmd, env, profile) -> tuple[float, float, str, dict]:
    """Wall and CPU seconds of the child process running ``cmd``, its standard output and its compile profile
    (recorded into the new folder `profile`)."""
    os.makedirs(profile)
    env = dict(env, **{_compile_profile.ENV: profile})
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, done.stdout, _compile_profile.collect(profile)[0]


def main():
    args = parse_args(__doc__)
    rows = []

    def row(item, wall, cpu, goal, limit, note):
        rows.append(dict(table="latency", item=item, value=wall, cpu_value=cpu, unit="s", goal=goal,
                         ratio=wall / limit, met=bool(cpu <= limit), note=note))

    def profile(what, wall, stages, imported=None):
        spent = sum(stages.values()) + (imported or 0.0)
        rows.append(dict(table="latency", item=f"profile: {what}", value=sum(stages.values()), unit="s",
                         note=f"{_compile_profile.summary(stages)}; "
                              + ("" if imported is None else f"importing JAX and difimpact {imported:.1f} s; ")
                              + f"the rest of the {wall:.1f} s (running, Python, files) {wall - spent:.1f} s"))

    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("JAX_COMPILATION_CACHE_DIR",
                                                                 "DIFIMPACT_NO_COMPILE_CACHE")}
        env["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
        env["PYTHONPATH"] = os.pathsep.join([HERE] + [p for p in [env.get("PYTHONPATH")] if p])
        wall, cpu, out, stages = timed([sys.executable, "-c", FIRST_RESULT], env, os.path.join(tmp, "first"))
        p_n, inside, imported = (float(x) for x in out.split())
        row("first compliant result after import, Table-3 case, cold (fresh process, no cache)", wall, cpu, "≤ 6 s",
            6.0, f"P_n = {p_n:.4f} N s; {inside:.1f} s from the first import to the result inside the process")
        profile("first compliant result, where its time goes (seconds of the process, wall)", inside, stages,
                imported)
        quick = ["--quick"] if args.quick else []
        runs = {}
        for name in ("cold", "warm"):
            cmd = [sys.executable, "-c", REPRODUCE, "reproduce", *quick, "--quiet", "--out", os.path.join(tmp, name)]
            runs[name] = timed(cmd, env, os.path.join(tmp, f"profile-{name}"))
        folder = os.path.join(tmp, "cache", "difimpact", "jax")
        stored = [f for f in os.listdir(folder) if f.endswith("-cache")]
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in stored)
        what = f"`difimpact reproduce{' --quick' if args.quick else ''}`"
        row(f"{what}, cold (empty compilation cache)", *runs["cold"][:2], "≤ 90 s", 90.0,
            f"stores {len(stored)} programs, {size / 2**20:.1f} MiB")
        row(f"{what}, second run (the cache the first left)", *runs["warm"][:2], "≤ 45 s", 45.0,
            f"{runs['cold'][1] / runs['warm'][1]:.2f}× less CPU than the cold run")
        for name, (wall, _, _, stages) in runs.items():
            profile(f"{what}, {name}, where its time goes (seconds of the process, wall; XLA compile includes reads "
                    "of the cache)", wall, stages)
    write(args, [dict(table="machine", **machine())] + rows)


if __name__ == "__main__":
    main()
