"""Benchmark 4 — latency a user waits for: the first result of each main entry point after import, each in a fresh
process with an empty persistent compilation cache (cold) and again with the cache the first process left (warm);
and ``difimpact reproduce`` cold and warm.

    python benchmarks/latency.py [--quick] [--part first|reproduce] [--items impact gradient compliant kelly human]
                                 [--out rows.json]

Each measurement is a fresh process (``sys.executable``), timed in wall seconds and in the CPU seconds of that
process (``RUSAGE_CHILDREN``); each process switches the cache on as a user would (``di.use_compilation_cache()``),
in its default folder under a temporary ``XDG_CACHE_HOME``, one per entry point. Baselines in the same run, also
fresh processes: a plain diffrax event solve (the compliant phase's) and CasADi + IPOPT building and solving Kelly's
problem (``_kelly_ipopt.py``). ``--quick`` runs ``reproduce --quick``. Each process also records how long it spent
tracing, lowering and compiling (:mod:`_compile_profile`): a profile row per ``reproduce`` measurement.
``--items`` measures only those first results (and the baselines they are compared with); its rows join the
stored table with ``python benchmarks/run.py --render benchmarks/results.json --add rows.json``.
"""

import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

import _compile_profile
from _common import machine, parse_args, write

HERE = os.path.dirname(os.path.abspath(__file__))
PRELUDE = """
import json, time
start = time.perf_counter()
import _compile_profile
import jax
jax.config.update("jax_enable_x64", True)
import difimpact as di
di.use_compilation_cache()
walker = di.CrutchWalker()
q, qdot = walker.pre_impact_state(0.2094395102393195, -0.2)
"""
# (key, the row's item before ", cold"/", warm", the code that sets `value`)
FIRST = [
    ("impact", "first `frictional_impact` result after import",
     "value = float(di.frictional_impact(walker, q, qdot, 'Q', friction=di.Coulomb(0.75)).normal_impulse)"),
    ("gradient", "first `jax.grad` of `frictional_impact` after import",
     ("value = float(jax.grad(lambda mu: di.frictional_impact(walker, q, qdot, 'Q', "
      "friction=di.Coulomb(mu)).normal_impulse)(0.75))")),
    ("compliant", "first compliant result after import, Table-3 case",
     ("law = di.HuntCrossley(di.hertz_stiffness(0.05, 0.1e9, 0.5, 30e9, 0.2), 1e7)\n"
      "value = float(di.compliant_impact(walker, q, qdot, 'Q', normal=law, friction=di.Coulomb(0.75))"
      ".normal_impulse[0])")),
    ("kelly", "first `kelly_gait()` after import", "value = float(di.kelly_gait().cost)"),
    ("human", "first `human_gait` (quick mesh 3/2/4/3, 1.3 m/s) after import",
     "value = float(di.human_gait(di.SevenLinkHuman(), 1.3).cost)"),
]
RUNS = {"cold": "cold (fresh process, no cache)", "warm": "warm (fresh process, the cache the cold one left)"}
# The goals for a first result, CPU seconds with the import
# (and the gait optimiser issue's: a first optimal Kelly gait ≤ 20 s cold, a first human gait ≤ 40 s cold)
GOALS = {("impact", "cold"): 4.0, ("impact", "warm"): 2.5, ("gradient", "cold"): 6.0, ("kelly", "warm"): 3.0,
         ("kelly", "cold"): 20.0, ("human", "cold"): 40.0, ("human", "warm"): 8.0}
EVENT_SOLVE = """
import time
start = time.perf_counter()
import diffrax, jax, jax.numpy as jnp, optimistix as optx
jax.config.update("jax_enable_x64", True)
k, c = 1e6, 1e3  # a unit mass landing on a Hunt-Crossley spring, until it leaves the ground (its height 0)
f = lambda t, y, args: jnp.stack([y[1], jnp.where(y[0] < 0, -k * y[0] + c * y[0] * y[1], 0.0) - 9.81])
event = diffrax.Event(lambda t, y, args, **kw: y[0], root_finder=optx.Newton(1e-10, 1e-10))
sol = diffrax.diffeqsolve(diffrax.ODETerm(f), diffrax.Tsit5(), 0.0, 1.0, 1e-5, jnp.array([-1e-12, -1.0]), event=event,
                          stepsize_controller=diffrax.PIDController(rtol=1e-8, atol=1e-10))
print(float(sol.ys[-1, 1]), time.perf_counter() - start)
"""
CASADI = """
import time
start = time.perf_counter()
from _kelly_ipopt import kelly_problem
sol = kelly_problem(method="hermite-simpson", segments=6).solve()
print(float(sol["cost"]), time.perf_counter() - start)
"""
REPRODUCE = "import sys, _compile_profile; from _difimpact_cli import main; sys.exit(main(sys.argv[1:]))"


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


