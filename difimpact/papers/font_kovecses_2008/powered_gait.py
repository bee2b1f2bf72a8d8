"""Font & Kövecses 2008's biped with a torso, powered by two hip torques: the optimal step at 1 m/s over the
torso-to-hip mass ratio μ_T, and the share of kinetic energy lost at its heel strike beside Font & Kövecses 2008's
impulsive-only analysis of the same biped."""

import math

import jax
import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np

from difimpact import (
    BipedWithTorso, GaitResults, OptimalGait, biped_torso_walker, checks_as_nan, impact, optimal_gait, work_balance,
)

from ..curves import monotone, require_finite
from ..experiment import Outcome, check_that, experiment

MU_T = (0.5, 1.0, 2.0)
LEG_MASS, UPPER_MASS = 5.0, 20.0  # each leg; hip + torso (Font & Kövecses 2008, §4.2: m = 5 kg, m_B = 30 kg)
STEP_LENGTH, SPEED = 0.5, 1.0  # [m], [m/s]: a fixed step time of 0.5 s
SEGMENTS, QUICK_SEGMENTS = 80, 40  # Hermite–Simpson segments; the full run also solves on twice SEGMENTS
MESH_RTOL = 1e-6  # rows on SEGMENTS against twice SEGMENTS: "converged to six digits"
BALANCE_RTOL = 1e-5  # net actuator work against impact loss, by Simpson's rule on the mesh
EXACT_BALANCE_RTOL = 1e-8  # the same on the exact periodic orbit under the optimal torques (work_balance)
GRAZING = 1e-6  # [m/s]: a swing foot reaching the ground slower than this grazes it (no heel strike fires)
COMPARED = ("cost", "xi_I", "trailing_lift_off_speed")


def biped(mu_T) -> BipedWithTorso:
    """Font & Kövecses 2008's biped (l = 0.8 m, b = 0.4 m, l_T = 0.4 m, 30 kg) with legs of 5 kg and the other 20 kg
    split between hip and torso by ``μ_T = m_T/m_H``."""
    mu_T = jnp.asarray(mu_T, float)
    m_H = UPPER_MASS / (1 + mu_T)
    return BipedWithTorso(m=LEG_MASS, m_H=m_H, m_T=mu_T * m_H, l=0.8, b=0.4, l_T=0.4, g=9.81)


def optimal_step(mu_T, segments: int) -> OptimalGait:
    r"""The step of least ``(1/L)∫(τ_1² + τ_2²) dt`` of :func:`biped` at ``L = 0.5`` m in ``0.5`` s on
    `segments` Hermite–Simpson segments, the feet free to scuff (no clearance) but the swing foot approaching the
    ground at heel strike (without it the straight leg of μ_T = 2 dips through the ground and the step ends as
    its foot comes back up: no collision), and the trailing foot's lift-off reported, not imposed; from Kelly's guess
    (stance leg back at ``−α``, ``\sin α = L/2l``, upright torso). Called from Python, so that :func:`optimal_gait`'s
    own program serves it, one per mesh (the masses are its arguments) and kept by the compilation cache."""
    model = biped(mu_T)
    alpha = jnp.arcsin(STEP_LENGTH / (2 * model.l))
    return optimal_gait(biped_torso_walker(model), jnp.stack([-alpha, -2 * alpha, -alpha]),
                        step_length=STEP_LENGTH, step_time=STEP_LENGTH / SPEED, segments=segments,
                        normalise="distance", foot_velocity="strike")


@jax.jit
@jax.vmap
@checks_as_nan()  # the program holds no host callback: JAX's compilation cache keeps it
def _impulsive_only(mu_T, q4, q5):
    """ξ_I of Font & Kövecses 2008's heel strike (§4) at ``q4⁻``, ``q5⁻``: ``q3 = q4/2``, no relative leg rotation, the
    torso not rotating, the swing foot sticking and the stance foot released."""
    model = biped(mu_T)
    q, qdot = model.pre_impact_state(q4, q5)
    return impact(model, q, qdot, stick=("P_L",)).xi_I


def _heel_strike(gait: OptimalGait) -> dict:
    """The pre-impact state of `gait` in Font & Kövecses 2008's terms (angles in degrees, rates in rad/s; torso angle
    from the vertical, > 0 leaning forward)."""
    theta, rates = np.asarray(gait.theta[-1]), np.asarray(gait.theta_dot[-1])
    foot = np.asarray(gait.problem.biped.swing_foot_velocity(gait.theta[-1], gait.theta_dot[-1]))
    return {"q4": theta[1], "q5": theta[2], "torso_deg": math.degrees(theta[0] - theta[2]),
            "torso_rate": rates[0] - rates[2], "q3_rate": rates[0], "q4_rate": rates[1], "foot_vx": foot[0],
            "foot_vy": foot[1]}


