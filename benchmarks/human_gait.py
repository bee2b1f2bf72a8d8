"""Benchmark 10 — the seven-link human's predicted gait (``difimpact._human_gait.human_gait``: the JAX interior
point under jit and vmap) against IPOPT on the same transcription (``_human_ipopt.py``: CasADi's IPOPT with MUMPS
and the exact Hessian of the Lagrangian; its NLP built once, only its solves timed), single and as a speed sweep
1.0…1.6 m/s under ``vmap`` (a sweep over speeds is what gait studies run).

    python benchmarks/human_gait.py [--quick] [--batch N] [--out rows.json]

Goal (issue 37, item 7): ≥ 10× IPOPT per solve at batch 64. Every batch is checked before it is timed: the
members IPOPT also solves must agree with it (cost to 1e-6).
"""

import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one LAPACK thread, as IPOPT's MUMPS has one (read at load)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from _common import compile_time, machine, parse_args, write

HERE = os.path.dirname(os.path.abspath(__file__))
SEGMENTS = (3, 2, 4, 3)  # the experiment's quick mesh
SPEED, STEP = 1.3, 0.7  # m/s, the guess's step length [m]


def problem_at(speed):
    import difimpact as di
    from difimpact._human_gait import gait as hg

    return hg.make_problem(di.SevenLinkHuman(), speed, segments=SEGMENTS, method="hermite-simpson", friction=0.8,
                           torque_max=300.0, duration_bounds=hg.DURATIONS)


def solver(options):
    """``(speed, z0) → HumanGait``: the library's solve on the problem at `speed` (a traced value)."""
    from difimpact._human_gait import gait as hg

    base = problem_at(SPEED)

    def solve(speed, z0):
        return hg._solve(eqx.tree_at(lambda p: p.speed, base, speed), z0, options)

    return solve


def ipopt_solves(speeds, guesses):
    """IPOPT from each guess: objectives (as ``value``; NaN where it failed), wall and CPU seconds of each solve."""
    from _human_ipopt import HumanIpopt

    costs, wall, cpu = [], [], []
    for v, z0 in zip(speeds, guesses):
        ip = HumanIpopt(problem_at(float(v)))
        w0, c0 = time.perf_counter(), time.process_time()
        z, stats = ip.solve(z0)
        wall.append(time.perf_counter() - w0), cpu.append(time.process_time() - c0)
        costs.append(float(ip.problem.objective(jnp.asarray(z))) if stats["success"] else np.nan)
    return np.array(costs), np.array(wall), np.array(cpu)


def ipopt_runs(speeds, guesses):
    """:func:`ipopt_solves` with the median wall and CPU seconds per solve."""
    costs, wall, cpu = ipopt_solves(speeds, guesses)
    return costs, float(np.median(wall)), float(np.median(cpu))


def main():
    args = parse_args(__doc__, extra=[(("--batch",), dict(type=int, default=64, help="the speed sweep's size"))])
    import difimpact as di
    from difimpact._human_gait import gait as hg

    sys.path.insert(0, HERE)
    rows = []

    def add(item, value, unit, **kw):
        if kw.get("ratio") is not None and kw.get("cpu_value"):
            kw["ratio"] = kw["ratio"] * float(value) / kw["cpu_value"]
        rows.append(dict(table="human_gait", item=item, value=float(value), unit=unit, **kw))
        write(args, [dict(table="machine", **machine())] + rows, echo=rows[-1:])

    options = di.NLPOptions(max_steps=500, bound_relax_factor=1e-8)  # the experiments' (IPOPT's default relaxation)
    solve = solver(options)
    z1 = jnp.asarray(hg.initial_guess(problem_at(SPEED), STEP))
    one = (jnp.asarray(SPEED), z1)
    c1, wall, cpu = compile_time(solve, *one)
    add("quick mesh (3/2/4/3), 1.3 m/s: first compile", wall, "s", cpu_value=cpu)
    w0, c0 = time.perf_counter(), time.process_time()
    g = jax.block_until_ready(c1(*one))  # one timed solve: each takes minutes on CPU
    w1, p1 = time.perf_counter() - w0, time.process_time() - c0
    ok = int(g.result._value) == 0
    ref, w_ip, p_ip = ipopt_runs([SPEED], [np.asarray(z1)])
    add("quick mesh, 1.3 m/s: difimpact per solve (single)", w1 * 1e3, "ms", cpu_value=p1 * 1e3,
        note=f"{'converged' if ok else 'FAILED: ' + str(g.result)}; cost {float(g.cost):.6f} N² m s in "
             f"{int(g.iterations)} iterations; objective vs IPOPT's: rel. diff "
             f"{abs(float(g.solution.value) / ref[0] - 1):.1e}")
    add("quick mesh, 1.3 m/s: IPOPT per solve (single)", w_ip * 1e3, "ms", cpu_value=p_ip * 1e3,
        note="IPOPT's solve, JAX's derivative evaluations included, the NLP's build not")
    add("quick mesh, 1.3 m/s: IPOPT / difimpact time per solve (single)", w_ip / w1, "×", cpu_value=p_ip / p1)
    n = 8 if args.quick else args.batch
    speeds = np.linspace(1.0, 1.6, n)
    guesses = np.stack([hg.initial_guess(problem_at(float(v)), STEP) for v in speeds])
    batch = jax.vmap(solve)
    cb, _, cpu_b = compile_time(batch, jnp.asarray(speeds), jnp.asarray(guesses))
    w0, c0 = time.perf_counter(), time.process_time()
    out = jax.block_until_ready(cb(jnp.asarray(speeds), jnp.asarray(guesses)))
    wb, pb = time.perf_counter() - w0, time.process_time() - c0
    failed = di.failures(out.result)
    idx = np.linspace(0, n - 1, min(n, 8)).astype(int)
    ref_b, w_ipb, p_ipb = ipopt_runs(speeds[idx], guesses[idx])
    both = np.isfinite(ref_b) & np.isin(idx, [i for i, _ in failed], invert=True)
    agree = float(np.max(np.abs(np.asarray(out.solution.value)[idx][both] / ref_b[both] - 1))) if both.any() else np.nan
    add(f"speeds 1.0…1.6 m/s, batch {n} (vmap): difimpact per solve", wb / n * 1e3, "ms", cpu_value=pb / n * 1e3,
        batch=n, note=f"{n - len(failed)}/{n} solved; iterations {int(np.min(out.iterations))}–"
                      f"{int(np.max(out.iterations))}; batch compile {cpu_b:.0f} s of CPU; cost vs IPOPT on "
                      f"{int(both.sum())} members: max rel. diff {agree:.1e}")
    add(f"speeds, batch {n}: solved", 100 * (1 - len(failed) / n), "%", goal="100 %", ratio=1 - len(failed) / n,
        met=not failed, note="; ".join(sorted({msg.split(':')[0] for _, msg in failed}))[:200])
    add(f"speeds, batch {n}: IPOPT / difimpact time per solve", w_ipb / (wb / n), "×", cpu_value=p_ipb / (pb / n),
        goal="≥ 10×", ratio=p_ipb / (pb / n) / 10, met=p_ipb / (pb / n) >= 10 and not failed,
        note=f"IPOPT {p_ipb * 1e3:.4g} ms of CPU per solve (median over {len(idx)} speeds)")
    return rows


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"# {time.perf_counter() - t0:.0f} s", file=sys.stderr)