def _row(rows, item, wall, cpu, goal, limit, note, judged_on_wall=False):
    """A latency row: wall and CPU seconds, judged on the CPU seconds (or on the wall seconds, `judged_on_wall`:
    a run spread over worker processes) against `limit` (None: no goal)."""
    value = wall if judged_on_wall else cpu
    rows.append(dict(table="latency", item=item, value=wall, cpu_value=cpu, unit="s", goal=goal,
                     ratio=None if limit is None else value / limit,
                     met=None if limit is None else bool(value <= limit), note=note,
                     **(dict(judged_on="wall") if judged_on_wall else {})))


def _profile(rows, what, wall, stages):
    """A profile row: where the `wall` seconds of a process went (tracing, lowering, compiling)."""
    spent = sum(stages.values())
    rows.append(dict(table="latency", item=f"profile: {what}", value=spent, unit="s",
                     note=f"{_compile_profile.summary(stages)}; the rest of the {wall:.1f} s (running, Python, files) "
                          f"{wall - spent:.1f} s"))


def first_results(env, tmp, rows, items):
    """Rows of the first result of each entry point of `items`, cold and warm, where its time goes, and of the
    baselines they are compared with (fresh processes)."""
    seconds = {}
    for key, item, code in (f for f in FIRST if f[0] in items):
        cache = os.path.join(tmp, f"first-{key}")
        script = PRELUDE + code + "\nprint(json.dumps([value, time.perf_counter() - start]))"
        for run in ("cold", "warm"):
            wall, cpu, out, stages = timed([sys.executable, "-c", script], dict(env, XDG_CACHE_HOME=cache),
                                           os.path.join(tmp, f"p-{key}-{run}"))
            value, inside = json.loads(out.splitlines()[-1])
            seconds[key, run] = cpu
            stored, size = _stored(os.path.join(cache, "difimpact", "jax"))
            exported, exported_size = _stored(os.path.join(cache, "difimpact", "jax"), ".exported")
            limit = GOALS.get((key, run))
            _row(rows, f"{item}, {RUNS[run]}", wall, cpu, None if limit is None else f"≤ {limit:g} s", limit,
                f"value {value:.6g}; {inside:.1f} s from the first import to the result inside the process; the "
                f"cache then holds {stored} programs, {size / 2**20:.1f} MiB, and {exported} exported "
                f"(`jax.export`, traced and lowered), {exported_size / 2**20:.1f} MiB")
            _profile(rows, f"{item}, {run}, where its time goes (seconds of the process, wall; XLA compile includes "
                    "reads of the cache)", inside, stages)
    for item, script, compare in (("a plain diffrax event solve (Tsit5, PID, one event), cold", EVENT_SOLVE,
                                   "compliant"),
                                  ("CasADi + IPOPT building and solving Kelly's problem (6 segments)", CASADI,
                                   "kelly")):
        if compare not in items:
            continue
        wall, cpu, out, _ = timed([sys.executable, "-c", script], env, os.path.join(tmp, f"p-{compare}"))
        ratios = ", ".join(f"{run} {seconds[compare, run] / cpu:.1f}×" for run in ("cold", "warm"))
        _row(rows, f"baseline: {item}", wall, cpu, None, None,
             f"the first {compare} result takes {ratios} its CPU seconds")
        seconds[compare, "baseline"] = cpu
    for run, limit in (("cold", 3.0), ("warm", 1.5)) if "compliant" in items else ():  # the goals
        ratio = seconds["compliant", run] / seconds["compliant", "baseline"]
        rows.append(dict(table="latency", item=f"first compliant result / a plain diffrax event solve (CPU), {run}",
                         value=ratio, cpu_value=ratio, unit="×", goal=f"≤ {limit:g}×", ratio=ratio / limit,
                         met=bool(ratio <= limit), note="each in a fresh process, the import included"))


