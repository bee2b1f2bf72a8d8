"""Benchmark 11 (table 11 of RESULTS.md) — the seven-link human's predicted gait (quick mesh 3/2/4/3) as one speed
sweep 1.0…1.6 m/s under ``vmap`` on JAX's default device, and IPOPT on the same transcription at a subset of its
speeds.

An accelerator and IPOPT rarely share a machine (the GPU image has no CasADi), so the run has two steps:

    python benchmarks/human_gait_sweep.py sweep [--batch 64] --out sweep.json        # where the accelerator is
    python benchmarks/human_gait_sweep.py ipopt sweep.json [--members 8] --out rows.json   # where IPOPT is
    python benchmarks/human_gait_sweep.py table sweep.json rows.json.ipopt.json --out rows.json  # rows again

The first solves the batch (compile timed apart, then the solve twice when time allows) and keeps each member's
objective, iterations and result. The second solves IPOPT from the same guesses at `--members` of the speeds, checks
that the members agree with it (objective to 1e-6), and writes the rows of table 11: each side's time per solve,
its machine, and their ratio (IPOPT's CPU time per solve over the sweep's wall time per solve, since a GPU's time
is wall time). The two sides ran on different machines: the rows say which.
"""

import argparse
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jax
import jax.numpy as jnp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))


