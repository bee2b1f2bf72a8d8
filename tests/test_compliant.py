"""Compliant contact phase: seed 000 Table 3, slide-then-stick, convergence to the impulsive map,
scipy reference, conservation laws, gradients against finite differences and the implicit-function
formula, vmap against a loop, errors.

Compile time is the cost: one compiled solve ``solve(p, rtol, t_max)`` over a parameter vector, its ``vmap`` for
the stiffness sweep towards the impulsive map, and (CI's second stage: its trace alone takes ~20 s) one compiled
``vmap`` of its Jacobian (``jacrev``, the solutions as auxiliary outputs) that serves the other batched checks at
once: the Table-3 rows and the gradient members.
"""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import minimize_scalar

import difimpact as di
from difimpact.papers.font_llagunes_2012.crutch_tip import tip_contact

# p = [k_n factor, χ factor, μ, forearm mass, q3, q̇5, q̇3, lift of the feet]
NAMES = ("kn_factor", "chi_factor", "mu", "forearm_mass", "q3", "q5dot", "q3dot", "lift")
NOMINAL = np.array([1.0, 1.0, 0.75, 4.28, math.radians(12.0), -0.2, 1.0, 0.0])
RTOL = 1e-8
T_MAX = 0.5

# seed 000, Table 3: (k_n factor, χ factor, P_n⁺, P_t⁺)
TABLE3 = [
    (1.0, 1.0, 14.409, -9.899),
    (1 / 3, 1.0, 14.476, -9.927),
    (1 / 2, 1.0, 14.461, -9.922),
    (2.0, 1.0, 14.353, -9.868),
    (3.0, 1.0, 14.241, -9.797),
    (1.0, 1 / 5, 14.428, -9.908),
    (1.0, 1 / 2, 14.394, -9.886),
    (1.0, 2.0, 14.343, -9.858),
    (1.0, 5.0, 14.331, -9.851),
]


def setup(p):
    model = di.CrutchWalker(masses=jnp.stack([22.54, 40.46, 3.92, p[3]]))
    q, qdot = model.pre_impact_state(p[4], p[5], q3dot=p[6])
    return model, q.at[1].add(p[7]), qdot, tip_contact(p[0], p[1], p[2])


@eqx.filter_jit
def solve(p, rtol, t_max):
    model, q, qdot, contact = setup(p)
    return di.compliant_impact(model, q, qdot, "Q", normal=contact.normal_law, friction=contact.friction_law,
                               rtol=rtol, atol=rtol * 1e-2, t_max=t_max, history=True, throw=False)


def to_numpy(out):
    return jax.tree_util.tree_map(lambda x: np.asarray(x) if eqx.is_array(x) else x, out)


def run(p, rtol=RTOL, t_max=T_MAX):
    return to_numpy(solve(jnp.asarray(p, float), jnp.asarray(rtol), jnp.asarray(t_max)))


def ok(out):
    return bool(np.all(np.asarray(out.result._value) == di.CompliantResults.successful._value))


def batch(rows):
    p = np.tile(NOMINAL, (len(rows), 1))
    p[:, :2] = np.asarray(rows)[:, :2]
    return p


def outputs(p, rtol):
    """``(P_n, P_t, duration)`` of ``solve`` at ``T_MAX``, and the whole solution (auxiliary)."""
    out = solve(p, rtol, jnp.asarray(T_MAX))
    return jnp.stack([out.normal_impulse[0], out.tangential_impulse[0], out.duration]), out


# The rows of the batched Jacobian: Table 3, the stiffer contacts of the convergence check (k_n × 10, 100,
# 1000; × 1 is Table 3's first row; they finish after other numbers of steps), and the gradient members of ``test_vmap_of_gradient_against_finite_...``
# (slide then stick; sliding throughout; a lower, faster approach), which run at rtol 1e-10.
STIFFER = (10.0, 100.0, 1000.0)
MEMBERS = np.tile(NOMINAL, (3, 1))
MEMBERS[1, 2] = 0.5
MEMBERS[2, 4], MEMBERS[2, 5] = math.radians(6.0), 0.2
BATCH = np.concatenate([batch(TABLE3), batch([(f, 1.0) for f in STIFFER]), MEMBERS])
BATCH_RTOL = np.r_[np.full(len(TABLE3) + len(STIFFER), RTOL), np.full(len(MEMBERS), 1e-10)]


