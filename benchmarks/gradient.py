"""Benchmark 3 — gradient cost: ``jax.grad`` of the energy lost at the crutch tip's impact with respect to every
parameter of the :class:`difimpact.CrutchWalker` (``eqx.partition(walker, eqx.is_inexact_array)``: masses,
inertias, lengths, centres of mass, g), through the posture solve (``pre_impact_state``) and the impact,
against the forward pass and against central finite differences (2 × n_params forward evaluations).

Impulsive: ``−ΔT = −(W_n + W_t)`` of ``frictional_impact`` summed over a batch of seed-000 states (and for
one state). Compliant: ``−(W_n + W_t)`` of ``compliant_impact`` for the Table-3 nominal case.

    python benchmarks/gradient.py [--part impulsive|compliant] [--quick] [--out rows.json]
"""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

import difimpact as di
from difimpact.papers.font_llagunes_2012.crutch_tip import tip_contact
from _common import compile_time, loop_time, machine, median_time, parse_args, seed000_states, write


def impulsive_loss(params, static, q3, q5dot, mu):
    walker = eqx.combine(params, static)

    def one(a, b, m):
        q, qdot = walker.pre_impact_state(a, b)
        return -di.frictional_impact(walker, q, qdot, "Q", friction=di.Coulomb(m)).energy_change

    return jnp.sum(jax.vmap(one)(q3, q5dot, mu))


def compliant_loss(params, static, q3, q5dot, mu):
    walker = eqx.combine(params, static)
    q, qdot = walker.pre_impact_state(q3, q5dot)
    tip = tip_contact(mu=mu)
    res = di.compliant_impact(walker, q, qdot, "Q", normal=tip.normal_law, friction=tip.friction_law)
    return -(res.normal_work[0] + res.tangential_work[0])


def measure(rows, label, loss, params, static, *state, repeats, step=1e-6, tol=1e-5):
    """Compile and time the forward pass and the gradient, run central differences (relative ``step``) and
    check they agree to ``tol`` relative to the largest component."""
    flat, unravel = ravel_pytree(params)
    fwd, c_fwd, _ = compile_time(lambda p: loss(p, static, *state), params)
    grad, c_grad, _ = compile_time(jax.grad(lambda p: loss(p, static, *state)), params)
    t_fwd, tc_fwd = median_time(fwd, params, repeats=repeats)
    t_grad, tc_grad = median_time(grad, params, repeats=repeats)
    h = step * np.maximum(1.0, np.abs(np.asarray(flat)))

    steps = [jnp.zeros_like(flat).at[i].set(s * h[i]) for i in range(flat.size) for s in (1.0, -1.0)]
    perturbed = [unravel(flat + d) for d in steps]  # built before timing: only the evaluations count

    def central_differences():
        values = np.array([float(fwd(p)) for p in perturbed])
        return (values[0::2] - values[1::2]) / (2 * h)

    fd = central_differences()
    t_fd, tc_fd = loop_time(central_differences)
    g = np.asarray(ravel_pytree(grad(params))[0])
    err = float(np.max(np.abs(g - fd)) / np.max(np.abs(fd)))
    if not err <= tol:
        raise AssertionError(f"{label}: jax.grad and central differences disagree ({err})")
    n = flat.size
    rows.append(dict(table="gradient", item=f"{label}: gradient / forward", value=t_grad / t_fwd, unit="×",
                     cpu_value=tc_grad / tc_fwd, goal="≤ 4×", ratio=t_grad / t_fwd / 4, met=bool(t_grad / t_fwd <= 4),
                     note=f"forward {t_fwd * 1e3:.3g} ms, gradient {t_grad * 1e3:.3g} ms; compile {c_fwd:.0f} s / "
                          f"{c_grad:.0f} s wall"))
    rows.append(dict(table="gradient", item=f"{label}: finite differences / gradient", value=t_fd / t_grad, unit="×",
                     cpu_value=tc_fd / tc_grad, goal="≥ 10×", ratio=t_fd / t_grad / 10,
                     met=bool(t_fd / t_grad >= 10),
                     note=f"{2 * n} forward evaluations for {n} parameters, {t_fd * 1e3:.3g} ms; "
                          f"max |grad − FD| / max |FD| = {err:.1e}"))


def main():
    args = parse_args(__doc__, part=("impulsive", "compliant"))
    repeats = 3 if args.quick else 5
    walker = di.CrutchWalker()
    params, static = eqx.partition(walker, eqx.is_inexact_array)
    rows = []
    if args.part in (None, "impulsive"):
        n = 100 if args.quick else 1000
        q, qdot, mu = seed000_states(n)
        q3, q5dot = jnp.asarray(q[:, 2]), jnp.asarray(qdot[:, 4])
        for size in (1, n):
            measure(rows, f"impulsive, batch {size}", impulsive_loss, params, static, q3[:size], q5dot[:size],
                    jnp.asarray(mu[:size]), repeats=repeats)
    if args.part == "compliant" or (args.part is None and not args.quick):
        measure(rows, "compliant, Table-3 nominal case", compliant_loss, params, static,
                jnp.asarray(math.radians(12.0)), jnp.asarray(-0.2), jnp.asarray(0.75), repeats=3,
                # the adaptive solve (rtol 1e-8) makes a difference quotient noisy at about rtol / step
                step=1e-4, tol=1e-3)
    write(args, [dict(table="machine", **machine())] + rows)


if __name__ == "__main__":
    main()
