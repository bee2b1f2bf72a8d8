"""Kuo's (2002) actively powered simplest walker on level ground: pre-emptive push-off against an impulsive
stance-leg torque after heel strike, at one speed over a range of step lengths."""

import jax
import jax.numpy as jnp
import numpy as np
import optimistix as optx

from difimpact import SimplestWalker, impact, pushoff_impact

from ..experiment import Outcome, check_that, experiment
from ..plotting import panel_grid
from ..references import Reference

KUO = Reference(("A. D. Kuo",), "Energetics of actively powered locomotion using the simplest walking model",
                "Journal of Biomechanical Engineering 124(1), 113–120", 2002, "10.1115/1.1427703")
SPEED = 0.4  # average walking speed in √(gL) (1.25 m/s for a 1 m leg)
NODES = 32  # Gauss–Legendre nodes of the step time: the integrand is analytic, 16 already give round-off


def _step_time(v, alpha, nodes=NODES):
    r"""Duration of the stance of an inverted pendulum (g = L = 1) from ``−α`` to ``α`` with ``θ̇ = v`` at both
    ends: ``T = 2∫_0^α dθ / \sqrt{v² + 2(\cos α − \cos θ)}`` (energy conservation), by `nodes`-point
    Gauss–Legendre."""
    x, w = (jnp.asarray(a) for a in np.polynomial.legendre.leggauss(nodes))
    theta = 0.5 * alpha * (x + 1)
    return alpha * jnp.sum(w / jnp.sqrt(v**2 + 2 * (jnp.cos(alpha) - jnp.cos(theta))))


@jax.jit
def _heel_strike_speed(s, alpha):
    """The pendulum speed ``v`` at heel strike of the gait with average speed ``SPEED = s / T(v)``, by bisection
    between the slowest pendulum that passes over the top (``v² = 2(1 − cos α)``, ``T → ∞``) and one whose
    step time is bounded by ``2α / √(v² − v_min²)``. NaN where the bisection fails or its speed's average speed is
    off by more than ``10⁻⁹``: the program holds no host callback, so that JAX's compilation cache keeps it."""
    v_min = jnp.sqrt(2 * (1 - jnp.cos(alpha)))
    upper = jnp.sqrt(v_min**2 + (2 * alpha * SPEED / s) ** 2) * 1.01
    residual = lambda v, _: s / _step_time(v, alpha) - SPEED
    # flip=False: the residual rises from −SPEED (T → ∞) to > 0 (by the bound), so optimistix traces no check of it
    sol = optx.root_find(residual, optx.Bisection(rtol=1e-15, atol=1e-15, flip=False), upper, max_steps=256,
                         options={"lower": v_min * (1 + 1e-12), "upper": upper}, throw=False)
    ok = (sol.result == optx.RESULTS.successful) & (jnp.abs(residual(sol.value, None)) <= 1e-9 * SPEED)
    return jnp.where(ok, sol.value, jnp.nan)  # raised by the caller


def _steady_pushoff(walker, q, qdot, v, max_steps=8):
    """The push-off ``P`` whose collision restores the hip speed ``v``: secant iterations on
    ``f(P) = |v_H⁺(P)| − v`` through :func:`~difimpact.pushoff_impact`, from ``P = 0`` and ``P = v/10`` (``f`` is
    affine in ``P`` while the hip leaves normal to the leading leg, so one secant step lands on the root and the
    next confirms it). Returns ``(P, its solution)``."""
    solve = lambda P: pushoff_impact(walker, q, qdot, P, massless="keep")
    residual = lambda sol: float(jnp.linalg.norm(walker.point_velocity(q, sol.qdot_plus, "H")) - v)
    P0, P1 = jnp.zeros(()), 0.1 * v
    f0, sol = residual(solve(P0)), solve(P1)
    for _ in range(max_steps):
        f1 = residual(sol)
        if abs(f1) <= 1e-15 * v or f1 == f0:
            break
        P0, P1, f0 = P1, P1 - f1 * (P1 - P0) / (f1 - f0), f1
        sol = solve(P1)
    return P1, sol


