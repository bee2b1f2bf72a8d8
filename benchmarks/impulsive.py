"""Benchmark 1 — impulsive throughput: the crutch walker's frictional impact map (seed 000, §3), jit + vmap,
against Pinocchio ``impulseDynamics`` in a Python loop and in a compiled C++ loop (``native/impulse.cpp``, one
thread; sticking end, μ = 1) and the same closed form in NumPy.

    python benchmarks/impulsive.py [--dtype float32] [--quick] [--out rows.json]
"""

import re
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pinocchio as pin

import difimpact as di
from difimpact._linalg import solve_spd
import _native
from _common import (README, REGIME_NAMES, NumpyCrutchWalker, compile_time, impacts, loop_time, machine, median_time,
                     memory_bandwidth, outputs, parse_args, seed000_states, write)

GOAL = 2e6  # impacts/s, float64, 2 CPU cores (issue 7)
GOAL_PER_CPU = 4e6  # impacts per CPU-second, float64 (issue 16)
GOAL_SWEEP = 2e6  # the README's grid sweep, states built inside, impacts per CPU-second (issue 16)


def readme_function(name, **scope):
    """The function ``name`` as the README defines it (its sweep example), evaluated with ``scope``."""
    with open(README, encoding="utf-8") as f:
        source = re.search(rf"^def {name}\(.*\n(?:    .*\n)+", f.read(), flags=re.M).group(0)
    namespace = dict(di=di, **scope)
    exec(source, namespace)
    return namespace[name]


def pinocchio_loop(model, data, frame, q, qdot):
    """``impulseDynamics`` with both tip directions blocked (the sticking end, seed 000 eq. 10), per state."""
    out = np.empty_like(qdot)
    for k in range(len(q)):
        J = pin.computeFrameJacobian(model, data, q[k], frame, pin.LOCAL_WORLD_ALIGNED)
        out[k] = pin.impulseDynamics(model, data, q[k], qdot[k], J[[2, 0]], 0.0, 0.0)
    return out


def numpy_loop(nw, q, qdot, mu):
    out = np.empty_like(qdot)
    for k in range(len(q)):
        out[k] = nw.frictional_impact(q[k], qdot[k], mu[k])[0]
    return out