@pytest.fixture(scope="module")
def vmapped():
    """``jit(vmap(jacrev))`` of :func:`outputs` over the rows of ``BATCH``: the Jacobians ``(rows, 3, 8)`` and the
    solutions."""
    J, out = eqx.filter_jit(jax.vmap(jax.jacrev(outputs, has_aux=True)))(jnp.asarray(BATCH), jnp.asarray(BATCH_RTOL))
    return np.asarray(J), to_numpy(out)


@pytest.fixture(scope="module")
def stiffer():
    """Table 3's first row and the stiffer contacts (k_n × 10, 100, 1000) by one compiled ``vmap`` of ``solve``."""
    rows = batch([(f, 1.0) for f in (1.0, *STIFFER)])
    n = len(rows)
    return to_numpy(jax.vmap(solve)(jnp.asarray(rows), jnp.full(n, RTOL), jnp.full(n, T_MAX)))


@pytest.fixture(scope="module")
def table3(vmapped):
    out = jax.tree_util.tree_map(lambda x: x[: len(TABLE3)], vmapped[1])
    assert ok(out)
    return out


@pytest.fixture(scope="module")
def nominal():
    out = run(NOMINAL)
    assert ok(out)
    return out


# -- seed 000, Table 3 and Figs. 20–21 ------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.stage2
def test_table3_all_rows(table3):
    paper = np.array([row[2:] for row in TABLE3])
    ours = np.stack([table3.normal_impulse[:, 0], table3.tangential_impulse[:, 0]], axis=1)
    err = np.abs(ours / paper - 1)
    assert np.all(err < 0.01), err
    assert np.all(err[0] < 0.001), err[0]  # nominal row within 0.1 %


@pytest.mark.slow
@pytest.mark.stage2
def test_table3_trends(table3):
    # Figs. 18–21: stiffer contact → shorter impact and higher peak force; more damping → shorter impact.
    order_k = [1, 2, 0, 3, 4]
    assert np.all(np.diff(table3.duration[order_k]) < 0)
    assert np.all(np.diff(table3.peak_normal_force[order_k, 0]) > 0)
    order_chi = [5, 6, 0, 7, 8]
    assert np.all(np.diff(table3.duration[order_chi]) < 0)


def test_slide_then_stick(nominal):
    # Fig. 15 / Figs. 20–21: the tip slides (|F_t| = μ F_n) and then sticks (|F_t| < μ F_n) until the end.
    t_stick = nominal.stick_time[0]
    assert 0 < t_stick < nominal.duration and bool(nominal.final_stick[0]) and nominal.n_phases == 2
    h = nominal.history
    saved = np.isfinite(h.t)
    t, Fn, Ft, vt = h.t[saved], h.normal_force[saved, 0], h.tangential_force[saved, 0], h.tangential_velocity[saved, 0]
    sliding, sticking = (t > 0) & (t < t_stick), t > t_stick
    assert np.allclose(np.abs(Ft[sliding]), 0.75 * Fn[sliding], rtol=1e-12)
    assert np.all(vt[sliding] * Ft[sliding] < 0)  # friction opposes the slip
    assert np.all(np.abs(Ft[sticking]) < 0.75 * Fn[sticking])
    assert np.all(np.abs(vt[sticking]) < 1e-7)
    # The peak lies between accepted steps: above the largest sample, where the sampled rate changes sign.
    k = np.argmax(Fn)
    assert np.max(Fn) <= nominal.peak_normal_force[0] < np.max(Fn) * (1 + 1e-3)
    rate = h.normal_force_rate[saved, 0]
    assert rate[k - 1] > 0 > rate[k + 1]
    # The recorded rate dF_n/dt against differences of the recorded force (the sampling's second-order error;
    # measured 0.1 % of the largest rate), away from the ends and the stick switch, where q̈ and dF_n/dt jump.
    diff = np.gradient(Fn, t)
    inner = (t > t[0]) & (t < t[-1]) & (t != t_stick)
    assert np.allclose(rate[inner], diff[inner], rtol=0, atol=3e-3 * np.max(np.abs(rate)))


