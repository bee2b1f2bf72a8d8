"""Benchmark 10, on an accelerator — the seven-link human's predicted gait (quick mesh 3/2/4/3) as one speed sweep
1.0…1.6 m/s under ``vmap`` on JAX's default device, and IPOPT on the same transcription at a subset of its speeds.

An accelerator and IPOPT rarely share a machine (the GPU image has no CasADi), so the run has two steps:

    python benchmarks/human_gait_sweep.py sweep [--batch 64] --out sweep.json        # where the accelerator is
    python benchmarks/human_gait_sweep.py ipopt sweep.json [--members 8] --out rows.json   # where IPOPT is

The first solves the batch (compile timed apart, then the solve twice when time allows) and keeps each member's
objective, iterations and result. The second solves IPOPT from the same guesses at `--members` of the speeds, checks
that the members agree with it (objective to 1e-6), and writes the rows of table 10: each side's time per solve,
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

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))


def _device() -> dict:
    d = jax.devices()[0]
    out = dict(platform=d.platform, device=getattr(d, "device_kind", str(d)), jax=jax.__version__)
    try:
        out["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                                    capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def _dump(path, data):
    with open(path, "w") as f:
        json.dump(data, f, indent=1)


def sweep(args):
    """Solve the batch on the default device; write per-member results and timings to ``args.out``."""
    import difimpact as di
    from difimpact._human_gait import gait as hg
    from human_gait import STEP, problem_at, solver

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
    """IPOPT at ``args.members`` of the sweep's speeds; the rows of table 10 from both sides."""
    from _common import machine
    from _human_ipopt import HumanIpopt
    from difimpact._human_gait import gait as hg
    from human_gait import STEP, problem_at

    with open(args.sweep) as f:
        sw = json.load(f)
    n = sw["batch"]
    idx = np.linspace(0, n - 1, min(n, args.members)).astype(int)
    speeds = np.asarray(sw["speeds"])
    value, fails = np.asarray(sw["value"]), {int(s.split(":")[0]) for s in sw["failures"]}
    ref, cpu = [], []
    for i in idx:
        p = problem_at(float(speeds[i]))
        ip = HumanIpopt(p)
        z0 = hg.initial_guess(p, STEP)
        c0 = time.process_time()
        z, stats = ip.solve(z0)
        cpu.append(time.process_time() - c0)
        ref.append(float(ip.problem.objective(jnp.asarray(z))) if stats["success"] else np.nan)
        print(f"IPOPT at {speeds[i]:.3f} m/s: {cpu[-1]:.1f} s CPU, objective {ref[-1]:.9g} "
              f"(sweep {value[i]:.9g})", flush=True)
    ref = np.asarray(ref)
    both = np.isfinite(ref) & ~np.isin(idx, list(fails))
    agree = float(np.max(np.abs(value[idx][both] / ref[both] - 1))) if both.any() else np.nan
    per = min(sw["run_s"]) / n
    ip_cpu = float(np.median(cpu))
    gpu = f"{sw.get('gpu') or sw['device']} ({sw['platform']}, JAX {sw['jax']})"
    rows = [dict(table="machine", **machine()),
            dict(table="human_gait_gpu", item="quick mesh (3/2/4/3): first compile of the batch", value=sw["compile_s"],
                 unit="s", batch=n, note=f"on {gpu}"),
            dict(table="human_gait_gpu", item=f"speeds 1.0…1.6 m/s, batch {n} (vmap): difimpact per solve",
                 value=per * 1e3, unit="ms", batch=n,
                 note=f"on {gpu}; wall time of the batch / {n}, best of {len(sw['run_s'])} runs "
                      f"({', '.join(f'{r:.1f}' for r in sw['run_s'])} s); {n - len(fails)}/{n} solved; iterations "
                      f"{min(sw['iterations'])}–{max(sw['iterations'])}; objective vs IPOPT's on {int(both.sum())} "
                      f"members: max rel. diff {agree:.1e}"),
            dict(table="human_gait_gpu", item=f"speeds, batch {n}: solved", value=100 * (1 - len(fails) / n), unit="%",
                 goal="100 %", ratio=1 - len(fails) / n, met=not fails, note="; ".join(sw["failures"])[:200]),
            dict(table="human_gait_gpu", item="IPOPT per solve (CPU time)", value=ip_cpu * 1e3, unit="ms",
                 note=f"median over {len(idx)} of the speeds, on this table's machine row (not the GPU's host)"),
            dict(table="human_gait_gpu", item=f"speeds, batch {n}: IPOPT CPU / difimpact GPU time per solve",
                 value=ip_cpu / per, unit="×", goal="≥ 10×", ratio=ip_cpu / per / 10,
                 met=ip_cpu / per >= 10 and not fails and bool(agree <= 1e-6),
                 note="different machines: IPOPT's CPU seconds on the machine row, difimpact's wall seconds on "
                      "the GPU")]
    _dump(args.out, rows)
    for r in rows[1:]:
        print(r, flush=True)
    return rows


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
    args = parser.parse_args()
    jax.config.update("jax_enable_x64", True)
    (sweep if args.step == "sweep" else ipopt)(args)


if __name__ == "__main__":
    main()