def _gait(s):
    """Both powered gaits of step length ``s``: the point-mass walker at heel strike (inter-leg angle ``2α``,
    ``s = 2 sin α``, hip speed ``v`` normal to the trailing leg), the push-off that restores ``v`` after the
    collision, and the collision without push-off (the torque restores ``T⁻ − T⁺`` after it)."""
    s = jnp.asarray(s, float)
    alpha = jnp.arcsin(s / 2)
    v = _heel_strike_speed(s, alpha)
    if not np.isfinite(float(v)):
        raise RuntimeError(f"Kuo 2002: no heel-strike speed found for the step length {float(s)} (bisection failed)")
    walker = SimplestWalker(0.0)
    q = walker.stance_configuration(jnp.stack([alpha, 2 * alpha]))
    qdot = jnp.stack([0.0, 0.0, v, 0.0])  # the swing leg turns with the stance leg: its foot approaches
    P, pushed = _steady_pushoff(walker, q, qdot, v)
    passive = impact(walker, q, qdot, stick=("swing_foot",), massless="keep")
    speed_after = jnp.linalg.norm(walker.point_velocity(q, pushed.qdot_plus, "H"))
    return {"alpha": alpha, "v": v, "P": P, "speed_after": speed_after, "pushoff_work": pushed.pushoff_work,
            "collision_loss": pushed.loss, "torque_work": passive.T_minus - passive.T_plus,
            "passive_loss": passive.loss, "step_time": _step_time(v, alpha),
            "step_time_fine": _step_time(v, alpha, 2 * NODES)}


def _rel(a, b):
    return float(np.max(np.abs(np.asarray(a) / np.asarray(b) - 1)))


@experiment("gait-kuo-pushoff", "", "push-off 4× cheaper than a stance-leg torque",
            "Kuo's powered simplest walker (point mass on massless legs, M = g = L = 1) on level ground at speed "
            "V = 0.4 over step lengths s = 0.1…0.8: work per step of a pre-emptive push-off along the trailing leg "
            "(the library's push-off map, P found so that the collision restores the speed) against an impulsive "
            "stance-leg torque after heel strike (the library's collision without push-off), and their ratio.",
            units="step_length [L], speed [√(gL)], pushoff_work [M g L], torque_work [M g L], collision_loss [M g L], "
                  "ratio [-]",
            reference=KUO)
def kuo_pushoff(quick, progress):
    steps = np.array([0.2, 0.5, 0.8]) if quick else np.round(np.arange(1, 9) / 10, 10)
    gaits = [{k: float(x) for k, x in _gait(s).items()} for s in progress(steps)]
    rows = [{"step_length": float(s), "speed": SPEED, "pushoff_work": g["pushoff_work"],
             "torque_work": g["torque_work"], "collision_loss": g["collision_loss"],
             "ratio": g["torque_work"] / g["pushoff_work"]} for s, g in zip(steps, gaits)]
    return Outcome(rows, {"kuo_pushoff": _figure(steps, rows)}, _checks(steps, rows, gaits), _table(rows, gaits))