# -- convergence to the impulsive map -----------------------------------------------------------------------
def sticking_impulse(p):
    """Impulsive map ending in sticking, v(Q)⁺ = 0: [M −Aᵀ; A 0] [q̇⁺; P] = [M q̇⁻; 0] (NumPy)."""
    model, q, qdot, _ = setup(jnp.asarray(p))
    M, A = np.asarray(model.mass_matrix(q)), np.asarray(model.contact_jacobian(q, "Q"))
    K = np.block([[M, -A.T], [A, np.zeros((2, 2))]])
    return np.linalg.solve(K, np.concatenate([M @ np.asarray(qdot), np.zeros(2)]))[-2:]


def test_converges_to_impulsive_map(stiffer):
    P_ref = sticking_impulse(NOMINAL)
    assert np.allclose(P_ref, [14.16, -9.77], atol=0.006)  # CONVENTIONS.md check value
    out = stiffer
    assert ok(out)
    gap_n = np.abs(out.normal_impulse[:, 0] - P_ref[0])
    gap_t = np.abs(out.tangential_impulse[:, 0] - P_ref[1])
    assert np.all(np.diff(gap_n) < 0) and np.all(np.diff(gap_t) < 0), (gap_n, gap_t)
    # The gap is the impulse of gravity and of the bias forces over the finite duration, and Hertz
    # contact time scales as k_n^(−2/5): each decade of stiffness shrinks the gap about 10^0.4 ≈ 2.5 times
    # (measured 0.253, 0.110, 0.045, 0.018 N s).
    ratio = gap_n[:-1] / gap_n[1:]
    duration = out.duration
    assert np.all((ratio > 2.2) & (ratio < 2.8)), ratio
    assert np.allclose(duration[:-1] / duration[1:], 10**0.4, rtol=0.05)


# -- conservation laws ---------------------------------------------------------------------------------------
def test_energy_balance_and_momentum(nominal):
    model, q0, qdot0, _ = setup(jnp.asarray(NOMINAL))
    E0, E1 = model.energy(q0, qdot0), model.energy(nominal.q_plus, nominal.qdot_plus)
    work = nominal.normal_work[0] + nominal.tangential_work[0]
    assert np.isclose(E1 - E0, work, rtol=1e-6)  # contact forces are the only non-conservative ones
    assert work < 0 and nominal.tangential_work[0] < 0  # dissipative
    tree = model.tree()
    m_tot = float(jnp.sum(tree.mass))

    def com_velocity(q, qdot):
        return jax.jvp(lambda qq: tree.mass @ tree.com_positions(qq) / m_tot, (q,), (qdot,))[1]

    dv = np.asarray(com_velocity(nominal.q_plus, nominal.qdot_plus) - com_velocity(q0, qdot0))
    gravity = m_tot * 9.81 * nominal.duration
    assert np.allclose(m_tot * dv, [nominal.tangential_impulse[0], nominal.normal_impulse[0] - gravity],
                       rtol=1e-7, atol=1e-8)


@pytest.mark.slow
def test_elastic_contact_returns_the_energy():
    # Hunt–Crossley with χ = 0, frictionless, to separation: restitution 1, energy conserved.
    model = di.CrutchWalker()
    q, qdot = model.pre_impact_state(math.radians(12.0), -0.2)
    law = di.HuntCrossley(di.hertz_stiffness(0.05, 0.1e9, 0.5, 30e9, 0.2), 0.0)
    out = di.compliant_impact(model, q, qdot, "Q", normal=law, end="separation", rtol=1e-10, atol=1e-12)
    E0, E1 = model.energy(q, qdot), model.energy(out.q_plus, out.qdot_plus)
    assert abs(out.normal_work[0]) < 1e-8 * model.kinetic_energy(q, qdot)
    assert np.isclose(E1, E0, rtol=1e-9)
    assert out.tangential_impulse[0] == 0 and out.normal_impulse[0] > 0
    # Separation at δ = 0, less the 1e-9 mm by which the phase engine arms its events (`difimpact._hybrid.EVENT_SHIFT`): 1e-12 m, give or
    # take the rounding of the root find.
    assert abs(model.point(out.q_plus, "Q")[1]) < 2e-12


# -- against scipy ------------------------------------------------------------------------------------------
@eqx.filter_jit
def contact_terms(model, q, qdot):
    """``M``, the bias ``c``, the tip's Jacobian ``A``, ``Ȧ q̇`` and the penetration ``δ`` (compiled once: the
    model's masses are arrays)."""
    A = model.contact_jacobian(q, "Q")
    Adot_qdot = jax.jvp(lambda qq: model.contact_jacobian(qq, "Q") @ qdot, (q,), (qdot,))[1]
    return model.mass_matrix(q), model.bias(q, qdot), A, Adot_qdot, -model.point(q, "Q")[1]