def _device() -> dict:
    d = jax.devices()[0]
    out = {"platform": d.platform, "device": getattr(d, "device_kind", str(d)), "jax": jax.__version__}
    try:
        out["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                    capture_output=True, text=True, timeout=20, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def _dump(path, data):
    with open(path, "w") as f:
        json.dump(data, f, indent=1)


def sweep(args):
    """Solve the batch on the default device; write per-member results and timings to ``args.out``."""
    from human_gait import STEP, problem_at, solver

    import difimpact as di
    from difimpact._human_gait import gait as hg

    t_start = time.perf_counter()
    data = dict(step="sweep", batch=args.batch, started=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                **_device())
    print(data, flush=True)
    speeds = np.linspace(1.0, 1.6, args.batch)
    guesses = np.stack([hg.initial_guess(problem_at(float(v)), STEP) for v in speeds])
    data.update(speeds=speeds.tolist(), guesses_s=time.perf_counter() - t_start)
    _dump(args.out, data)
    solve = jax.vmap(solver(di.NLPOptions(max_steps=args.max_steps, bound_relax_factor=1e-8)))
    arrays = (jnp.asarray(speeds), jnp.asarray(guesses))
    w0 = time.perf_counter()
    compiled = jax.jit(solve).lower(*arrays).compile()
    data["compile_s"] = time.perf_counter() - w0
    print(f"compiled in {data['compile_s']:.1f} s", flush=True)
    _dump(args.out, data)
    runs = []
    while True:
        w0 = time.perf_counter()
        out = jax.block_until_ready(compiled(*arrays))
        runs.append(time.perf_counter() - w0)
        print(f"solved the batch in {runs[-1]:.2f} s", flush=True)
        data.update(run_s=runs, value=np.asarray(out.solution.value).tolist(),
                    cost=np.asarray(out.cost).tolist(), iterations=np.asarray(out.iterations).tolist(),
                    result=np.asarray(out.result._value).tolist(),
                    failures=[f"{i}: {m}" for i, m in di.failures(out.result)])
        _dump(args.out, data)
        if len(runs) >= 2 or time.perf_counter() - t_start + runs[-1] > args.budget:
            break
    return data


def ipopt(args):
    """IPOPT at ``args.members`` of the sweep's speeds (its raw times and objectives kept beside the sweep's in
    ``<out>.ipopt.json``); the rows of table 11 from both sides."""
    from human_gait import STEP, ipopt_solves, problem_at

    from difimpact._human_gait import gait as hg

    with open(args.sweep) as f:
        sw = json.load(f)
    idx = np.linspace(0, sw["batch"] - 1, min(sw["batch"], args.members)).astype(int)
    speeds = np.asarray(sw["speeds"])[idx]
    costs, wall, cpu = ipopt_solves(speeds, [hg.initial_guess(problem_at(float(v)), STEP) for v in speeds])
    ip = {"members": idx.tolist(), "objective": [float(c) if np.isfinite(c) else None for c in costs],
          "wall_s": wall.tolist(), "cpu_s": cpu.tolist()}
    _dump(args.out + ".ipopt.json", ip)
    rows = table(sw, ip)
    _dump(args.out, rows)
    for r in rows[1:]:
        print(r, flush=True)
    return rows


def table(sw, ip) -> list[dict]:
    """The rows (machine first, as ``run.py --render --add`` reads them): the sweep's compile and time per solve
    on its device, IPOPT's per solve here, their ratio, and the members' agreement with IPOPT."""
    from _common import machine

    n, idx = sw["batch"], np.asarray(ip["members"])
    value = np.asarray(sw["value"])
    fails = {int(s.split(":")[0]) for s in sw["failures"]}
    ref = np.array([np.nan if o is None else o for o in ip["objective"]])
    both = np.isfinite(ref) & ~np.isin(idx, list(fails))
    agree = float(np.max(np.abs(value[idx][both] / ref[both] - 1))) if both.any() else np.nan
    per = min(sw["run_s"]) / n
    at = ", ".join(f"{sw['speeds'][i]:.3f}" for i in idx)
    ip_wall, ip_cpu = float(np.median(ip["wall_s"])), float(np.median(ip["cpu_s"]))
    gpu = f"{sw.get('gpu') or sw['device']}, JAX {sw['jax']}"
    host = machine()
    host["devices"] = host["devices"] + [f"the sweep's: {gpu} (its own host)"]
    row = {"table": "human_gait_gpu"}
    met = ip_wall / per >= 10 and not fails and bool(agree <= 1e-6)
    return [dict(table="machine", **host),
            dict(row, item="quick mesh (3/2/4/3): first compile of the batch (GPU)", value=sw["compile_s"], unit="s",
                 batch=n, note=f"on {gpu}"),
            dict(row, item=f"speeds 1.0…1.6 m/s, batch {n} (vmap, GPU): difimpact per solve", value=per * 1e3,
                 unit="ms", batch=n,
                 note=f"on {gpu}; the batch's wall time / {n}, best of {len(sw['run_s'])} runs "
                      f"({', '.join(f'{r:.1f}' for r in sw['run_s'])} s); iterations {min(sw['iterations'])}–"
                      f"{max(sw['iterations'])} (under vmap every member runs until the last converges)"),
            dict(row, item=f"speeds, batch {n} (GPU): solved", value=100 * (1 - len(fails) / n), unit="%",
                 goal="100 %", ratio=1 - len(fails) / n, met=not fails, note="; ".join(sw["failures"])[:200]),
            dict(row, item=f"speeds, batch {n} (GPU): objective vs IPOPT's, max rel. diff", value=agree, unit="",
                 goal="≤ 1e-6", ratio=agree / 1e-6, met=bool(agree <= 1e-6),
                 note=f"{int(both.sum())} of the speeds ({at} m/s), IPOPT from the same guesses"),
            dict(row, item="IPOPT per solve (CPU, this table's machine)", value=ip_wall * 1e3, cpu_value=ip_cpu * 1e3,
                 unit="ms", note=f"median over {len(idx)} of the speeds; CasADi's IPOPT with MUMPS, exact Hessian, "
                                 "JAX's derivative programs (compiled before the timed solves)"),
            dict(row, item=f"speeds, batch {n}: IPOPT (CPU) / difimpact (GPU) time per solve", value=ip_wall / per,
                 cpu_value=ip_cpu / per, unit="×", goal="≥ 10×", ratio=ip_wall / per / 10, met=met,
                 judged_on="wall",
                 note="two machines: IPOPT's time on the machine row's CPU (CPU column: its CPU seconds), "
                      "difimpact's wall time on the GPU")]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="step", required=True)
    s = sub.add_parser("sweep", help="the batch on JAX's default device")
    s.add_argument("--batch", type=int, default=64)
    s.add_argument("--max-steps", type=int, default=500)
    s.add_argument("--budget", type=float, default=480.0, help="seconds; a second timed run only if it fits")
    s.add_argument("--out", required=True)
    i = sub.add_parser("ipopt", help="IPOPT at some of a sweep's speeds, and the rows of table 10")
    i.add_argument("sweep")
    i.add_argument("--members", type=int, default=8)
    i.add_argument("--out", required=True)
    t = sub.add_parser("table", help="the rows again from a sweep and an IPOPT step's raw file")
    t.add_argument("sweep")
    t.add_argument("ipopt")
    t.add_argument("--out", required=True)
    args = parser.parse_args()
    jax.config.update("jax_enable_x64", True)
    if args.step == "table":
        with open(args.sweep) as f, open(args.ipopt) as g:
            _dump(args.out, table(json.load(f), json.load(g)))
    else:
        (sweep if args.step == "sweep" else ipopt)(args)


if __name__ == "__main__":
    main()
