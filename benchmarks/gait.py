"""Benchmark 4 — periodic gaits: stride-map evaluations and fixed-point solves, ``difimpact.stride`` /
``difimpact.periodic_gait`` under jit and vmap, against ``scipy.integrate.solve_ivp`` (DOP853, the same heel-strike
event, the same rtol/atol on the same nondimensional state ``(θ, θ̇ √(l/g))`` in the time ``t / √(l/g)``) +
``scipy.optimize.fsolve`` with NumPy right-hand sides and impacts written out by hand.

- Garcia et al.'s simplest walker (exact limit equations, γ = 0.009 ± 0.002): stride map and fixed point.
- The compass gait with round feet (``CompassGait``: l = 1 m, m = 5 kg, b = 0.5 m, m_H = 10 kg, R = 0.3 m,
  slope 3° ± 0.5°): fixed point (the heel strike is the library's ``impact`` with the trailing foot unilateral).

A batch spreads the slope over its range; every member starts from the same guess (so does scipy).

    python benchmarks/gait.py [--quick] [--out rows.json]

The process runs on one core (``os.sched_setaffinity`` before JAX starts), as ``compliant.py`` does: XLA splits
the batched loops of a vmapped solve over its intra-op threads (``outer_dimension_partitions`` in the compiled
HLO), and on a shared machine a thread then waits, spinning, for a partner that another process holds: the same
compiled batch of 1024 simplest-walker fixed points cost 1.09 ms of CPU per fixed point on two cores and 0.76 ms
pinned (load average 7 on 2 cores). The goals are judged on CPU time, and the baselines are single-threaded.
"""

import math
import os
import time

os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # before JAX sizes its thread pool: see above

import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

from _common import compile_time, machine, median_time, parse_args, write

TOL = 1e-10  # difimpact's default StanceTolerances
X0 = np.array([-0.2003109, 0.19983247, 0.015823])  # the simplest walker's long gait at γ = 0.009
COMPASS = dict(l=1.0, m=5.0, b=0.5, m_H=10.0, R=0.3, g=9.81)
X0_COMPASS = np.array([-0.386, 1.419, 0.968])  # its gait at 3°, continued in R from the point-foot gait


def _section_stride(rhs, x, scale, reset):
    """One stride of a compass-like walker with solve_ivp: single support from ``x = (q3, q̇3, q̇4)`` (``q4 = 2 q3``)
    in the time ``s = t / scale`` until heel strike ``|q4| − 2 q3 = 0``, then ``reset(q3, q4, u3, u4)``."""

    def strike(s, y):
        return abs(y[1]) - 2 * y[0]

    strike.terminal, strike.direction = True, -1
    sol = solve_ivp(rhs, (0.0, 50.0), [x[0], 2 * x[0], scale * x[1], scale * x[2]], method="DOP853", rtol=TOL,
                    atol=TOL, events=strike)
    q3, q4, r3, r4 = sol.y_events[0][0]
    return reset(q3, q4, r3 / scale, r4 / scale)


def scipy_stride(x, slope):
    """The simplest walker's stride map: q̈3 = sin(q3 + γ), s̈ = −sin(s − γ) − q̈3 cos q4 + q̇3² sin q4
    (s = q4 − q3, g = l = 1), Garcia's impact ``q̇3⁺ = q̇3⁻ cos 2a``, ``q̇4⁺ = q̇3⁺ (1 − cos 2a)`` and the leg swap."""

    def rhs(s, y):
        q3, q4, u3, u4 = y
        a3 = math.sin(q3 + slope)
        s_dd = -math.sin(q4 - q3 - slope) - a3 * math.cos(q4) + u3 * u3 * math.sin(q4)
        return [u3, u4, a3, s_dd + a3]

    def reset(a, q4, u3, u4):
        c = math.cos(2 * a)
        return np.array([-a, u3 * c, u3 * c * (1 - c)])

    return _section_stride(rhs, x, 1.0, reset)


