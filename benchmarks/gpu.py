"""Benchmark 7 — one GPU: the crutch walker's frictional impact map (seed 000, §3) at batches up to 1e7 and the
compliant contact phase (seed 000, §4–5, Table-3 nominal and sliding cases) at batches up to 1048576, jit + vmap
on the GPU, each against baselines run in the same process on the same machine: the same map compiled for the
machine's CPU cores, the NumPy closed form vectorised over the batch (impulsive), and ``scipy.integrate.solve_ivp``
(LSODA) with a NumPy right-hand side (compliant; ``compliant.ScipyCompliant``).

    python benchmarks/gpu.py [--dtype float32] [--quick] [--budget S] [--out rows.json]

It needs a GPU as JAX's default device (``--allow-cpu`` runs it on the CPU, as a smoke test of the script). The
rows go into ``RESULTS.md``'s GPU table with ``python benchmarks/run.py --render benchmarks/results.json --add
rows.json``; ``run.py`` itself does not run this script, since the benchmark and CI machines have no GPU.

Timing: wall seconds of one compiled call on arrays already on the device, results blocked, median of 5 (the
process CPU time is the host waiting, so GPU rows carry no CPU-time column). Every batch is checked before it is
timed: the impulsive map against the NumPy closed form (``_common.numpy_frictional_map``) on 1e4 states, the
compliant phase against scipy on the first members. The compliant phase runs in float64 only (its event and step
tolerances, 1e-8/1e-10, are below float32's resolution). The rows are written after each measurement, so a run
stopped by its time limit keeps what it measured; ``--budget`` skips the larger compliant batches once that
many seconds have passed.
"""

import time

import jax
import jax.numpy as jnp
import numpy as np

import difimpact as di
from _common import (REGIME_NAMES, NumpyCrutchWalker, compile_time, impacts, machine, median_time, parse_args,
                     seed000_states, write)
from compliant import CASES, ScipyCompliant, difimpact_batch, jittered_states

IMPULSIVE_GOAL = 1e8  # impacts/s on one GPU (the speed issue's GPU row)
COMPLIANT_GOAL = 1e5  # solves/s