def scipy_reference(p, rtol=1e-10):
    """An independent NumPy/scipy integration of the same model (Radau, same events, SI units)."""
    model, q0, qdot0, contact = setup(jnp.asarray(p))
    k, chi, mu = float(contact.normal_law.stiffness), float(contact.normal_law.damping), float(p[2])
    n = 6

    def terms(q, qdot):
        return contact_terms(model, q, qdot)

    q0 = np.asarray(q0)

    def forces(y, mode):
        q, qdot = q0 + y[:n], y[n:2 * n]
        M, c, A, b, d = (np.asarray(x) for x in terms(q, qdot))
        v = A @ qdot
        Fn = max(k * max(d, 0.0) ** 1.5 * (1 - chi / k * v[0]), 0.0)
        if mode == "stick":
            K = np.block([[M, -A[1:].T], [A[1:], np.zeros((1, 1))]])
            sol = np.linalg.solve(K, np.concatenate([-c + A[0] * Fn, -b[1:]]))
            qddot, Ft = sol[:n], sol[n]
        else:
            Ft = -mu * mode * Fn
            qddot = np.linalg.solve(M, -c + A[0] * Fn + A[1] * Ft)
        return qddot, Fn, Ft, v

    def rhs(t, y, mode):
        qddot, Fn, Ft, v = forces(y, mode)
        return np.concatenate([y[n:2 * n], qddot, [Fn, Ft, Fn * v[0], Ft * v[1]]])

    def end(t, y, mode):
        return forces(y, mode)[3][0]

    def stop_sliding(t, y, mode):
        # σ v_t reaching −1 nm/s: the library's events start each phase at +1e-9 (armed, not at a root).
        return mode * forces(y, mode)[3][1] + 1e-9 if mode != "stick" else 1.0

    def start_sliding(t, y, mode):
        qddot, Fn, Ft, v = forces(y, mode)
        return mu * Fn - abs(Ft) if mode == "stick" else 1.0

    for ev, direction in ((end, 1), (stop_sliding, -1), (start_sliding, -1)):
        ev.terminal, ev.direction = True, direction
    y = np.concatenate([np.zeros(n), np.asarray(qdot0), np.zeros(4)])
    v_t0 = float(np.asarray(terms(q0, np.asarray(qdot0))[2])[1] @ np.asarray(qdot0))
    # At tangential rest (|v_t| ≤ 1e-12 m/s, rounding) and unloaded: slide the way the stick force points.
    mode = float(np.sign(v_t0)) if abs(v_t0) > 1e-12 else -np.sign(forces(y, "stick")[2])
    t, t_stick = 0.0, np.inf
    atol = np.r_[np.full(n, 1e-14), np.full(n, 1e-12), np.full(4, 1e-12)]
    peak = 0.0
    for _ in range(6):
        sol = solve_ivp(rhs, (t, 1.0), y, method="Radau", rtol=rtol, atol=atol, args=(mode,),
                        events=(end, stop_sliding, start_sliding), dense_output=True)
        # Peak normal force: the largest step sample, refined on Radau's dense output around it.
        force = lambda s: forces(sol.sol(s), mode)[1]  # noqa: E731
        j = int(np.argmax([force(s) for s in sol.t]))
        lo, hi = sol.t[max(j - 1, 0)], sol.t[min(j + 1, len(sol.t) - 1)]
        best = minimize_scalar(lambda s: -force(s), bounds=(lo, hi), method="bounded",
                               options={"xatol": 1e-14})
        peak = max(peak, force(sol.t[j]), -best.fun)
        t, y = sol.t[-1], sol.y[:, -1]
        which = [i for i in range(3) if len(sol.t_events[i])]
        if which == [0]:
            break
        if which == [1]:
            lam = forces(y, "stick")[2]
            if abs(lam) <= mu * forces(y, "stick")[1]:
                mode, t_stick = "stick", t
            else:
                mode = -np.sign(lam)
        elif which == [2]:
            mode = -np.sign(forces(y, "stick")[2])
    else:
        raise AssertionError("scipy reference did not end")
    return dict(qdot_plus=y[n:2 * n], normal_impulse=y[2 * n], tangential_impulse=y[2 * n + 1],
                normal_work=y[2 * n + 2], tangential_work=y[2 * n + 3], duration=t, stick_time=t_stick,
                peak_normal_force=peak)