def scipy_compass_stride(x, slope, l, m, b, m_H, R, g):
    """The round-footed compass gait's stride map. Masses at ``p1 = C + (d − b) e3`` (m), ``p2 = C + d e3`` (m_H),
    ``p3 = C + d e3 + b eφ`` (m), ``d = l − R``, ``e(θ) = (sin θ, cos θ)``, ``φ = π + q3 − q4``; in single support
    the arc centre ``C = (R q3, R)`` rolls, and Lagrange's equations of ``(q3, q4)`` are
    ``Σ m_i J_iᵀ J_i q̈ = Σ m_i J_iᵀ (g − J̇_i q̇)`` (``J_i = ∂p_i/∂(q3, q4)``, 2×2, solved by Cramer's rule). At
    heel strike the swing foot's contact point (``C_swing − (0, R)`` on its arc) sticks:
    ``q̇⁺ = q̇⁻ − M⁻¹Aᵀ (A M⁻¹ Aᵀ)⁻¹ A q̇⁻`` in the four coordinates ``(C, q3, q4)``, the trailing foot released
    (difimpact checks that it lifts off); then the legs swap."""
    d = l - R
    gx, gy = g * math.sin(slope), -g * math.cos(slope)
    scale = math.sqrt(l / g)

    def rhs(s, y):
        q3, q4, r3, r4 = y
        u3, u4 = r3 / scale, r4 / scale
        s3, c3, sp, cp = math.sin(q3), math.cos(q3), -math.sin(q3 - q4), -math.cos(q3 - q4)
        a1x, a1y = R + (d - b) * c3, -(d - b) * s3  # ∂p_i/∂q3
        a2x, a2y = R + d * c3, -d * s3
        a3x, a3y = a2x + b * cp, a2y - b * sp
        b3x, b3y = -b * cp, b * sp  # ∂p3/∂q4
        w3, wp = u3 * u3, (u3 - u4) ** 2
        f1x, f1y = gx + (d - b) * w3 * s3, gy + (d - b) * w3 * c3  # g − J̇_i q̇
        f2x, f2y = gx + d * w3 * s3, gy + d * w3 * c3
        f3x, f3y = f2x + b * wp * sp, f2y + b * wp * cp
        m11 = m * (a1x * a1x + a1y * a1y + a3x * a3x + a3y * a3y) + m_H * (a2x * a2x + a2y * a2y)
        m12, m22 = m * (a3x * b3x + a3y * b3y), m * b * b
        f1 = m * (a1x * f1x + a1y * f1y + a3x * f3x + a3y * f3y) + m_H * (a2x * f2x + a2y * f2y)
        f2 = m * (b3x * f3x + b3y * f3y)
        det = m11 * m22 - m12 * m12
        return [r3, r4, scale**2 * (m22 * f1 - m12 * f2) / det, scale**2 * (m11 * f2 - m12 * f1) / det]

    def reset(q3, q4, u3, u4):
        phi = math.pi + q3 - q4
        n3, n_p = np.array([math.cos(q3), -math.sin(q3)]), np.array([math.cos(phi), -math.sin(phi)])
        J = [(m, (d - b) * n3, 0.0 * n3), (m_H, d * n3, 0.0 * n3), (m, d * n3 + b * n_p, -b * n_p)]
        J = [(mi, np.column_stack([np.eye(2), a, c])) for mi, a, c in J]
        M = sum(mi * Ji.T @ Ji for mi, Ji in J)
        # the contact point's velocity: the arc centre's plus φ̇ (−R, 0)
        A = np.column_stack([np.eye(2), d * n3 + d * n_p + [-R, 0.0], -d * n_p + [R, 0.0]])
        v = np.array([R * u3, 0.0, u3, u4])
        MiAt = np.linalg.solve(M, A.T)
        v_plus = v - MiAt @ np.linalg.solve(A @ MiAt, A @ v)
        return np.array([q3 - q4, v_plus[2] - v_plus[3], -v_plus[3]])

    return _section_stride(rhs, x, scale, reset)


def _timed_scipy(fn, params, n):
    """Wall and CPU seconds per call of ``fn(p)`` over ``n`` parameters spread over ``params``."""
    t, c = time.perf_counter(), time.process_time()
    for p in params[np.linspace(0, len(params) - 1, n).astype(int)]:
        fn(p)
    return (time.perf_counter() - t) / n, (time.process_time() - c) / n