def _stored(folder, ending="-cache") -> tuple[int, int]:
    """The number and bytes of the programs in the cache folder `folder` (its version subfolders included): those
    XLA compiled (``-cache``), or the exported ones (``.exported``)."""
    files = [os.path.join(d, f) for d, _, names in os.walk(folder) for f in names if f.endswith(ending)]
    return len(files), sum(os.path.getsize(f) for f in files)


def _statements(folder) -> dict:
    """Each experiment's rows and checks (statement, paper's value, ours, agreement) in `folder`: what its
    report says, without the seconds it took."""
    out = {}
    for path in sorted(pathlib.Path(folder).glob("*/result.json")):
        result = json.loads(path.read_text())
        out[result["name"]] = (result["rows"], json.dumps(result["checks"], sort_keys=True))
    return out


def reproduce(env, tmp, args, rows):
    """Rows of ``difimpact reproduce`` cold and warm: twice in a row as a user would (fresh processes, one cache
    folder, one output folder, so that the second run starts the experiments that took longest in the first);
    the second's report must say what the first's said."""
    quick = ["--quick"] if args.quick else []
    runs, said, out = {}, {}, os.path.join(tmp, "out")
    for name in ("cold", "warm"):
        cmd = [sys.executable, "-c", REPRODUCE, "reproduce", *quick, "--quiet", "--out", out]
        runs[name] = timed(cmd, env, os.path.join(tmp, f"profile-{name}"))
        said[name] = _statements(out)
    if said["cold"] != said["warm"] or not said["cold"]:
        names = said["cold"].keys() | said["warm"].keys()
        differ = sorted(k for k in names if said["cold"].get(k) != said["warm"].get(k))
        raise RuntimeError(f"the second run's report differs from the first's: {differ or 'no experiment ran'}")
    stored, size = _stored(os.path.join(tmp, "cache", "difimpact", "jax"))
    what = f"`difimpact reproduce{' --quick' if args.quick else ''}`"
    # the issue's goals, wall seconds (the experiments run in worker processes, `--jobs`' default)
    cold, warm = ((240.0, "≤ 4 min"), (90.0, "≤ 90 s")) if args.quick else ((1200.0, "≤ 20 min"), (None, None))
    _row(rows, f"{what}, cold (empty compilation cache)", *runs["cold"][:2], cold[1], cold[0],
         f"stores {stored} programs, {size / 2**20:.1f} MiB; wall seconds judged", judged_on_wall=True)
    _row(rows, f"{what}, second run (the cache the first left)", *runs["warm"][:2], warm[1], warm[0],
         f"{runs['cold'][1] / runs['warm'][1]:.2f}× less CPU than the cold run; the report the same "
         f"({len(said['warm'])} experiments' rows and checks); wall seconds judged",
         judged_on_wall=True)
    for name, (wall, _, _, stages) in runs.items():
        _profile(rows, f"{what}, {name}, where its time goes (seconds of the process, wall; XLA compile includes reads "
                "of the cache; the parent process only, not its workers)", wall, stages)


def main():
    keys = [f[0] for f in FIRST]
    args = parse_args(__doc__, part=("first", "reproduce"), extra=[(("--items",), dict(
        nargs="+", choices=keys, default=keys, help="only these first results (and their baselines)"))])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith((
            "JAX_COMPILATION_CACHE", "JAX_PERSISTENT_CACHE", "JAX_ENABLE_COMPILATION_CACHE"))
            and k != "DIFIMPACT_NO_COMPILE_CACHE"}
        env["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
        env["PYTHONPATH"] = os.pathsep.join([HERE] + [p for p in [env.get("PYTHONPATH")] if p])
        if args.part in (None, "first"):
            first_results(env, tmp, rows, args.items)
        if args.part in (None, "reproduce"):
            reproduce(env, tmp, args, rows)
    write(args, [dict(table="machine", **machine())] + rows)


if __name__ == "__main__":
    main()