def main():
    start = time.perf_counter()
    args = parse_args(__doc__, dtype=True, extra=[
        (("--budget",), dict(type=float, default=420.0, help="seconds after which larger compliant batches are "
                                                                "skipped")),
        (("--allow-cpu",), dict(action="store_true", help="run without a GPU (a smoke test of the script)"))])
    gpu = jax.devices()[0]
    if gpu.platform != "gpu" and not args.allow_cpu:
        raise SystemExit(f"gpu.py: JAX's default device is {gpu} (no GPU); pass --allow-cpu for a smoke test")
    cpu = jax.devices("cpu")[0]
    dtype = np.dtype(args.dtype)
    x64 = dtype == np.float64
    tag = f"[{args.dtype}]"
    host = dict(table="machine", **machine())
    rows = []

    def row(item, value, unit, **kw):
        rows.append(dict(table="gpu", item=f"{item} {tag}", value=float(value), unit=unit, **kw))
        write(args, [host] + rows, echo=rows[-1:])

    # -- impulsive: agreement on 1e4 states, then throughput by batch -----------------------------------
    batches = [10**3, 10**4] if args.quick else [10**4, 10**5, 10**6, 10**7]
    n_states = min(batches[-1], 10**6)
    q_all, qdot_all, mu_all = seed000_states(n_states)
    reps = -(-batches[-1] // n_states)  # the largest batches repeat the 1e6 drawn states
    walker = di.CrutchWalker()

    def batch(n, device):
        tiled = (np.tile(x, (reps,) + (1,) * (x.ndim - 1))[:n] for x in (q_all, qdot_all, mu_all))
        return tuple(jax.device_put(jnp.asarray(x, dtype), device) for x in tiled)

    nw = NumpyCrutchWalker(walker)
    n_check = min(10**4, n_states)
    check = batch(n_check, gpu)
    fn, _, _ = compile_time(impacts, walker, *check)
    got = jax.tree.map(np.asarray, fn(walker, *check))
    ref = nw.frictional_impact(q_all[:n_check], qdot_all[:n_check], mu_all[:n_check])
    err = max(float(np.max(np.abs(g - r) / (1.0 + np.abs(r)))) for g, r in zip(got[:5], ref))
    tol = 1e-9 if x64 else 2e-3
    row(f"impulsive on {gpu.device_kind}: agreement with the NumPy closed form, max |Δ|/(1+|ref|)", err, "",
        goal=f"≤ {tol:g}", met=bool(err <= tol),
        note=f"{n_check} states; regimes " + ", ".join(
            f"{name}: {count}" for name, count in zip(REGIME_NAMES, np.bincount(
                got[5], minlength=len(REGIME_NAMES)))))
    if not err <= tol:
        raise AssertionError(f"difimpact on the GPU and the NumPy closed form disagree: {err}")

    n_base = batches[1]
    t_np, _ = median_time(nw.frictional_impact, q_all[:n_base], qdot_all[:n_base], mu_all[:n_base], repeats=3)
    row("NumPy closed form, vectorised over the batch (host CPU, one thread)", n_base / t_np, "impacts/s",
        note=f"batch {n_base:.0e}, M and the tip Jacobian included")
    xs = batch(n_base, cpu)
    fn, wall, _ = compile_time(impacts, jax.device_put(walker, cpu), *xs)
    t_cpu, _ = median_time(fn, jax.device_put(walker, cpu), *xs)
    row(f"difimpact jit+vmap on the host CPU ({host['cores']} cores), batch {n_base:.0e}", n_base / t_cpu,
        "impacts/s", note=f"{t_cpu * 1e3:.2f} ms per batch; compile {wall:.1f} s")

    best = 0.0
    for n in batches:
        xs = batch(n, gpu)
        try:
            fn, wall, _ = compile_time(impacts, walker, *xs)
            t, _ = median_time(fn, walker, *xs)
        except Exception as err:  # e.g. out of GPU memory at the largest batch: say so and go on
            row(f"impulsive on the GPU, batch {n:.0e}: failed", float("nan"), "", note=_first_line(err))
            continue
        best = max(best, n / t)
        row(f"impulsive on the GPU, batch {n:.0e}", n / t, "impacts/s",
            note=f"{t * 1e3:.3g} ms per batch; compile {wall:.1f} s; {n / t * t_cpu / n_base:.0f}× difimpact on "
                 f"the host CPU, {n / t * t_np / n_base:.0f}× NumPy vectorised")
        del xs
    row("impulsive on the GPU, best batch", best, "impacts/s", goal="≥ 1e8", ratio=best / IMPULSIVE_GOAL,
        met=bool(best >= IMPULSIVE_GOAL), note=f"{best * t_cpu / n_base:.0f}× difimpact on the host CPU")
    n = batches[-2]
    xs = batch(n, gpu)
    fn, _, _ = compile_time(lambda *a: impacts(*a, throw=False), walker, *xs)
    t, _ = median_time(fn, walker, *xs)
    row(f"impulsive on the GPU with throw=False (no approach_not_stopped check), batch {n:.0e}", n / t,
        "impacts/s", note="the check's cost on the GPU, against the row of the same batch above")
    if not x64:
        return

    # -- compliant: scipy reference on the first members, then throughput by batch ----------------------
    batches = [16, 128] if args.quick else [1024, 16384, 131072, 1048576]
    n_scipy = 2 if args.quick else 8
    q, qdot = jittered_states(walker, batches[-1])
    baseline = ScipyCompliant(walker)
    compiled = {}
    for case, mu_value in CASES.items():
        t0 = time.perf_counter()
        ref = np.array([baseline.solve(q[k], qdot[k], mu_value)[:2] for k in range(n_scipy)])
        t_scipy = (time.perf_counter() - t0) / n_scipy
        row(f"compliant, {case}: scipy LSODA + NumPy RHS (host CPU, one thread)", t_scipy * 1e3, "ms/case",
            note=f"{n_scipy} cases")
        best = 0.0
        for n in batches:
            if n not in compiled and time.perf_counter() - start > args.budget:
                row(f"compliant, {case}, batch {n}: skipped", float("nan"), "",
                    note=f"past the --budget of {args.budget:.0f} s")
                continue
            xs = (walker, jnp.asarray(q[:n]), jnp.asarray(qdot[:n]), jnp.full(n, mu_value))
            if n not in compiled:
                compiled[n] = compile_time(difimpact_batch, *xs)[:2]
            fn, wall = compiled[n]
            pn, pt, steps, stuck, ok = (np.asarray(x) for x in fn(*xs))
            m = min(n, n_scipy)
            err = float(np.max(np.abs(pn[:m][ok[:m]] - ref[:m, 0][ok[:m]]), initial=np.inf if not ok[:m].any()
                               else 0.0))
            if not err <= 1e-6:
                raise AssertionError(f"compliant {case}, batch {n}: GPU and scipy disagree on P_n by {err}")
            failed = int(n - ok.sum())
            t, _ = median_time(fn, *xs, repeats=3, min_time=0.0)
            rate = (n - failed) / t
            best = max(best, rate)
            row(f"compliant on the GPU, {case}, batch {n}", rate, "solves/s",
                note=f"{t * 1e3:.3g} ms per batch; compile {wall:.1f} s; failed members {failed}; |ΔP_n| ≤ "
                     f"{err:.1e} against scipy on {int(ok[:m].sum())}; steps {int(steps[ok].min())}–"
                     f"{int(steps[ok].max())}; {rate * t_scipy:.0f}× scipy on one core")
        row(f"compliant on the GPU, {case}, best batch", best, "solves/s", goal="≥ 1e5",
            ratio=best / COMPLIANT_GOAL, met=bool(best >= COMPLIANT_GOAL))


def _first_line(err):
    return f"{type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else ''}"


if __name__ == "__main__":
    main()