def _solve(segments, progress, desc):
    gaits = [optimal_step(jnp.asarray(mu_T), segments) for mu_T in progress(MU_T, desc=desc)]
    rows = [{"mu_T": mu_T, "cost": float(g.cost), "xi_I": float(g.xi_I),
             "trailing_lift_off_speed": float(g.lift_off_speed), "step_length": float(g.step_length),
             "speed": float(g.speed)} for mu_T, g in zip(MU_T, gaits)]
    return rows, gaits


def _rel(a, b):
    return abs(a / b - 1)


@experiment("gait-biped-torso-powered", "003", "§4.2 (ξ_I against μ_T), in powered gaits",
            "Font & Kövecses 2008's biped with a torso (30 kg, l = 0.8 m, b = l_T = 0.4 m, legs 5 kg, the other 20 kg "
            "split by μ_T = m_T/m_H) walking at 1 m/s with 0.5 m steps, powered by two hip torques: the step of least "
            f"(1/L)∫(τ1² + τ2²) dt (Hermite–Simpson, {SEGMENTS} segments; {QUICK_SEGMENTS} with --quick), "
            "periodic through the impulsive heel strike, straight legs free to scuff, the trailing foot's lift-off "
            "reported; its cost, ξ_I = T_c⁻/T⁻ at heel strike and the trailing foot's post-impact normal velocity, "
            "for μ_T = 0.5, 1, 2.",
            units="mu_T [-], cost [(N m)² s / m], xi_I [-], trailing_lift_off_speed [m/s], step_length [m], "
                  "speed [m/s]")
def biped_torso_powered(quick, progress):
    segments = QUICK_SEGMENTS if quick else SEGMENTS
    rows, gaits = _solve(segments, progress, f"μ_T, {segments} segments")
    fine = None if quick else _solve(2 * segments, progress, f"μ_T, {2 * segments} segments")[0]
    strikes = [_heel_strike(g) for g in gaits]
    mu = jnp.asarray(MU_T)
    q4 = jnp.asarray([s["q4"] for s in strikes])
    upright = np.asarray(_impulsive_only(mu, q4, 0.5 * q4))
    leaning = np.asarray(_impulsive_only(mu, q4, jnp.asarray([s["q5"] for s in strikes])))
    require_finite("Font & Kövecses 2008's impulsive-only heel strike", {"upright": upright, "leaning": leaning})
    checks = _checks(rows, gaits, strikes, upright, leaning, fine, segments)
    table = _table(rows, gaits, strikes, upright, leaning, segments)
    if not quick:  # the exact orbits' balance (a compile of the hybrid Newton): the full run's
        balances = [_exact_balance(g, s) for g, s in zip(progress(gaits, desc="exact orbits"), strikes)]
        checks.insert(len(checks) - 4, _balance_check(balances, strikes))
        table += _balance_table(balances)
    return Outcome(rows, {"biped_torso_powered": _figure(rows, gaits, upright, leaning)}, checks, table)


def _listed(values, fmt, unit=""):
    return ", ".join(format(v, fmt) for v in values) + (f" {unit}" if unit else "") + " (μ_T = " + ", ".join(
        f"{m:g}" for m in MU_T) + ")"


def _trend(a):
    return "falls" if monotone(a, False) else "rises" if monotone(a, True) else "is not monotone"