def main():
    args = parse_args(__doc__)
    import difimpact as di

    batch = 64 if args.quick else 1024
    rows = []

    def add(item, value, unit, **kw):
        rows.append(dict(table="gait", item=item, value=float(value), unit=unit, **kw))

    def measure(name, fn, one, many, scipy_fn, params, n_scipy, describe=lambda out: ""):
        """Compile, time single and batched calls of ``fn`` and the scipy loop; rows with the CPU ratio. Returns
        the batch's output; ``describe(output)`` adds to the batch row's note."""
        c1, wall, cpu = compile_time(fn, *one)
        add(f"{name}: first compile (single)", wall, "s", cpu_value=cpu, goal="≤ 30 s", ratio=wall / 30,
            met=cpu <= 30, note="jax.jit(f).lower(...).compile(), wall and process CPU seconds")
        cb, _, cpu_b = compile_time(jax.vmap(fn), *many)
        out = cb(*many)
        w1, p1 = median_time(c1, *one, repeats=3)
        wb, pb = median_time(cb, *many, repeats=3)
        add(f"difimpact {name}, single", 1 / w1, "1/s", cpu_value=1 / p1, note=f"{p1 * 1e3:.3g} ms of CPU each")
        add(f"difimpact {name}, batch {batch}", batch / wb, "1/s", cpu_value=batch / pb, batch=batch,
            note=f"{pb / batch * 1e3:.3g} ms of CPU each; batch compile {cpu_b:.0f} s of CPU{describe(out)}")
        w_s, p_s = _timed_scipy(scipy_fn, params, n_scipy)
        add(f"scipy solve_ivp DOP853{' + fsolve' if 'fixed point' in name else ''} {name}", 1 / w_s, "1/s",
            cpu_value=1 / p_s, note=f"{p_s * 1e3:.3g} ms of CPU each, {n_scipy} solves")
        wall_ratio, cpu_ratio = (batch / wb) / (1 / w_s), (batch / pb) / (1 / p_s)
        add(f"{name}: difimpact batch {batch} / scipy (CPU time)", wall_ratio, "×", cpu_value=cpu_ratio,
            goal="≥ 50×", ratio=wall_ratio / 50, met=cpu_ratio >= 50)
        return out

    def newton(gaits):
        ok = np.asarray(gaits.result == di.GaitResults.successful)
        return (f"; Newton iterations {int(gaits.num_steps.min())}–{int(gaits.num_steps.max())}; "
                f"{ok.sum()}/{batch} successful")

    # Garcia et al.'s simplest walker
    slopes = 0.009 + 0.002 * np.linspace(-1, 1, batch)
    n = 20 if args.quick else 100
    P = lambda s, x: di.stride(di.SimplestWalker(s), x, throw=False).x  # noqa: E731
    F = lambda s, x: di.periodic_gait(di.SimplestWalker(s), x, throw=False)  # noqa: E731
    one = (jnp.asarray(0.009), jnp.asarray(X0))
    many = (jnp.asarray(slopes), jnp.tile(jnp.asarray(X0), (batch, 1)))
    measure("stride map", P, one, many, lambda s: scipy_stride(X0, s), slopes, n)
    gaits = measure("fixed point", F, one, many, lambda s: fsolve(lambda x: scipy_stride(x, s) - x, X0, xtol=TOL),
                    slopes, n, newton)
    idx = np.linspace(0, batch - 1, 5).astype(int)
    x_np = np.stack([fsolve(lambda x: scipy_stride(x, slopes[i]) - x, X0, xtol=TOL) for i in idx])
    add("fixed point difference difimpact vs scipy (max abs)", np.max(np.abs(x_np - np.asarray(gaits.x)[idx])),
        "rad or 1/√(l/g)", note=f"{len(idx)} slopes across the batch")

    # The round-footed compass gait
    slopes = np.radians(3.0 + 0.5 * np.linspace(-1, 1, batch))
    F = lambda s, x: di.periodic_gait(di.CompassGait(slope=s, **COMPASS), x, throw=False)  # noqa: E731
    one = (jnp.asarray(slopes[batch // 2]), jnp.asarray(X0_COMPASS))
    many = (jnp.asarray(slopes), jnp.tile(jnp.asarray(X0_COMPASS), (batch, 1)))
    gaits = measure("compass gait (R = 0.3 m) fixed point", F, one, many,
                    lambda s: fsolve(lambda x: scipy_compass_stride(x, s, **COMPASS) - x, X0_COMPASS, xtol=TOL),
                    slopes, 5 if args.quick else 20, newton)
    x_np = np.stack([fsolve(lambda x: scipy_compass_stride(x, slopes[i], **COMPASS) - x, X0_COMPASS, xtol=TOL)
                     for i in idx])
    add("compass gait fixed point difference difimpact vs scipy (max abs)",
        np.max(np.abs(x_np - np.asarray(gaits.x)[idx])), "rad or rad/s", note=f"{len(idx)} slopes across the batch")
    write(args, [dict(table="machine", **machine())] + rows)


if __name__ == "__main__":
    main()