@pytest.mark.parametrize("q3, q5dot", [(12.0, -0.2), (18.0, 0.0), (6.0, 0.2)])
def test_against_scipy(q3, q5dot):
    p = NOMINAL.copy()
    p[4], p[5] = math.radians(q3), q5dot
    ref = scipy_reference(p)
    out = run(p, rtol=1e-10)
    assert ok(out)
    for key, value in ref.items():
        ours = np.asarray(getattr(out, key))
        ours = ours[0] if key not in ("qdot_plus", "duration") else ours
        if key == "stick_time" and np.isinf(value):
            assert np.isinf(ours)
            continue
        # Times relative to the duration (a 6 µs first phase is resolved to 1e-11 s, not to 1e-6 of itself).
        scale = ref["duration"] if key == "stick_time" else np.max(np.abs(value))
        assert np.allclose(ours, value, rtol=0, atol=1e-6 * scale), (key, ours, value)


# -- gradients ----------------------------------------------------------------------------------------------
GRAD_PARAMS = (0, 1, 2, 3, 4)  # k_n, χ, μ, forearm mass, q3


@pytest.fixture(scope="module")
def jacobian():
    jac = eqx.filter_jit(jax.jacrev(outputs, has_aux=True))
    return lambda rtol: np.asarray(jac(jnp.asarray(NOMINAL), jnp.asarray(rtol))[0])


def outputs_np(p, rtol=1e-12, t_max=T_MAX):
    out = run(p, rtol=rtol, t_max=t_max)
    return np.array([out.normal_impulse[0], out.tangential_impulse[0], out.duration]), out


@pytest.fixture(scope="module")
def finite_differences():
    fd = {}
    for i in GRAD_PARAMS:
        h = 1e-4 * abs(NOMINAL[i])
        up, down = NOMINAL.copy(), NOMINAL.copy()
        up[i] += h
        down[i] -= h
        fd[i] = (outputs_np(up)[0] - outputs_np(down)[0]) / (2 * h)
    return fd


@pytest.mark.slow
def test_gradients_against_finite_differences(jacobian, finite_differences):
    # Measured relative errors against the finite differences at rtol 1e-8 / 1e-10: k_n 3e-8 / 2e-8, χ 2e-7 /
    # 3e-7, forearm mass 5e-10 / 1e-9, q3 9e-8 / 2e-9, μ 3e-6 / 2e-6 (dP_t/dμ = 0.005 N s is a small difference
    # of the sliding and sticking parts, ±23.85 N s); a few 1e-7 is the finite differences' own noise floor.
    # With the stick stabilised at τ = 0.1 ms instead of 1 ms, Tsit5 stepped at 1.4 τ in stick and μ was 7e-3
    # off, k_n 8e-5; with a looser event root (1e-10 ms) χ stalled at 8e-5. Below that floor the gradient's
    # convergence shows against a tight-tolerance gradient (rtol 1e-12).
    J = {rtol: jacobian(rtol) for rtol in (1e-8, 1e-10, 1e-12)}
    assert all(np.all(np.isfinite(j)) for j in J.values())
    for i, fd in finite_differences.items():
        for rtol in (1e-8, 1e-10):
            assert np.max(np.abs(J[rtol][:, i] - fd) / np.abs(fd)) < 1e-4, (NAMES[i], rtol, J[rtol][:, i], fd)
        converge = [np.max(np.abs(J[rtol][:, i] - J[1e-12][:, i]) / np.abs(J[1e-12][:, i])) for rtol in (1e-8, 1e-10)]
        assert converge[1] < converge[0], (NAMES[i], converge)


