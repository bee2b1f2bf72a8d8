"""Benchmark 2 — compliant throughput: the crutch tip's Hunt–Crossley + exact Coulomb contact phase (seed 000,
§4–5) until the end of compression, ``difimpact.compliant_impact`` under jit + vmap, against
``scipy.integrate.solve_ivp`` (LSODA) with the same events, the same state and units, the same tolerances and
a NumPy right-hand side (``NumpyCrutchWalker``: M and c written out by hand, not converted from JAX).

Cases: seed 000's Table-3 nominal case (q3 = 12°, q̇5 = −0.2 rad/s, μ = 0.75: slides, then sticks) and a
sliding case (μ = 0.5); a batch jitters q3 by ±1° and q̇5 by ±0.05 rad/s around them (member 0 exact).

    python benchmarks/compliant.py [--quick] [--out rows.json]

Run as a script, the process runs on one core (``os.sched_setaffinity`` before JAX starts), so that its numbers
are per core like the single-threaded scipy baseline's; the goals are judged on CPU time. (The pinning first
worked around a deadlock of batched LAPACK calls in XLA's CPU thread pool, ``README.md``, "Known problem"; the
compliant phase no longer makes such calls.) ``gpu.py`` imports this module without the pinning.
"""

import math
import os
import time

if __name__ == "__main__":  # before JAX sizes its thread pool: see above
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

import jax
import jax.numpy as jnp
import numpy as np
from scipy.integrate import solve_ivp

import difimpact as di
from difimpact.papers.font_llagunes_2012.crutch_tip import tip_contact
from difimpact._compliant import dynamics
from _common import NumpyCrutchWalker, compile_time, machine, median_time, parse_args, write

RTOL, ATOL = 1e-8, 1e-10  # difimpact's defaults, on the same scaled state (mm, ms, m/s, N s, J)
LOOP = 50  # right-hand side evaluations per timed call in the profile
TAU_STICK = dynamics.TAU_STICK * 1e-3  # s, the stick stabilisation of the library (ms there)
GOAL_MS = 0.3  # CPU ms per case at the largest batch, both cases
CASES = {"Table-3 nominal (slide then stick, μ = 0.75)": 0.75, "sliding (μ = 0.5)": 0.5}


def jittered_states(walker, n):
    """``n`` pre-impact states ``q, q̇`` (NumPy) around the Table-3 case: q3 = 12° ± 1°, q̇5 = −0.2 ± 0.05 rad/s,
    member 0 exact."""
    rng = np.random.default_rng(0)
    q3 = np.radians(12.0 + rng.uniform(-1.0, 1.0, n))
    q5dot = -0.2 + rng.uniform(-0.05, 0.05, n)
    q3[0], q5dot[0] = math.radians(12.0), -0.2
    return tuple(np.asarray(x) for x in jax.jit(jax.vmap(walker.pre_impact_state))(q3, q5dot))


def difimpact_batch(walker, q, qdot, mu):
    """``P_n, P_t``, accepted steps, whether it ends stuck and whether it succeeded, per member (``throw=False``:
    a failed member is counted, not raised)."""
    tip = tip_contact()
    res = jax.vmap(lambda a, b, m: di.compliant_impact(walker, a, b, "Q", normal=tip.normal_law,
                                                       friction=di.Coulomb(m), throw=False))(q, qdot, mu)
    return (res.normal_impulse[:, 0], res.tangential_impulse[:, 0], res.n_steps, res.final_stick[:, 0],
            res.result == di.CompliantResults.successful)


