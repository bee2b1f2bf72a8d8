"""Benchmark 8 — optimal powered gaits: Kelly's five-link biped problem (Kelly 2017, §7; OptimTraj
``demo/fiveLinkBiped``) solved by ``difimpact.kelly_gait`` (the JAX interior-point method under jit and vmap) and by
IPOPT on the same transcription (CasADi's bundled IPOPT with MUMPS and exact Hessians, ``_kelly_ipopt.py``; its
NLP is built once and only IPOPT's solves are timed), single and as a batch of variants (step length × step time)
under ``vmap``.

    python benchmarks/powered.py [--quick] [--gpu] [--out rows.json]

Goals (the issue's): Kelly's mesh (Hermite–Simpson, 6 segments) ≤ 50 ms of CPU per solve after compiling
(fmincon's published 0.54 s: ≥ 10×) and at least IPOPT's speed single; ≥ 10× IPOPT per solve at batch 1024; a
converged mesh ≤ 1 s; the first compile ≤ 60 s. With ``--gpu`` the batch runs on the default device (a GPU) at
1e4 and more variants, beside the same program on the host's CPU cores.

Every batch is checked before it is timed: the members that IPOPT also solves must agree with it (cost to 1e-6).
"""

import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one LAPACK thread, as IPOPT's MUMPS has one (read at load)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from _common import compile_time, machine, median_time, parse_args, write

HERE = os.path.dirname(os.path.abspath(__file__))
FMINCON_S = 0.54  # Kelly 2017: his mesh solved by fmincon in 0.54 s (MATLAB)
KELLY_IPOPT = 469.5472445039  # IPOPT (tol 1e-10) on Kelly's mesh, _kelly_ipopt.py (benchmarks/kelly_reference.py)
MAX_STEPS = 150  # a batch runs as long as its slowest member: the iteration limit of the batches
START = time.perf_counter()