@pytest.mark.slow
def test_event_time_gradient_is_the_implicit_function_formula(jacobian):
    # The impact ends at g = −v_n(Q) = 0: dt*/dp = −(∂g/∂p)|_t / (dg/dt), with ∂g/∂p at fixed time from
    # central differences of fixed-time solves (t_max before the event, Richardson-extrapolated to t*) and
    # dg/dt from the same solves, all independent of the solver's event machinery.
    t_star = outputs_np(NOMINAL)[1].duration
    eps = 1e-3 * t_star

    def g(p, t):
        out = run(p, rtol=1e-12, t_max=t)
        assert out.result._value == di.CompliantResults.no_end._value  # stopped at t, before the event
        m = di.CrutchWalker(masses=jnp.stack([22.54, 40.46, 3.92, p[3]]))
        return -float(m.contact_jacobian(out.q_plus, "Q")[0] @ out.qdot_plus)

    g1, g2 = g(NOMINAL, t_star - eps), g(NOMINAL, t_star - 2 * eps)
    dg_dt = (-4 * g1 + g2) / (2 * eps)  # with g(t*) = 0
    J = jacobian(1e-10)
    for i in (0, 2, 4):
        h = 1e-4 * abs(NOMINAL[i])
        up, down = NOMINAL.copy(), NOMINAL.copy()
        up[i] += h
        down[i] -= h
        d1 = (g(up, t_star - eps) - g(down, t_star - eps)) / (2 * h)
        d2 = (g(up, t_star - 2 * eps) - g(down, t_star - 2 * eps)) / (2 * h)
        implicit = -(2 * d1 - d2) / dg_dt
        assert np.isclose(J[2, i], implicit, rtol=1e-5), (i, J[2, i], implicit)


# -- vmap, errors -----------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.stage2
def test_vmap_equals_loop(table3):
    for j, row in enumerate(batch(TABLE3)):
        single = run(row)
        batched = jax.tree_util.tree_map(lambda x: x[j], table3)
        # Batched and single kernels round differently and the adaptive step control amplifies it.
        for key in ("q_plus", "qdot_plus", "normal_impulse", "tangential_impulse", "normal_work",
                    "tangential_work", "duration", "stick_time"):
            assert np.allclose(getattr(batched, key), getattr(single, key), rtol=1e-8, atol=1e-10), key
        # The peak is interpolated between accepted steps, which differ slightly between the two.
        assert np.allclose(batched.peak_normal_force, single.peak_normal_force, rtol=1e-7)


@pytest.mark.slow
@pytest.mark.stage2
def test_vmap_of_gradient_against_finite_differences(vmapped):
    """``jit(vmap(jacrev))`` over members that finish after different numbers of phases (slide then stick;
    sliding throughout; a lower, faster approach) — a finished member keeps running under vmap while the others
    go on, which once turned the whole batch's gradient into a NaN error — against central differences of each
    member (elasticities p/y dy/dp, the outputs P_n, P_t, duration). The batch is ``BATCH``, whose other rows
    (Table 3, stiffer contacts) finish after still other numbers of steps."""
    J, out = vmapped
    assert np.all(np.isfinite(J))
    members = slice(len(BATCH) - len(MEMBERS), None)
    assert np.all(BATCH[members] == MEMBERS) and np.all(BATCH_RTOL[members] == 1e-10)
    phases = out.n_phases[members]
    assert len(set(phases)) > 1, phases  # the batch really mixes members that finish at different phases
    for m, p in enumerate(MEMBERS):
        y = outputs_np(p)[0]
        for i in (0, 2, 4):  # k_n, μ, q3
            h = 1e-4 * abs(p[i])
            up, down = p.copy(), p.copy()
            up[i] += h
            down[i] -= h
            fd = (outputs_np(up)[0] - outputs_np(down)[0]) / (2 * h)
            assert np.max(np.abs((J[members][m, :, i] - fd) * p[i] / y)) < 1e-4, (m, i, J[members][m, :, i], fd)


@pytest.mark.slow
def test_vmap_64_cases_equals_loop():
    rng = np.random.default_rng(0)
    p = np.tile(NOMINAL, (64, 1))
    p[:, 0] = np.exp(rng.uniform(np.log(1 / 3), np.log(3), 64))
    p[:, 1] = np.exp(rng.uniform(np.log(1 / 5), np.log(5), 64))
    p[:, 2] = rng.uniform(0.5, 1.0, 64)
    out = to_numpy(eqx.filter_jit(jax.vmap(solve, in_axes=(0, None, None)))(
        jnp.asarray(p), jnp.asarray(RTOL), jnp.asarray(T_MAX)))
    assert ok(out)
    for j in range(64):
        single = run(p[j])
        assert np.allclose(out.normal_impulse[j], single.normal_impulse, rtol=1e-8)
        assert np.allclose(out.tangential_impulse[j], single.tangential_impulse, rtol=1e-8)
        assert np.allclose(out.qdot_plus[j], single.qdot_plus, rtol=1e-8, atol=1e-10)