def _checks(steps, rows, gaits):
    alpha, v, P = (np.array([g[k] for g in gaits]) for k in ("alpha", "v", "P"))
    ratio = np.array([r["ratio"] for r in rows])
    closed = 4 * (1 - steps**2 / 4) ** 2  # 4 cos⁴ α with sin α = s/2
    err_ratio = _rel(ratio, closed)
    err_push = _rel([r["pushoff_work"] for r in rows], [r["collision_loss"] for r in rows])
    err_torque = _rel([r["torque_work"] for r in rows], [g["passive_loss"] for g in gaits])
    err_P = _rel(P, v * np.tan(alpha))
    step_time = np.array([g["step_time"] for g in gaits])
    err_speed = max(_rel([g["speed_after"] for g in gaits], v), _rel(steps / step_time, SPEED))
    err_T = _rel(step_time, [g["step_time_fine"] for g in gaits])
    intercept = np.polyfit(steps**2, ratio, 2)[-1] if len(steps) >= 3 else float("nan")
    return [
        check_that("torque_work / pushoff_work = sin² 2α / tan² α = 4 cos⁴ α = 4 (1 − s²/4)² = 4 − 2 s² + s⁴/4, "
                   "whatever the speed (to 1e-9)", "Kuo 2002 (impulsive push-off vs impulsive torque)",
                   f"largest relative error {err_ratio:.1e} over {len(steps)} step lengths", err_ratio < 1e-9),
        check_that("Push-off is 4× cheaper than the stance-leg torque for short steps (ratio → 4 as s → 0)",
                   "Kuo 2002", f"ratio {ratio[0]:.6f} at s = {steps[0]:g}, {ratio[-1]:.6f} at s = {steps[-1]:g}, "
                   f"decreasing; a quadratic in s² through the rows gives 4 {intercept - 4:+.1e} at s = 0",
                   abs(intercept - 4) < 1e-9 and np.all(np.diff(ratio) < 0) and np.all(ratio < 4)),
        check_that("Energy balance, push-off gait: push-off work = collision loss (to 1e-8)", "steady gait",
                   f"largest relative error {err_push:.1e}", err_push < 1e-8),
        check_that("Energy balance, torque gait: torque work T⁻ − T⁺ = collision loss T_c⁻ (to 1e-8)", "steady gait",
                   f"largest relative error {err_torque:.1e}", err_torque < 1e-8),
        check_that("Steady push-off P = M v tan α, restoring v⁺ = v cos 2α + P sin 2α = v (to 1e-9)",
                   "Kuo 2002", f"largest relative error {err_P:.1e}", err_P < 1e-9),
        check_that("Each gait walks at V = s / T(v) = 0.4 and its post-collision speed is v (to 1e-12); the step "
                   f"time's quadrature ({NODES} nodes) agrees with {2 * NODES} nodes (to 1e-13)", "pendulum stance",
                   f"largest relative errors {err_speed:.1e} (speed), {err_T:.1e} (step time)",
                   err_speed < 1e-12 and err_T < 1e-13),
    ]


def _figure(steps, rows):
    fine = np.linspace(0.0, steps[-1], 100)
    col = lambda k: np.array([r[k] for r in rows])
    dots = {"color": "k", "ls": "none", "marker": "o"}
    panels = [
        ("torque_work / pushoff_work [-]",
         [(fine, 4 * (1 - fine**2 / 4) ** 2, "closed form 4 cos⁴ α", {"color": "0.5", "ls": "-"}),
          (steps, col("ratio"), "difimpact", dots)]),
        ("work per step [M g L]",
         [(steps, col("torque_work"), "stance-leg torque after heel strike", {"color": "C0", "marker": "s"}),
          (steps, col("pushoff_work"), "pre-emptive push-off (= its collision loss)", {"color": "C1", "marker": "o"})]),
    ]
    return panel_grid(panels, f"Kuo's powered simplest walker at V = {SPEED} √(gL): push-off vs torque",
                      "step length s [L]")


def _table(rows, gaits):
    head = ("| s [L] | α [rad] | v [√(gL)] | P [M√(gL)] | push-off work | torque work | collision loss | ratio | 4 "
            "cos⁴ α |\n|---|---|---|---|---|---|---|---|---|\n")
    return head + "".join(
        f"| {r['step_length']:.1f} | {g['alpha']:.6f} | {g['v']:.10f} | {g['P']:.10f} | {r['pushoff_work']:.6e} | "
        f"{r['torque_work']:.6e} | {r['collision_loss']:.6e} | {r['ratio']:.12f} | "
        f"{4 * np.cos(g['alpha']) ** 4:.12f} |\n" for r, g in zip(rows, gaits))