def _checks(rows, gaits, strikes, upright, leaning, fine, segments):
    xi = np.array([r["xi_I"] for r in rows])
    lift = np.array([r["trailing_lift_off_speed"] for r in rows])
    balance = [_rel(float(g.net_work), float(g.impact_loss)) for g in gaits]
    foot_vy = np.array([s["foot_vy"] for s in strikes])
    checks = []
    if fine is not None:
        mesh = max(_rel(r[k], f[k]) for r, f in zip(rows, fine) for k in COMPARED)
        checks.append(check_that(
            f"Mesh: the rows on {segments} segments agree with {2 * segments} to {MESH_RTOL:g} (cost, ξ_I, v_Sn⁺)",
            "converged rows", f"largest relative difference {mesh:.1e}", mesh < MESH_RTOL))
    scuff = "" if np.all(foot_vy <= 1e-9) else ("; > 0: the straight swing leg scuffs through the ground and the step "
                                            "ends as its foot comes back up at x = L")
    checks += [
        check_that("Energy balance of a periodic step on level ground: net actuator work per step = impact loss "
                   f"T⁻ − T⁺ (the mesh's balance: Simpson's rule, to {BALANCE_RTOL:g})", "steady gait",
                   "relative differences " + _listed(balance, ".1e"), max(balance) < BALANCE_RTOL),
        check_that("The trailing foot lifts off after heel strike, v_Sn⁺ > 0 (reported, not imposed)",
                   "Font & Kövecses 2008, eq. 4", "v_Sn⁺ = " + _listed(lift, ".4f", "m/s"), bool(np.all(lift > 0))),
        check_that("Heel strike is a collision: the swing foot approaches the ground, v_y⁻ ≤ 0 (imposed; no "
                   "clearance constraint)", "Font & Kövecses 2008, §4: the swing foot impacts the ground",
                   "v_y⁻ = " + _listed(foot_vy, "+.3f", "m/s") + scuff, bool(np.all(foot_vy <= 1e-9))),
        check_that("At Font & Kövecses 2008's pre-impact state (q3 = q4/2, upright torso, q̇4 = 0, torso not rotating) "
                   "higher "
                   f"μ_T lowers ξ_I; here at this step's q4⁻ = {math.degrees(strikes[0]['q4']):.1f}°",
                   "Font & Kövecses 2008, §4.2, Figs. 6–7 (impulsive only)", "ξ_I = " + _listed(upright, ".4f"),
                   monotone(upright, False)),
        check_that("The same in the optimal powered gaits: higher μ_T lowers ξ_I at heel strike",
                   "Font & Kövecses 2008, §4.2 (impulsive only)",
                   f"ξ_I = {_listed(xi, '.4f')}: {_trend(xi)}. At the gaits' postures with Font & Kövecses 2008's "
                   f"velocities "
                   f"ξ_I = {', '.join(f'{x:.4f}' for x in leaning)} ({_trend(leaning)}); the optimum strikes with the "
                   "torso at " + ", ".join(f"{s['torso_deg']:.0f}°" for s in strikes) + " from the vertical "
                   "(> 0 forward), turning at " + ", ".join(f"{s['torso_rate']:+.2f}" for s in strikes)
                   + " rad/s, and the legs still spreading, q̇4⁻ = " + ", ".join(f"{s['q4_rate']:.2f}" for s in strikes)
                   + " rad/s (Font & Kövecses 2008: q̇4⁻ = 0, torso not rotating)", monotone(xi, False)),
    ]
    return checks


def _exact_balance(gait, strike):
    """:func:`~difimpact.work_balance` on the exact periodic orbit next to `gait` under its torques open loop;
    ``None`` where the swing foot only grazes the ground at the step's end (``v_y⁻ ≥ −GRAZING``): there it has
    stayed at or below the ground past half a step (μ_T = 2: the straight leg scuffs), the heel strike of the
    hybrid model (armed 1e-6 m above the ground) never fires, and no periodic orbit with a heel strike is near."""
    return None if strike["foot_vy"] >= -GRAZING else work_balance(gait, throw=False)


def _balance_check(balances, strikes):
    """The energy balance on the exact periodic orbits under the optimal torques (:func:`~difimpact.work_balance`),
    every μ_T whose heel strike is a collision."""
    done = [(m, b) for m, b in zip(MU_T, balances) if b is not None]
    rel = [float(b.relative_error) for _, b in done]
    solved = all(bool(b.result == GaitResults.successful) for _, b in done)
    ok = bool(done) and solved and max(rel) <= EXACT_BALANCE_RTOL
    grazing = [f"μ_T = {m:g} (v_y⁻ = {s['foot_vy']:.1e} m/s)" for m, s, b in zip(MU_T, strikes, balances) if b is None]
    return check_that(
        "Energy balance on the exact periodic orbit under the optimal torques: ∫Σuω dt = T⁻ − T⁺ (to "
        f"{EXACT_BALANCE_RTOL:g}; the torques replayed open loop), every μ_T whose heel strike is a collision",
        "work–energy theorem over a periodic step on level ground",
        "relative differences " + ", ".join(f"{r:.1e}" for r in rel) + " (μ_T = " + ", ".join(
            f"{m:g}" for m, _ in done) + "); the orbits start " + ", ".join(f"{float(b.distance):.1e}" for _, b in done)
        + " from the collocated starts" + ("; no exact orbit for " + ", ".join(grazing) + ": the swing foot reaches "
                                           "the ground tangentially from below, past half a step, and the heel "
                                           "strike never fires" if grazing else ""), ok)