class ScipyCompliant:
    """The same contact phase integrated by ``solve_ivp``: phases of fixed friction regime chained at events
    (slide → stick when ``σ v_t`` reaches 0 and the stick multiplier is in the cone, otherwise reversal;
    stick → slide when ``μ F_n − |λ|`` reaches 0; end when ``v_n = 0``)."""

    def __init__(self, walker, method="LSODA"):
        self.nw = NumpyCrutchWalker(walker)
        tip = tip_contact()
        self.k, self.chi = float(tip.normal_law.stiffness), float(tip.normal_law.damping)
        self.method = method
        self.nfev = 0

    def evaluate(self, q0, y, mu, stick, sigma):
        """``q̈``, ``F_n``, ``F_t`` (= λ while sticking), ``v_n``, ``v_t`` at state ``y``."""
        q = q0 + y[:6] * 1e-3
        qdot = y[6:12]
        pos, A, adot = self.nw.tip(q, qdot)
        delta = max(-pos[1], 0.0)
        v_n, v_t = A @ qdot
        fn = max(delta**1.5 * (self.k - self.chi * v_n), 0.0)
        M, c = self.nw.mass_and_bias(q, qdot)
        if stick:
            K = np.block([[M, -A[1][:, None]], [A[1][None, :], np.zeros((1, 1))]])
            sol = np.linalg.solve(K, np.concatenate([-c + A[0] * fn, [-adot[1] - v_t / TAU_STICK]]))
            return sol[:6], fn, sol[6], v_n, v_t
        ft = -mu * sigma * fn
        return np.linalg.solve(M, -c + A[0] * fn + A[1] * ft), fn, ft, v_n, v_t

    def tip_velocity(self, q0, y):
        """``[v_n, v_t]`` of the tip (the events that need no dynamics)."""
        return self.nw.tip(q0 + y[:6] * 1e-3, y[6:12])[1] @ y[6:12]

    def solve(self, q0, qdot0, mu, max_phases=4):
        """``P_n, P_t`` at the end of compression, and whether the contact ends stuck."""
        y = np.concatenate([np.zeros(6), qdot0, np.zeros(4)])
        t, stick = 0.0, False
        sigma = np.sign(self.evaluate(q0, y, mu, False, 1.0)[4])
        for _ in range(max_phases):
            def rhs(t, y, stick=stick, sigma=sigma):
                self.nfev += 1
                qdd, fn, ft, v_n, v_t = self.evaluate(q0, y, mu, stick, sigma)
                return np.concatenate([y[6:12], qdd * 1e-3, [fn * 1e-3, ft * 1e-3, fn * v_n * 1e-3,
                                                               ft * v_t * 1e-3]])

            def end(t, y):
                return self.tip_velocity(q0, y)[0]

            def switch(t, y, stick=stick, sigma=sigma):
                if not stick:
                    return sigma * self.tip_velocity(q0, y)[1]
                _, fn, ft, _, _ = self.evaluate(q0, y, mu, stick, sigma)
                return mu * fn - abs(ft)

            end.terminal = switch.terminal = True
            end.direction, switch.direction = 1.0, -1.0
            sol = solve_ivp(rhs, (t, 500.0), y, method=self.method, rtol=RTOL, atol=ATOL, events=[end, switch])
            t, y = sol.t[-1], sol.y[:, -1]
            if sol.t_events[0].size:
                return y[12], y[13], stick
            if stick:  # the stick force reached the cone: slide against it
                stick, sigma = False, -np.sign(self.evaluate(q0, y, mu, True, sigma)[2])
            else:
                lam = self.evaluate(q0, y, mu, True, sigma)[2]
                fn = self.evaluate(q0, y, mu, False, sigma)[1]
                stick = abs(lam) <= mu * fn
                sigma = sigma if stick else -np.sign(lam)
        raise RuntimeError("scipy baseline: more phases than max_phases")