def test_errors_under_jit():
    bad = NOMINAL.copy()
    bad[0] = 0.0
    with pytest.raises(eqx.EquinoxRuntimeError, match="`stiffness` must be positive"):
        run(bad)
    separating = NOMINAL.copy()
    separating[5], separating[6] = 0.2, -1.0  # every velocity reversed: the tip leaves the ground
    with pytest.raises(eqx.EquinoxRuntimeError, match="already separating"):
        run(separating)
    lifted = NOMINAL.copy()
    lifted[7] = 0.05  # the tip starts 5 cm above the ground and cannot reach it within t_max
    out = run(lifted, t_max=0.01)
    assert out.result._value == di.CompliantResults.no_end._value
    assert np.all(np.isfinite(out.qdot_plus)) and out.normal_impulse[0] == 0
    with pytest.raises(eqx.EquinoxRuntimeError, match="did not reach its end event"):
        out.result.error_if(out, out.result != di.CompliantResults.successful)
    # Given time, the lifted tip falls, closes the contact (onset event) and completes the impact.
    out = run(lifted)
    assert ok(out) and out.n_phases == 3 and out.normal_impulse[0] > 0


def test_structural_errors():
    model = di.CrutchWalker()
    q, qdot = model.pre_impact_state(math.radians(12.0), -0.2)
    law = di.HuntCrossley(4e7, 1e7)
    with pytest.raises(ValueError, match="point"):
        di.compliant_impact(model, q, qdot, "Z", normal=law)
    with pytest.raises(ValueError, match="`end`"):
        di.compliant_impact(model, q, qdot, "Q", normal=law, end="impact")
    with pytest.raises(ValueError, match="`points`"):
        di.compliant_impact(model, q, qdot, (), normal=law)
    with pytest.raises(ValueError, match="`q`"):
        di.compliant_impact(model, q[:5], qdot, "Q", normal=law)


@pytest.mark.slow
def test_regularised_friction_bias_against_exact_coulomb(nominal):
    # tanh friction with v_ε = 1 mm/s (Kvaerno5): no true stick, a small bias (measured −0.08 %, −0.09 %).
    model, q, qdot, contact = setup(jnp.asarray(NOMINAL))
    out = di.compliant_impact(model, q, qdot, "Q", normal=contact.normal_law,
                              friction=di.RegularisedCoulomb(0.75, 1e-3))
    bias = np.array([out.normal_impulse[0] / nominal.normal_impulse[0] - 1,
                     out.tangential_impulse[0] / nominal.tangential_impulse[0] - 1])
    assert np.all(np.abs(bias) < 2e-3) and np.all(np.abs(bias) > 1e-5), bias
    assert not bool(out.final_stick[0]) and out.n_phases == 1


# -- Mindlin tangential spring (seed 001, eqs. 17–19), a hybrid elastic-stick / sliding law ----------------
SPRING_FACTORS = (1.0, 10.0, 100.0)  # k_t scale factors


@eqx.filter_jit
def solve_spring(kt_factor, rtol):
    model, q, qdot, contact = setup(jnp.asarray(NOMINAL))
    law = di.TangentialSpring.from_materials(0.05, 0.1e9, 0.5, 30e9, 0.2, 0.75)
    law = di.TangentialSpring(law.stiffness * kt_factor, law.mu)
    return di.compliant_impact(model, q, qdot, "Q", normal=contact.normal_law, friction=law, rtol=rtol,
                               atol=rtol * 1e-2, history=True, throw=False)


@pytest.fixture(scope="module")
def spring():
    return {f: to_numpy(solve_spring(jnp.asarray(f), jnp.asarray(RTOL))) for f in SPRING_FACTORS}