def grid(n):
    """``n`` variants on a square grid of step length 0.4–0.6 m × step time 0.6–0.8 s."""
    k = int(round(np.sqrt(n)))
    L, T = np.meshgrid(np.linspace(0.4, 0.6, k), np.linspace(0.6, 0.8, -(-n // k)))
    return L.reshape(-1)[:n], T.reshape(-1)[:n]


def ipopt_times(problem, L, T, n):
    """IPOPT's CPU seconds per solve (``t_proc_total``) and its costs over `n` members of the grid, each from
    Kelly's guess."""
    costs, cpu, wall = [], [], []
    for i in np.linspace(0, len(L) - 1, n).astype(int):
        out = problem.solve({"step_length": float(L[i]), "step_time": float(T[i])})
        costs.append(out["cost"] if out["success"] else np.nan)
        cpu.append(out["timings"].get("t_proc_total", out["ipopt_time_s"]))
        wall.append(out["ipopt_time_s"])
    return np.array(costs), float(np.mean(cpu)), float(np.mean(wall))


def one_by_one(add, n, args_b, p_ipopt):
    """The same batch through ``jax.lax.map`` (one member after another, each ending at its own convergence):
    on a CPU vectorising gains little here, and a ``vmap`` batch runs as long as its slowest member."""
    import difimpact as di

    mapped = jax.jit(lambda L, T: jax.lax.map(lambda a: di.kelly_gait(step_length=a[0], step_time=a[1],
                                                                      throw=False), (L, T)))
    out = jax.block_until_ready(mapped(*args_b))
    w0, c0 = time.perf_counter(), time.process_time()
    out = jax.block_until_ready(mapped(*args_b))
    wm, pm = time.perf_counter() - w0, time.process_time() - c0
    failed = di.failures(out.result)
    add(f"batch {n} by lax.map: difimpact per solve", wm / n * 1e3, "ms", cpu_value=pm / n * 1e3, batch=n,
        note=f"{n - len(failed)}/{n} solved; iterations median {int(np.median(out.iterations))}, "
             f"max {int(np.max(out.iterations))}")
    add(f"batch {n} by lax.map: IPOPT / difimpact time per solve", p_ipopt / (pm / n), "×",
        cpu_value=p_ipopt / (pm / n), goal="≥ 10×", ratio=p_ipopt / (pm / n) / 10, met=p_ipopt / (pm / n) >= 10)


def main():
    args = parse_args(__doc__, extra=[(("--gpu",), dict(action="store_true", help="the batch on the GPU")),
                                      (("--budget",), dict(type=float, default=1e9, help="seconds after which "
                                                                                          "larger batches are skipped")),
                                      (("--batch",), dict(type=int, default=None, help="the vmap batch (default "
                                                                                       "1024; 64 with --quick)")),
                                      (("--map-batch",), dict(type=int, default=1024, help="the lax.map batch on a "
                                                                                          "CPU (0: none)"))])
    import difimpact as di

    sys.path.insert(0, HERE)
    try:
        from _kelly_ipopt import kelly_problem
    except ImportError:  # no casadi (a GPU machine): the batch rows only
        kelly_problem = None

    rows = []

    def add(item, value, unit, **kw):
        if kw.get("ratio") is not None and kw.get("cpu_value"):  # run.py judges value / goal, scaled to the CPU time
            kw["ratio"] = kw["ratio"] * float(value) / kw["cpu_value"]
        rows.append(dict(table="powered-gpu" if args.gpu else "powered", item=item, value=float(value), unit=unit, **kw))
        write(args, [dict(table="machine", **machine())] + rows, echo=rows[-1:])

    solve = lambda L, T: di.kelly_gait(step_length=L, step_time=T, throw=False)  # noqa: E731
    one = (jnp.asarray(0.5), jnp.asarray(0.7))
    ipopt = None if kelly_problem is None or args.gpu else kelly_problem("hermite-simpson", 6)
    if not args.gpu:
        c1, wall, cpu = compile_time(solve, *one)
        add("Kelly's mesh: first compile", wall, "s", cpu_value=cpu, goal="≤ 60 s", ratio=cpu / 60, met=cpu <= 60,
            note="jax.jit(kelly_gait).lower(...).compile()")
        g = c1(*one)
        ref = ipopt.solve()
        w1, p1 = median_time(c1, *one, repeats=5)
        add("Kelly's mesh: difimpact per solve (single)", w1 * 1e3, "ms", cpu_value=p1 * 1e3, goal="≤ 50 ms",
            ratio=p1 * 1e3 / 50, met=p1 <= 0.05,
            note=f"J = {float(g.cost):.10f} ({int(g.iterations)} iterations); IPOPT J = {ref['cost']:.10f} "
                 f"({ref['iterations']} iterations)")
        _, p_ipopt, w_ipopt = ipopt_times(ipopt, np.array([0.5]), np.array([0.7]), 1)
        add("Kelly's mesh: IPOPT per solve (single)", w_ipopt * 1e3, "ms", cpu_value=p_ipopt * 1e3,
            note="IPOPT's own t_wall_total / t_proc_total (function evaluations included, graph building not)")
        add("Kelly's mesh: IPOPT / difimpact time per solve (single)", w_ipopt / w1, "×", cpu_value=p_ipopt / p1,
            goal="≥ 1×", ratio=(p_ipopt / p1), met=p_ipopt >= p1)
        add("Kelly's mesh: fmincon's published 0.54 s / difimpact", FMINCON_S / w1, "×", cpu_value=FMINCON_S / p1,
            goal="≥ 10×", ratio=FMINCON_S / p1 / 10, met=FMINCON_S / p1 >= 10,
            note="fmincon's time is Kelly's (MATLAB, his machine): an order of magnitude, not a same-machine ratio")
        for seg in ((12,) if args.quick else (24, 48)):
            fine = lambda L, T, s=seg: di.kelly_gait(step_length=L, step_time=T, segments=s, throw=False)  # noqa
            cf, _, _ = compile_time(fine, *one)
            g = cf(*one)
            wf, pf = median_time(cf, *one, repeats=2)
            ref = kelly_problem("hermite-simpson", seg).solve()
            add(f"Hermite–Simpson {seg} segments: difimpact per solve", wf, "s", cpu_value=pf, goal="≤ 1 s",
                ratio=pf, met=pf <= 1.0, note=f"J = {float(g.cost):.10f} ({int(g.iterations)} iterations), IPOPT "
                                              f"{ref['cost']:.10f} in {ref['ipopt_time_s']:.3g} s")
    batches = ([64] if args.quick else [1024]) if not args.gpu else ([1024] if args.quick else [1024, 10**4, 10**5])
    batches = [args.batch] if args.batch else batches
    device = jax.devices()[0]
    batch_solve = jax.vmap(lambda L, T: di.kelly_gait(step_length=L, step_time=T, throw=False,
                                                      options=di.NLPOptions(max_steps=MAX_STEPS)))
    for n in batches:
        if time.perf_counter() - START > args.budget:
            break
        L, T = grid(n)
        L[0], T[0] = 0.5, 0.7  # Kelly's own problem, checked against IPOPT's optimum below
        cb, _, cpu_b = compile_time(batch_solve, jnp.asarray(L), jnp.asarray(T))
        args_b = (jnp.asarray(L), jnp.asarray(T))
        w0, c0 = time.perf_counter(), time.process_time()
        out = jax.block_until_ready(cb(*args_b))
        wb, pb = time.perf_counter() - w0, time.process_time() - c0  # one call: a batch is long enough to time
        failed = di.failures(out.result)
        cost = np.asarray(out.cost)
        m = 8 if (args.quick or args.gpu) else 32
        idx = np.linspace(0, n - 1, m).astype(int)
        if ipopt is not None:
            ref_cost, p_ipopt, w_ipopt = ipopt_times(ipopt, L, T, m)
        else:  # no casadi here: member 0 is Kelly's problem, whose IPOPT optimum is known
            idx, ref_cost, p_ipopt, w_ipopt = np.array([0]), np.array([KELLY_IPOPT]), np.nan, np.nan
        both = np.isfinite(ref_cost) & np.isin(idx, [i for i, _ in failed], invert=True)
        agree = float(np.max(np.abs(cost[idx][both] / ref_cost[both] - 1))) if both.any() else np.nan
        where = f"{device.platform} ({getattr(device, 'device_kind', '')})"
        against = "IPOPT" if ipopt is not None else "IPOPT's optimum of Kelly's problem (member 0)"
        add(f"batch {n} on {where}: difimpact per solve", wb / n * 1e3, "ms", cpu_value=pb / n * 1e3, batch=n,
            note=f"{n - len(failed)}/{n} solved ({100 * (1 - len(failed) / n):.2f} %); iterations "
                 f"{int(np.min(out.iterations))}–{int(np.max(out.iterations))}; batch compile {cpu_b:.0f} s of CPU; "
                 f"cost vs {against} on "
                 f"{int(both.sum())} members: max rel. diff {agree:.1e}")
        add(f"batch {n}: solved", 100 * (1 - len(failed) / n), "%", goal="≥ 99 %", ratio=(1 - len(failed) / n) / 0.99,
            met=len(failed) <= 0.01 * n, note="; ".join(sorted({msg.split(':')[0] for _, msg in failed}))[:200])
        if device.platform == "cpu":
            add(f"batch {n}: IPOPT / difimpact time per solve", w_ipopt / (wb / n), "×",
                cpu_value=p_ipopt / (pb / n), goal="≥ 10×", ratio=p_ipopt / (pb / n) / 10,
                met=p_ipopt / (pb / n) >= 10, note=f"IPOPT {p_ipopt * 1e3:.3g} ms of CPU per solve over {m} members")
            if args.map_batch:
                Lm, Tm = grid(args.map_batch)
                one_by_one(add, args.map_batch, (jnp.asarray(Lm), jnp.asarray(Tm)), p_ipopt)
        elif ipopt is not None:
            add(f"batch {n}: IPOPT (host CPU) / difimpact on the GPU, time per solve", w_ipopt / (wb / n), "×",
                note=f"IPOPT {w_ipopt * 1e3:.3g} ms per solve (one core) over {m} members")
    return rows


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"# {time.perf_counter() - t0:.0f} s", file=sys.stderr)