def main():
    args = parse_args(__doc__)
    batches = [1, 16] if args.quick else [1, 16, 128, 1024]
    n_scipy = 4 if args.quick else 32
    repeats = 3
    walker = di.CrutchWalker()
    nmax = batches[-1]
    q, qdot = jittered_states(walker, nmax)
    rows = []

    def row(item, value, unit, **kw):
        rows.append(dict(table="compliant", item=item, value=float(value), unit=unit, **kw))

    baseline = ScipyCompliant(walker)
    compiled = {}
    for case, mu_value in CASES.items():
        mu = np.full(nmax, mu_value)
        # -- scipy baseline on the first n_scipy members: per-case cost and reference impulses ----------
        t0, c0 = time.perf_counter(), time.process_time()
        baseline.nfev = 0
        ref = np.array([baseline.solve(q[k], qdot[k], mu_value)[:2] for k in range(n_scipy)])
        t_scipy, c_scipy = (time.perf_counter() - t0) / n_scipy, (time.process_time() - c0) / n_scipy
        row(f"{case}: scipy LSODA + NumPy RHS", t_scipy * 1e3, "ms/case", cpu_value=c_scipy * 1e3,
            note=f"{n_scipy} cases, {baseline.nfev / n_scipy:.0f} RHS evaluations per case")
        for n in batches:
            xs = (walker, jnp.asarray(q[:n]), jnp.asarray(qdot[:n]), jnp.asarray(mu[:n]))
            if n not in compiled:
                compiled[n] = compile_time(difimpact_batch, *xs)
                fn, wall, cpu = compiled[n]
                row(f"compile, batch {n}", wall, "s", cpu_value=cpu, goal="< 60 s" if n == 1 else None,
                    ratio=wall / 60 if n == 1 else None, met=bool(wall < 60) if n == 1 else None,
                    note="wall and process CPU seconds of jax.jit(f).lower(...).compile()")
            fn = compiled[n][0]
            pn, pt, steps, stuck, ok = (np.asarray(x) for x in fn(*xs))
            m = min(n, n_scipy)
            both = ok[:m]  # compare with scipy only where difimpact succeeded
            err = float(np.max(np.abs(pn[:m][both] - ref[:m, 0][both]), initial=0.0))
            err_t = float(np.max(np.abs(pt[:m][both] - ref[:m, 1][both]), initial=0.0))
            if not (both.any() and err <= 1e-6):
                raise AssertionError(f"{case}: difimpact and scipy disagree on P_n by {err} ({both.sum()} of {m} "
                                     "members compared)")
            failed = int(n - ok.sum())
            row(f"{case}: failed solves, batch {n}", failed, "members", goal="0", met=failed == 0,
                note=f"result != successful (throw=False); failed members: {np.nonzero(~ok)[0][:10].tolist()}")
            if n == 1:
                row(f"{case}: agreement |ΔP_n| (|ΔP_t|) with scipy, batch 1", err, "N s", goal="≤ 1e-6",
                    met=True, note=f"|ΔP_t| = {err_t:.1e}; member 0: P_n = {pn[0]:.4f}, P_t = {pt[0]:.4f} N s, "
                                   f"{int(steps[0])} steps, ends {'stuck' if stuck[0] else 'sliding'}")
            # Cost per successful solve: a failed member's work is paid but not counted as a case.
            t, tc = (x / max(n - failed, 1) for x in median_time(fn, *xs, repeats=repeats, min_time=0.0))
            row(f"{case}: difimpact jit+vmap, batch {n}", t * 1e3, "ms/case", cpu_value=tc * 1e3, batch=n,
                steps=float(steps[ok].mean()),
                note=f"{1 / t:.0f} solves/s; |ΔP_n| ≤ {err:.1e} on {both.sum()} members; steps "
                     f"{int(steps[ok].min())}–{int(steps[ok].max())}; time per successful solve")
            row(f"{case}: scipy cost / difimpact cost per case, batch {n}", t_scipy / t, "×",
                cpu_value=c_scipy / tc, **(dict(goal="≥ 50×", ratio=t_scipy / t / 50, met=bool(t_scipy / t >= 50))
                                           if n == batches[-1] else {}))
            if n == batches[-1]:
                row(f"{case}: CPU time per case, batch {n} (issue 16)", t * 1e3, "ms/case", cpu_value=tc * 1e3,
                    goal=f"≤ {GOAL_MS} ms (≥ 150× LSODA)", ratio=tc * 1e3 / GOAL_MS, met=bool(tc * 1e3 <= GOAL_MS),
                    note=f"{c_scipy / tc:.0f}× LSODA's CPU time per case on this machine")

    # -- profile: the right-hand side alone, batched as in the largest batch ----------------------------
    from difimpact._compliant.state import ContactModes
    from difimpact._compliant.system import CompliantContactSystem

    n = batches[-1]
    contact = tip_contact()
    y = jnp.concatenate([jnp.zeros((n, 6)), jnp.asarray(qdot[:n]), jnp.zeros((n, 5))], axis=1)
    modes = ContactModes(jnp.ones(1, bool), jnp.zeros(1, bool), jnp.ones(1), jnp.full(1, jnp.inf))

    def rhs(walker, q0, y):
        """``LOOP`` chained evaluations inside one compiled loop: the in-graph cost, without dispatch."""
        f = jax.vmap(lambda a, b: CompliantContactSystem(walker, (contact,), a, "compression", False)
                     .vector_field(0.0, b, modes))
        return jax.lax.fori_loop(0, LOOP, lambda i, y: y + 1e-9 * f(q0, y), y)

    fn, _, _ = compile_time(rhs, walker, jnp.asarray(q[:n]), y)
    t_rhs, c_rhs = (x / n / LOOP for x in median_time(fn, walker, jnp.asarray(q[:n]), y, repeats=5))
    row(f"profile: one right-hand side evaluation, batch {n}", t_rhs * 1e6, "µs/case", cpu_value=c_rhs * 1e6,
        note=f"{LOOP} chained evaluations in one compiled loop; Tsit5 makes 6 per step, the event function one more")
    write(args, [dict(table="machine", **machine())] + rows)


if __name__ == "__main__":
    main()
