"""Benchmark 4 — periodic gaits: stride-map evaluations and fixed-point solves of Garcia et al.'s simplest
walker (exact limit equations, γ around 0.009), ``difimpact.stride`` / ``difimpact.periodic_gait`` under jit and
vmap, against ``scipy.integrate.solve_ivp`` (DOP853, the same heel-strike event, the same rtol/atol on the same
nondimensional state) + ``scipy.optimize.fsolve`` with a NumPy right-hand side written out by hand.

    python benchmarks/gait.py [--quick] [--out rows.json]
"""

import math
import time

import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

from _common import compile_time, machine, median_time, parse_args, write

TOL = 1e-10  # difimpact's default StanceTolerances
X0 = np.array([-0.2003109, 0.19983247, 0.015823])  # the long gait at γ = 0.009


def scipy_stride(x, slope):
    """The simplest walker's stride map with solve_ivp: q̈3 = sin(q3 + γ), s̈ = −sin(s − γ) − q̈3 cos q4 +
    q̇3² sin q4 (s = q4 − q3), heel strike at |q4| − 2 q3 = 0, Garcia's impact and the leg swap."""

    def rhs(t, y):
        q3, q4, u3, u4 = y
        a3 = math.sin(q3 + slope)
        s_dd = -math.sin(q4 - q3 - slope) - a3 * math.cos(q4) + u3 * u3 * math.sin(q4)
        return [u3, u4, a3, s_dd + a3]

    def strike(t, y):
        return abs(y[1]) - 2 * y[0]

    strike.terminal, strike.direction = True, -1
    sol = solve_ivp(rhs, (0.0, 50.0), [x[0], 2 * x[0], x[1], x[2]], method="DOP853", rtol=TOL, atol=TOL,
                    events=strike)
    a, u3 = sol.y_events[0][0][0], sol.y_events[0][0][2]
    c = math.cos(2 * a)
    return np.array([-a, u3 * c, u3 * c * (1 - c)])


def main():
    args = parse_args(__doc__)
    import difimpact as di

    batch = 64 if args.quick else 1024
    slopes = 0.009 + 0.002 * np.linspace(-1, 1, batch)
    rows = []

    def add(item, value, unit, **kw):
        rows.append(dict(table="gait", item=item, value=float(value), unit=unit, **kw))

    P = lambda s, x: di.stride(di.SimplestWalker(s), x).x  # noqa: E731
    F = lambda s, x: di.periodic_gait(di.SimplestWalker(s), x).x  # noqa: E731
    one = (jnp.asarray(0.009), jnp.asarray(X0))
    many = (jnp.asarray(slopes), jnp.tile(jnp.asarray(X0), (batch, 1)))
    for name, fn in (("stride map", P), ("fixed point", F)):
        c1, wall, cpu = compile_time(fn, *one)
        add(f"{name}: first compile (single)", wall, "s", cpu_value=cpu, goal="≤ 30 s", ratio=wall / 30, met=wall <= 30)
        cb, _, _ = compile_time(jax.vmap(fn), *many)
        w1, p1 = median_time(c1, *one, repeats=3)
        wb, pb = median_time(cb, *many, repeats=3)
        add(f"difimpact {name}, single", 1 / w1, "1/s", cpu_value=1 / p1)
        add(f"difimpact {name}, batch {batch}", batch / wb, "1/s", cpu_value=batch / pb, batch=batch)
        t, c = time.perf_counter(), time.process_time()
        n = 20 if args.quick else 100
        for s in slopes[:n]:
            if name == "stride map":
                scipy_stride(X0, s)
            else:
                fsolve(lambda x: scipy_stride(x, s) - x, X0, xtol=TOL)
        w_s, p_s = (time.perf_counter() - t) / n, (time.process_time() - c) / n
        add(f"scipy solve_ivp DOP853{' + fsolve' if name == 'fixed point' else ''} {name}", 1 / w_s, "1/s",
            cpu_value=1 / p_s)
        ratio = (batch / pb) / (1 / p_s)
        add(f"{name}: difimpact batch {batch} / scipy (CPU time)", ratio, "x", goal="≥ 50×", ratio=ratio / 50,
            met=ratio >= 50)
    x_np = fsolve(lambda x: scipy_stride(x, 0.009) - x, X0, xtol=TOL)
    x_di = np.asarray(F(*one))
    add("fixed point difference difimpact vs scipy (max abs)", np.max(np.abs(x_np - x_di)), "rad or 1/√(l/g)")
    write(args, [dict(table="machine", **machine())] + rows)


if __name__ == "__main__":
    main()