def _balance_table(balances):
    head = ("\nEnergy balance on the exact periodic orbit next to each optimum (its torques replayed open loop; "
            "difimpact.work_balance) beside Simpson's rule on the mesh (—: no exact orbit, the swing foot grazes the "
            "ground at heel strike):\n\n"
            "| μ_T | actuator work [J] | impact loss T⁻ − T⁺ [J] | relative difference | Simpson's rule, mesh [J] | "
            "relative difference, mesh | orbit's distance from the collocated start |\n|---|---|---|---|---|---|---|\n")
    return head + "".join(
        f"| {m:g} | — | — | — | — | — | — |\n" if b is None else
        f"| {m:g} | {float(b.work):.10f} | {float(b.impact_loss):.10f} | {float(b.relative_error):.1e} | "
        f"{float(b.mesh_work):.10f} | {_rel(float(b.mesh_work), float(b.impact_loss)):.1e} | "
        f"{float(b.distance):.1e} |\n" for m, b in zip(MU_T, balances))


def _figure(rows, gaits, upright, leaning):
    fig, axes = plt.subplots(1, 3, figsize=(14.4, 4.3), layout="constrained")
    mu = np.array(MU_T)
    axes[0].plot(mu, [r["cost"] for r in rows], "ko-")
    axes[0].set_ylabel("cost (1/L)∫(τ1² + τ2²) dt [(N m)² s / m]")
    axes[1].plot(mu, [r["xi_I"] for r in rows], "ko-", label="optimal powered gait")
    axes[1].plot(mu, upright, "s--", color="C0", label="Font & Kövecses 2008's state, upright torso")
    axes[1].plot(mu, leaning, "^--", color="C1", label="Font & Kövecses 2008's velocities, the gait's torso angle")
    axes[1].set_ylabel("ξ_I = T_c⁻/T⁻ at heel strike [-]")
    axes[1].legend(fontsize=8)
    for ax in axes[:2]:
        ax.set_xlabel("μ_T = m_T/m_H [-]")
    i = MU_T.index(1.0)
    g = gaits[i]
    t, u = np.asarray(g.t), np.asarray(g.u)
    axes[2].plot(t, u[:, 0], "-", color="C2", label="τ1: torso against stance leg")
    axes[2].plot(t, u[:, 1], "-", color="C3", label="τ2: swing leg against torso")
    axes[2].axhline(0.0, color="k", lw=0.8, ls="--")
    axes[2].set_xlabel("time after heel strike [s]")
    axes[2].set_ylabel(f"hip torques at μ_T = {MU_T[i]:g} [N m] (clockwise > 0)")
    axes[2].legend(fontsize=8)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.suptitle(f"Font & Kövecses 2008's biped with a torso, powered: optimal steps of {STEP_LENGTH:g} m at {SPEED:g} "
                 f"m/s ({gaits[0].problem.segments} Hermite–Simpson segments)")
    return fig


def _table(rows, gaits, strikes, upright, leaning, segments):
    head = (f"Heel strike of the optimal gaits ({segments} segments; torso angle from the vertical, > 0 leaning "
            "forward; v⁻: the swing foot's velocity; ξ_I Font & Kövecses 2008: the impulsive-only state of §4 at this "
            "q4⁻, "
            "upright torso or the gait's torso angle):\n\n"
            "| μ_T | m_H, m_T [kg] | cost | ξ_I | v_Sn⁺ [m/s] | net work, impact loss [J] | iterations | "
            "torso [°], rate [rad/s] | q̇4⁻ [rad/s] | v⁻ (x, y) [m/s] | ξ_I Font & Kövecses 2008 upright, gait's torso "
            "|\n|---|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for r, g, s, a, b in zip(rows, gaits, strikes, upright, leaning):
        m = biped(r["mu_T"])
        lines.append(
            f"| {r['mu_T']:g} | {float(m.m_H):.3f}, {float(m.m_T):.3f} | {r['cost']:.6f} | {r['xi_I']:.6f} | "
            f"{r['trailing_lift_off_speed']:.6f} | {float(g.net_work):.6f}, {float(g.impact_loss):.6f} | "
            f"{int(g.iterations)} | {s['torso_deg']:.2f}, {s['torso_rate']:+.3f} | {s['q4_rate']:.3f} | "
            f"({s['foot_vx']:.3f}, {s['foot_vy']:+.3f}) | {a:.4f}, {b:.4f} |\n")
    return head + "".join(lines)