def main():
    args = parse_args(__doc__, dtype=True)
    dtype = np.dtype(args.dtype)
    x64 = dtype == np.float64
    batches = [10**3, 10**4] if args.quick else [10**3, 10**4, 10**5, 10**6]
    repeats = 3 if args.quick else 5
    walker = di.CrutchWalker()
    q_all, qdot_all, mu_all = seed000_states(batches[-1])
    rows, tag = [], f"[{args.dtype}]"

    def row(item, value, unit, **kw):
        rows.append(dict(table="impulsive", item=f"{item} {tag}", value=float(value), unit=unit, **kw))

    # -- agreement first: difimpact vs the NumPy closed form (all regimes) and vs Pinocchio (sticking) ----
    n_check = min(10**4, batches[-1])
    cast = lambda *xs: tuple(jnp.asarray(x, dtype) for x in xs)  # noqa: E731
    check_args = cast(q_all[:n_check], qdot_all[:n_check], mu_all[:n_check])
    fn, _, _ = compile_time(impacts, walker, *check_args)
    got = jax.tree.map(np.asarray, fn(walker, *check_args))
    nw = NumpyCrutchWalker(walker)
    ref = nw.frictional_impact(q_all[:n_check], qdot_all[:n_check], mu_all[:n_check])
    err = max(float(np.max(np.abs(g - r) / (1.0 + np.abs(r)))) for g, r in zip(got[:5], ref))
    tol = 1e-9 if x64 else 2e-3
    counts = np.bincount(got[5], minlength=len(REGIME_NAMES))
    row("agreement with the NumPy closed form, max |Δ|/(1+|ref|) over q̇⁺, P_n, P_t, W_n, W_t", err, "",
        goal=f"≤ {tol:g}", met=bool(err <= tol),
        note=f"{n_check} states; regimes " + ", ".join(f"{n}: {c}" for n, c in zip(REGIME_NAMES, counts)))
    if not err <= tol:
        raise AssertionError(f"difimpact and the NumPy closed form disagree: {err}")

    n_pin = 200 if args.quick else 2000
    q_s, qdot_s, _ = seed000_states(n_pin, seed=1)
    mu_s = np.ones(n_pin)  # μ = 1 > μ_c everywhere in the range: the impact ends sticking
    model = pin.buildModelFromXML(di.to_urdf(walker))
    data, frame = model.createData(), model.getFrameId("Q")
    pin_out = pinocchio_loop(model, data, frame, q_s, qdot_s)
    fn_s, _, _ = compile_time(impacts, walker, *cast(q_s, qdot_s, mu_s))
    ours = fn_s(walker, *cast(q_s, qdot_s, mu_s))
    stuck = np.isin(np.asarray(ours[5]), [0, 3])
    err_pin = float(np.max(np.abs(np.asarray(ours[0]) - pin_out)))
    tol_pin = 1e-9 if x64 else 1e-3
    row("agreement with Pinocchio impulseDynamics (sticking), max |Δq̇⁺|", err_pin, "rad/s or m/s",
        goal=f"≤ {tol_pin:g}", met=bool(err_pin <= tol_pin and stuck.all()),
        note=f"{n_pin} states, μ = 1, all ending stuck: {bool(stuck.all())}")
    if not (err_pin <= tol_pin and stuck.all()):
        raise AssertionError(f"difimpact and Pinocchio disagree: {err_pin}")

    try:  # the same impacts by Pinocchio's impulseDynamics in a compiled C++ loop (benchmarks/native/)
        nat_out, t_nat, c_nat = _native.impulse_dynamics(model, "Q", q_s, qdot_s, repeats=repeats * 10)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as err:
        nat_out = None
        row("native Pinocchio (benchmarks/native/impulse.cpp) not built", float("nan"), "", note=str(err))
    if nat_out is not None:
        err_nat = float(np.max(np.abs(np.asarray(ours[0]) - nat_out)))
        row("agreement with native Pinocchio impulseDynamics (C++, sticking), max |Δq̇⁺|", err_nat, "rad/s or m/s",
            goal=f"≤ {tol_pin:g}", met=bool(err_nat <= tol_pin and stuck.all()),
            note=f"{n_pin} states, μ = 1; max |native − Python-loop Pinocchio| = "
                 f"{float(np.max(np.abs(nat_out - pin_out))):.1e}")
        if not err_nat <= tol_pin:
            raise AssertionError(f"difimpact and native Pinocchio disagree: {err_nat}")

    # -- baselines --------------------------------------------------------------------------------------
    t_pin, c_pin = (x / n_pin for x in loop_time(pinocchio_loop, model, data, frame, q_s, qdot_s))
    row("Pinocchio impulseDynamics + frame Jacobian, Python loop", 1 / t_pin, "impacts/s", cpu_value=1 / c_pin,
        note=f"{n_pin} states, {t_pin * 1e6:.1f} µs each (float64)")
    t_np, c_np = (x / n_pin for x in loop_time(numpy_loop, nw, q_s, qdot_s, mu_s))
    row("NumPy closed form, Python loop", 1 / t_np, "impacts/s", cpu_value=1 / c_np,
        note=f"{t_np * 1e6:.1f} µs each (float64)")
    if nat_out is not None:
        row("Pinocchio impulseDynamics + frame Jacobian, native C++ loop, one thread", 1 / t_nat, "impacts/s",
            cpu_value=1 / c_nat, note=f"{n_pin} states, {t_nat * 1e9:.0f} ns wall, {c_nat * 1e9:.0f} ns CPU each "
                                      f"(float64), median of "
                                      f"{repeats * 10} loops; g++ {' '.join(_native.FLAGS[:-1])}, header-only, "
                                      f"pin {pin.__version__}")
    n_vec = batches[-1] if args.quick else 10**5
    vec_args = (q_all[:n_vec], qdot_all[:n_vec], mu_all[:n_vec])

    t_vec, c_vec = (x / n_vec for x in median_time(nw.frictional_impact, *vec_args, repeats=repeats))
    row("NumPy closed form, vectorised over the batch", 1 / t_vec, "impacts/s", cpu_value=1 / c_vec,
        note=f"batch {n_vec} (float64)")

    # -- difimpact, jit + vmap ---------------------------------------------------------------------------
    best = best_cpu = 0.0
    for n in batches:
        xs = cast(q_all[:n], qdot_all[:n], mu_all[:n])
        fn, wall, cpu = compile_time(impacts, walker, *xs)
        t, tc = median_time(fn, walker, *xs, repeats=repeats)
        best, best_cpu = max(best, n / t), max(best_cpu, n / tc)
        row(f"difimpact jit+vmap, batch {n:.0e}", n / t, "impacts/s", cpu_value=n / tc,
            note=f"{t * 1e3:.2f} ms per batch; compile {wall:.1f} s wall / {cpu:.1f} s CPU; "
                 f"{n / t * t_pin:.0f}× Pinocchio loop, {n / t * t_np:.0f}× NumPy loop, "
                 f"{n / t * t_vec:.1f}× NumPy vectorised")
    if x64:
        row("difimpact best throughput", best, "impacts/s", cpu_value=best_cpu, goal="≥ 2e6", ratio=best / GOAL,
            met=bool(best >= GOAL))
        row("difimpact best throughput per CPU-second (issue 16)", best, "impacts/s", cpu_value=best_cpu,
            goal="≥ 4e6", ratio=best / GOAL_PER_CPU, met=bool(best >= GOAL_PER_CPU))

    # -- the README's grid sweep: `difimpact.sweep` of its `impact`, which builds the state by pre_impact_state --
    readme_impact = readme_function("impact", walker=walker)

    side = 10 if args.quick else 22  # 22³ ≈ 1e4 sets, the best batch above
    grid, _ = di.grid(q3=np.radians(np.linspace(3.0, 21.0, side)), q5dot=np.linspace(-0.2, 0.4, side),
                      mu=np.linspace(0.5, 1.0, side))
    grid = {k: jnp.asarray(v, dtype) for k, v in grid.items()}
    n = side**3
    t, tc = median_time(lambda g: di.sweep(readme_impact, g, chunk_size=n).normal_impulse, grid, repeats=repeats)
    row(f"README grid sweep (difimpact.sweep, pre_impact_state inside), {n} sets", n / t, "impacts/s",
        cpu_value=n / tc, **(dict(goal="≥ 2e6", ratio=n / t / GOAL_SWEEP, met=bool(n / t >= GOAL_SWEEP))
                            if x64 else {}),
        note=f"{t * 1e3:.2f} ms per sweep of {n} (one chunk), results copied to host NumPy; "
             f"{n / t / best:.0%} of the best bare map rate")
    row("difimpact best / Pinocchio loop", best * t_pin, "×", cpu_value=best_cpu * c_pin, goal="about 40× (issue 7)",
        ratio=best * t_pin / 40, met=bool(best * t_pin >= 40) if x64 else None)

    if nat_out is not None:
        row("impulsive vs native Pinocchio, per core (difimpact best / native C++ loop, impacts per CPU-second)",
            best * t_nat, "×", cpu_value=best_cpu * c_nat, goal="≥ 1×" if x64 else None,
            ratio=best * t_nat if x64 else None, met=bool(best * t_nat >= 1) if x64 else None,
            note=f"per CPU-second: difimpact {best_cpu:.3g} impacts/s (jit+vmap, best batch), native {1 / c_nat:.3g} "
                 "(one thread, float64)" + ("" if x64 else "; difimpact in float32 here"))

    # -- memory-bandwidth bound: inputs q, q̇, μ and outputs q̇⁺, P_n, P_t, W_n, W_t, regime ---------------
    bw = memory_bandwidth()
    per_impact = (6 + 6 + 1 + 6 + 4) * dtype.itemsize + 4
    row("memory-bandwidth bound (NumPy copy bandwidth / bytes per impact)", bw / per_impact, "impacts/s",
        note=f"{bw / 1e9:.1f} GB/s, {per_impact} bytes per impact; best measured is "
             f"{best / (bw / per_impact):.2%} of it: compute-bound")

    # -- profile: where the time goes, batch 1e5 (1e4 in --quick) ---------------------------------------
    n = 10**4 if args.quick else 10**5
    q, qdot, mu = cast(q_all[:n], qdot_all[:n], mu_all[:n])
    M = jax.jit(jax.vmap(walker.mass_matrix))(q)
    A = jax.jit(jax.vmap(lambda x: walker.contact_jacobian(x, "Q")))(q)
    pieces = {
        "full map (M, Jacobian, checks, solve, closed form)": (impacts, walker, q, qdot, mu),
        "full map with throw=False (without the approach_not_stopped check only)": (
            lambda w, q, qd, m: impacts(w, q, qd, m, throw=False), walker, q, qdot, mu),
        "M(q) alone (PlanarTree.mass_matrix, entry by entry from the closed-form Jacobian columns)": (
            lambda w, q: jax.vmap(w.mass_matrix)(q), walker, q),
        "contact Jacobian alone (closed form)": (lambda w, q: jax.vmap(lambda x: w.contact_jacobian(x, "Q"))(q),
                                                  walker, q),
        "point height alone (ground check)": (lambda w, q: jax.vmap(lambda x: w.point(x, "Q"))(q), walker, q),
        "unrolled LDLᵀ solve of M X = Aᵀ, 2 right-hand sides (_linalg.solve_spd, as in the map)": (
            lambda M, A: jax.vmap(lambda m, a: solve_spd(m, a.T, "mass_matrix"))(M, A), M, A),
        "batched jnp.linalg.solve(M, Aᵀ) of the same (LAPACK LU, what the map used before)": (
            lambda M, A: jnp.linalg.solve(M, jnp.swapaxes(A, -1, -2)), M, A),
        "batched Cholesky solve of the same (jax.scipy.linalg.cho_solve)": (
            lambda M, A: jax.vmap(lambda m, a: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(m), a.T))(M, A),
            M, A),
        "frictional_impact_map given M and A (solve + closed form)": (
            lambda M, A, qd, m: outputs(jax.vmap(lambda a, b, c, d: di.frictional_impact_map(a, b[0], b[1], c, d))(
                M, A, qd, m)), M, A, qdot, mu),
    }
    full = None
    for name, (f, *xs) in pieces.items():
        fn, _, _ = compile_time(f, *xs)
        t, tc = (x / n for x in median_time(fn, *xs, repeats=repeats))
        full = full or tc
        row(f"profile: {name}", t * 1e9, "ns/impact", cpu_value=tc * 1e9,
            note=f"{tc / full:.0%} of the full map's CPU time (batch {n:.0e})")
    write(args, [dict(table="machine", **machine())] + rows)


if __name__ == "__main__":
    main()