def test_spring_friction_finishes_and_switches_regimes(spring):
    # Explicit Tsit5 (the default for hybrid laws): measured 78 / 92 / 162 steps at k_t × 1 / 10 / 100.
    for f, out in spring.items():
        assert ok(out) and out.n_steps < 400, (f, out.n_steps)
        # elastic from onset (z = 0), sliding once |F_t| reaches μF_n, elastic stick again until the end
        assert out.n_phases == 3 and bool(out.final_stick[0]) and 0 < out.stick_time[0] < out.duration
        h = out.history
        saved = np.isfinite(h.t)
        t, Fn, Ft, vt = (h.t[saved], h.normal_force[saved, 0], h.tangential_force[saved, 0],
                         h.tangential_velocity[saved, 0])
        after = t > out.stick_time[0]
        # Never outside the cone but by the event's arming margin (10⁻⁹ of the 1 mm force, ~1e-6 N): at onset
        # F_t / F_n = k_t v_t / (k_n v_n) to first order, 0.23 at k_t × 1 (elastic for 2 ms), 2.3 at × 10 (above
        # μ: the first elastic phase lasts ~1 µs and ends just outside the cone).
        assert np.all(np.abs(Ft) <= 0.75 * Fn * (1 + 1e-6) + 1e-5)
        assert np.all(np.abs(Ft[after]) < 0.75 * Fn[after] * (1 + 1e-6))
        assert np.any(np.isclose(np.abs(Ft[~after]), 0.75 * Fn[~after], rtol=1e-12) & (vt[~after] * Ft[~after] < 0))


def test_spring_friction_bias_shrinks_toward_exact_coulomb(spring, nominal):
    # The spring's "stick" is elastic: entering it, F_t starts on the cone (continuous) while the rigid stick
    # force is 0.673 F_n, so F_t oscillates about it at the tangential frequency √(k_t √δ / m), with an undamped
    # amplitude ≈ 0.08 F_n independent of k_t; its impulse is bounded by ~amplitude / frequency ∝ k_t^(−1/2).
    # At the nominal k_t the tip starts elastic and soft (2 ms at |F_t| < μF_n while slipping 0.28–0.87 m/s
    # elastically), slides later and sticks at 4.5 ms instead of 1.9; the impact lasts 5.5 ms instead of 4.0.
    # Measured P_n, P_t biases: ×1 +11.8 %, +13.4 %; ×10 −0.26 %, −0.29 %;
    # ×100 −0.062 %, −0.068 % (and, by the oscillation's phase at the end, ×1000 +0.13 %, ×10⁴ −0.04 %).
    bias = np.array([[spring[f].normal_impulse[0] / nominal.normal_impulse[0] - 1,
                      spring[f].tangential_impulse[0] / nominal.tangential_impulse[0] - 1]
                     for f in SPRING_FACTORS])
    size = np.max(np.abs(bias), axis=1)
    assert np.all(np.diff(size) < 0), bias
    assert 0.05 < size[0] < 0.2 and size[-1] < 1e-3, bias


def test_spring_friction_energy_balance(spring):
    # W_t = ∫F_t v_t dt is the work of the tangential force on the walker: it includes the elastic energy still
    # stored in the spring at the end, so W_n + W_t is the whole change of T + V.
    model, q0, qdot0, _ = setup(jnp.asarray(NOMINAL))
    E0 = model.energy(q0, qdot0)
    for f, out in spring.items():
        work = out.normal_work[0] + out.tangential_work[0]
        assert np.isclose(model.energy(out.q_plus, out.qdot_plus) - E0, work, rtol=1e-6), f
        assert out.tangential_work[0] < 0


@pytest.mark.slow
def test_spring_friction_gradient_against_finite_differences():
    # d/dk_t (relative scale) of P_n, P_t, duration at the nominal k_t: −2.05 N s, +1.63 N s, −2.8 ms; measured
    # relative errors against central differences 8e-7 at rtol 1e-8 and 3e-9 at rtol 1e-10 (through the three
    # event times and the z reset at the slide → stick switch).
    def outputs(f):
        out = solve_spring(f, jnp.asarray(1e-10))
        return jnp.stack([out.normal_impulse[0], out.tangential_impulse[0], out.duration])

    J = np.asarray(eqx.filter_jit(jax.jacrev(outputs))(jnp.asarray(1.0)))
    h = 1e-4
    up, down = (np.asarray(outputs(jnp.asarray(1.0 + s * h))) for s in (1, -1))
    fd = (up - down) / (2 * h)
    assert np.all(np.isfinite(J)) and np.all(np.abs(fd) > 1e-3), (J, fd)
    assert np.allclose(J, fd, rtol=1e-4, atol=0), (J, fd)
