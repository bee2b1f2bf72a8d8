r"""Kelly's (2017) five-link biped: the optimal walking step of OptimTraj's ``demo/fiveLinkBiped`` by direct
collocation (:func:`~difimpact.kelly_gait`) on Kelly's mesh and on finer ones until the cost has six significant
digits, beside Kelly's published cost and CasADi/IPOPT's optimum of the same transcription; the finest optimum,
integrated forward under its interpolated torques and mapped through heel strike, closes the periodic gait."""


import diffrax
import jax
import jax.numpy as jnp
import numpy as np

from difimpact import GaitResults, NLPOptions, NLPResults, checks_as_nan, kelly_gait, work_balance

from .._ahead import Ahead
from ..curves import require_finite
from ..experiment import Outcome, check_that, experiment
from ..plotting import panel_grid
from ..references import Reference

KELLY = Reference(("M. Kelly",), "An introduction to trajectory optimization: how to do your own direct collocation",
                  "SIAM Review 59(4), 849–904", 2017, "10.1137/16M1062569")
KELLY_COST = 469.5507  # Kelly 2017, §7: Hermite–Simpson, 6 segments (fmincon, TolFun 1e-3)
# CasADi + IPOPT (MUMPS, exact Hessian, tol 1e-10, bound_relax_factor 0) on the same transcription, each mesh
# warm-started from the previous (benchmarks/kelly_reference.py); trapezoid meshes by segments (grid points − 1).
IPOPT = {("hermite-simpson", 6): 469.5472445039, ("hermite-simpson", 12): 469.6286731363,
         ("hermite-simpson", 24): 469.6478914092, ("hermite-simpson", 48): 469.6493841369,
         ("hermite-simpson", 96): 469.6501075816, ("hermite-simpson", 192): 469.6501110456,
         ("trapezoid", 9): 494.7130633494, ("trapezoid", 24): 473.8648659211, ("trapezoid", 49): 470.7317161532}
HS, TRAPEZOID = "hermite-simpson", "trapezoid"
CONVERGED = 5e-7  # successive Hermite–Simpson costs this close (relative): six significant digits
MAX_SEGMENTS = 384  # the doubling stops here whatever the costs
CLOSURE_TOL = 1e-5  # the forward integration of the finest optimum closes the gait to this
EXACT_BALANCE_RTOL = 1e-8  # actuator work against impact loss on the exact periodic orbit
TRAPEZOID_MESHES, QUICK_TRAPEZOID_MESHES = (9, 24, 49), (9,)


def options(max_steps: int = NLPOptions().max_steps) -> NLPOptions:
    """The solver's options with the iteration limit traced (an array): one program per mesh whatever the limit,
    so that a call limited to one iteration (:func:`compile_ahead`) compiles the program of the solve."""
    return NLPOptions(max_steps=jnp.asarray(max_steps))


def solve(method: str, segments: int, guess=None):
    """Kelly's problem on a mesh (:func:`~difimpact.kelly_gait`, called from Python: its solve is the program the
    library compiles and keeps, once per process and mesh, shared by the tests), from his guess or warm from
    `guess` (an OptimalGait on another mesh)."""
    start = {} if guess is None else {"guess": guess}
    return kelly_gait(method=method, segments=segments, options=options(), throw=False, **start)


def compile_ahead(task: tuple[str, int]) -> None:
    """Compile the solve's program of ``(method, segments)`` by a call limited to one iteration (the result
    discarded), in whichever process :class:`~difimpact.papers._ahead.Ahead` runs it."""
    method, segments = task
    kelly_gait(method=method, segments=segments, options=options(1), throw=False)


def converged(gait) -> bool:
    return bool(gait.result == NLPResults.successful)


@jax.jit
@checks_as_nan()  # the program holds no host callback, so that JAX's compilation cache keeps it
def closure(gait):
    r"""The gait's closure error: ``x(t)`` integrated from the first grid state ``x_0`` over ``[0, T]`` under the
    interpolated torques ``u(t)`` (:meth:`~difimpact.OptimalGait.state`) by Dopri8 (``rtol = atol = 10⁻¹²``,
    stopping at the segments' ends, where ``u`` has kinks), mapped through heel strike and the relabelling,

    $$e = \max\left(|q^K(R\,θ(T)) - q^K(θ_0)|,\ |\dot q^K(\dot θ^+(T)) - \dot q^K(\dot θ_0)|\right)_\infty,$$

    in Kelly's absolute angles ``q^K`` and their rates. Zero for an exact periodic solution of the equations
    of motion; the collocation's error otherwise. NaN where the integration fails (its result, not raised inside the
    program) or a check of the model does."""
    biped, j = gait.problem.biped, gait.theta.shape[1]
    T = gait.t[-1]

    def field(t, x, args):
        acc, _ = biped.dynamics(x[:j], x[j:], gait.state(t)[2])
        return jnp.concatenate([x[j:], acc])

    knots = gait.t[2:-1:2] if gait.problem.method == HS else gait.t[1:-1]
    controller = diffrax.ClipStepSizeController(diffrax.PIDController(rtol=1e-12, atol=1e-12), jump_ts=knots)
    x0 = jnp.concatenate([gait.theta[0], gait.theta_dot[0]])
    # dt0 chosen by the controller: diffrax checks a traced one's sign by a host callback
    sol = diffrax.diffeqsolve(diffrax.ODETerm(field), diffrax.Dopri8(), 0.0, T, None, x0,
                              stepsize_controller=controller, max_steps=100_000, throw=False)
    xT = jnp.where(sol.result == diffrax.RESULTS.successful, sol.ys[-1], jnp.nan)
    rates_plus, _ = biped.heel_strike(xT[:j], xT[j:])
    end, start = kelly_state(gait, biped.relabel(xT[:j]), rates_plus), kelly_state(gait, x0[:j], x0[j:])
    return jnp.max(jnp.abs(jnp.concatenate(end) - jnp.concatenate(start)))


def kelly_state(gait, theta, theta_dot):
    """Kelly's absolute angles ``q1..q5`` and rates of the joint coordinates ``θ``, ``θ̇``
    (:meth:`~difimpact.FiveLinkBiped.to_kelly`)."""
    biped = gait.problem.biped
    return biped.model.to_kelly(biped.configuration(theta), biped.configuration(theta_dot))


def _row(method, segments, gait) -> dict:
    """The CSV row: cost, iterations, impact loss and the heel-strike state in Kelly's angles and order."""
    q, qd = (np.asarray(v) for v in kelly_state(gait, gait.theta[-1], gait.theta_dot[-1]))
    qd_plus = np.asarray(kelly_state(gait, gait.theta[0], gait.theta_dot_plus)[1])
    row = {"method": method, "segments": segments, "cost": float(gait.cost), "iterations": int(gait.iterations),
           "impact_loss": float(gait.impact_loss)}
    row |= {f"q{i + 1}_minus": float(v) for i, v in enumerate(q)}
    row |= {f"qd{i + 1}_minus": float(v) for i, v in enumerate(qd)}
    return row | {f"qd{i + 1}_plus": float(v) for i, v in enumerate(qd_plus)}


def _meshes(quick) -> tuple[list[int], tuple[int, ...]]:
    """The Hermite–Simpson meshes after Kelly's (up to `MAX_SEGMENTS`; the doubling may stop before) and the
    trapezoid meshes."""
    return ([12] if quick else [6 * 2**k for k in range(1, 7) if 6 * 2**k <= MAX_SEGMENTS],
            QUICK_TRAPEZOID_MESHES if quick else TRAPEZOID_MESHES)


def _hermite_simpson(quick, progress, ahead):
    """Kelly's mesh, then doubled (each warm from the last) until two costs agree to `CONVERGED` (quick: 12)."""
    gaits = {6: solve(HS, 6)}
    for n in progress(_meshes(quick)[0]):
        if len(gaits) > 1 and _agree(gaits[n // 4].cost, gaits[n // 2].cost):
            break
        ahead.ready((HS, n))
        gaits[n] = solve(HS, n, gaits[n // 2])
    return gaits


def _agree(a, b) -> bool:
    return abs(float(a) / float(b) - 1) <= CONVERGED


def _trapezoid(quick, ahead):
    gaits, last = {}, None
    for n in _meshes(quick)[1]:
        ahead.ready((TRAPEZOID, n))
        gaits[n] = last = solve(TRAPEZOID, n, last)
    return gaits


@experiment("gait-five-link", "", "§7: J = 469.5507 on the 6-segment Hermite–Simpson mesh",
            "Kelly's five-link biped (RABBIT's parameters; OptimTraj demo/fiveLinkBiped): one step of 0.5 m in "
            "0.7 s minimising ∫Σu² dt, by Hermite–Simpson collocation on Kelly's mesh (6 segments) doubled until "
            "the cost has six significant digits, and by trapezoidal collocation; costs beside Kelly's and "
            "CasADi/IPOPT's on the same transcription, the heel-strike state in Kelly's angles, and the forward "
            "integration of the finest optimum closing the periodic gait.",
            units="cost [N² m² s], impact_loss [J], q*_minus [rad], qd*_minus and qd*_plus [rad/s] (Kelly's "
                  "absolute counter-clockwise angles q1..q5: stance tibia, stance femur, torso, swing femur, swing "
                  "tibia)",
            reference=KELLY)
def five_link(quick, progress):
    hs_meshes, trapezoid_meshes = _meshes(quick)
    # the full run's finest mesh left out: it is solved only where the doubling has not converged before
    tasks = [(HS, n) for n in (hs_meshes if quick else hs_meshes[:-1])] + [(TRAPEZOID, n) for n in trapezoid_meshes]
    with Ahead(tasks, compile_ahead) as ahead:  # the programs compiled on both cores
        hs = _hermite_simpson(quick, progress, ahead)
        trap = _trapezoid(quick, ahead)
    errors = {n: float(closure(g)) for n, g in hs.items()}  # every mesh's: the figure shows their order
    require_finite("the gaits' closure (Dopri8 over the optimal torques)",
                   {f"{n} segments": e for n, e in errors.items()})
    rows = [_row(HS, n, g) for n, g in hs.items()] + [_row(TRAPEZOID, n, g) for n, g in trap.items()]
    checks, table = _checks(quick, hs, trap, errors), _table(rows, errors)
    if not quick:  # the exact orbit's balance (a compile of the hybrid Newton): the full run's
        balance, how = _exact_balance(hs[max(hs)])
        checks, table = checks + [_balance_check(max(hs), balance, how)], table + _balance_table(max(hs), balance, how)
    return Outcome(rows, {"kelly_mesh_convergence": _convergence_figure(rows, errors),
                          "kelly_optimal_step": _step_figure(hs[max(hs)])}, checks, table)


OPEN_LOOP = "its torques replayed open loop"
TRACKED = "tracked as virtual constraints, kp = 1000 N m/rad, kd = 100 N m s/rad"


def _exact_balance(gait):
    """:func:`~difimpact.work_balance` on the exact periodic orbit next to `gait`: under its torques open loop,
    or, wherever Newton finds no open-loop orbit, under the tracking controller of the stance
    angle (stable at these gains). The open-loop stride map's multipliers reach ~10² (the unactuated stance ankle),
    so on a coarse mesh (12 segments: 0.5 rad/s after one step) its discretisation error carries Newton away; the
    balance holds on any periodic orbit on level ground."""
    b = work_balance(gait, throw=False)
    if b.result == GaitResults.successful:
        return b, OPEN_LOOP
    return work_balance(gait, kp=1000.0, kd=100.0, clock="phase", throw=False), TRACKED


def _balance_check(segments, b, how):
    """The energy balance on the exact periodic orbit next to the optimum of `segments` segments
    (:func:`~difimpact.work_balance`), beside the mesh's own (Simpson's rule)."""
    ok = bool(b.result == GaitResults.successful) and float(b.relative_error) <= EXACT_BALANCE_RTOL
    mesh = abs(float(b.mesh_work) / float(b.impact_loss) - 1)
    return check_that(
        "Energy balance on the exact periodic orbit under the optimal torques: ∫Σuω dt = T⁻ − T⁺ (to "
        f"{EXACT_BALANCE_RTOL:g}; Hermite–Simpson, {segments} segments)",
        "work–energy theorem over a periodic step on level ground",
        f"W = {float(b.work):.10f} J, T⁻ − T⁺ = {float(b.impact_loss):.10f} J: relative difference "
        f"{float(b.relative_error):.1e} (the mesh's Simpson quadrature: {mesh:.1e}); the orbit starts "
        f"{float(b.distance):.1e} from the collocated start; the optimum {how}"
        + ("" if b.result == GaitResults.successful else f"; {b.result}"), ok)


def _balance_table(segments, b, how):
    return (f"\nEnergy balance on the exact periodic orbit next to the {segments}-segment optimum ({how}; "
            f"difimpact.work_balance): actuator work {float(b.work):.10f} J, impact loss {float(b.impact_loss):.10f} "
            f"J, change of T + V to heel strike {float(b.energy_change):.10f} J, "
            f"relative difference {float(b.relative_error):.1e}; the orbit's start {float(b.distance):.1e} from "
            f"the collocated start, step time {float(b.step_time):.6f} s; Simpson's rule on the mesh: "
            f"{float(b.mesh_work):.10f} J.\n")


def _checks(quick, hs, trap, errors):
    finest, kelly = max(hs), float(hs[6].cost)
    costs = [float(hs[n].cost) for n in sorted(hs)]
    change = abs(costs[-1] / costs[-2] - 1)
    solved = [f"{m} {n}" for m, gaits in ((HS, hs), (TRAPEZOID, trap)) for n, g in gaits.items() if not converged(g)]
    ipopt = max(abs(float(g.cost) / IPOPT[m, n] - 1) for m, gaits in ((HS, hs), (TRAPEZOID, trap))
                for n, g in gaits.items() if (m, n) in IPOPT)
    checks = [
        check_that("Optimal cost on Kelly's mesh (Hermite–Simpson, 6 segments), to 1e-4 (Kelly's fmincon stopped "
                   "at TolFun 1e-3)", f"J = {KELLY_COST} N² m² s", f"J = {kelly:.10f} N² m² s (relative difference "
                   f"{abs(kelly / KELLY_COST - 1):.1e})", abs(kelly / KELLY_COST - 1) <= 1e-4),
        check_that("Every mesh solved to the interior-point method's tolerance", "—",
                   "all converged" if not solved else f"not converged: {', '.join(solved)}", not solved),
        check_that("The same optimum as CasADi/IPOPT on the same transcription, every mesh (to 1e-9)",
                   "IPOPT (tol 1e-10)", f"largest relative difference {ipopt:.1e}", ipopt <= 1e-9),
    ]
    if quick:
        ratio = errors[6] / errors[12]
        return checks + [check_that(
            "The forward integration closes the gait better on the finer mesh (quick run: 6 and 12 segments)",
            "collocation error O(h³⁻⁴)", f"closure error {errors[6]:.1e} (6), {errors[12]:.1e} (12), ratio "
            f"{ratio:.1f}", ratio > 4)]
    return checks + [
        check_that(f"Mesh convergence: two successive Hermite–Simpson costs agree to {CONVERGED:g} (six digits), "
                   f"meshes doubled from 6 up to {MAX_SEGMENTS} segments", "six significant digits",
                   f"J = {costs[-1]:.10f} at {finest} segments, {change:.1e} from {finest // 2}",
                   change <= CONVERGED),
        check_that(f"Forward integration of the finest optimum ({finest} segments; diffrax Dopri8, rtol = atol = "
                   f"1e-12) through heel strike returns to its initial state (to {CLOSURE_TOL:g})", "periodic gait",
                   f"closure error {errors[finest]:.1e} rad, rad/s", errors[finest] <= CLOSURE_TOL),
    ]


def _convergence_figure(rows, errors):
    hs = [r for r in rows if r["method"] == HS]
    finest = hs[-1]["cost"]
    curves = []
    for method, style in ((HS, {"color": "C0", "marker": "o"}), (TRAPEZOID, {"color": "C1", "marker": "s"})):
        pts = [(r["segments"], abs(r["cost"] - finest)) for r in rows if r["method"] == method and
               r["cost"] != finest]
        if pts:
            n, d = np.array(pts).T
            curves.append((n, d, method, style))
    n = np.array(sorted(errors))
    panels = [(f"|J − J({hs[-1]['segments']} HS segments)| [N² m² s]", curves),
              ("closure error [rad, rad/s]", [(n, [errors[k] for k in n], HS, {"color": "C0", "marker": "o"})])]
    fig = panel_grid(panels, "Kelly's five-link biped: mesh convergence of the optimal cost and closure of the "
                     "integrated gait", "segments")
    for ax in fig.axes[:2]:
        ax.set_xscale("log")
        ax.set_yscale("log")
    return fig


def _step_figure(gait):
    """Torques against time, and the walker drawn at seven instants of the step."""
    import matplotlib.pyplot as plt

    from difimpact import draw_model

    t = np.linspace(0.0, float(gait.step_time), 201)
    u = np.asarray(jax.vmap(gait.state)(jnp.asarray(t))[2])
    fig, (ax, stick) = plt.subplots(1, 2, figsize=(10.0, 4.2), layout="constrained")
    for k, name in enumerate(("stance knee", "stance hip", "swing hip", "swing knee")):
        ax.plot(t, -u[:, k], label=f"{name} (Kelly's u{k + 2})")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("torque, Kelly's sign [N m]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    model, biped = gait.problem.biped.model, gait.problem.biped
    for i, s in enumerate(np.linspace(0.0, float(gait.step_time), 7)):
        theta = np.asarray(gait.state(jnp.asarray(s))[0])
        draw_model(model, np.asarray(biped.configuration(jnp.asarray(theta))), ax=stick, labels=False,
                   colour=plt.cm.viridis(i / 6))
    stick.set_xlim(-0.55, 0.75)
    stick.set_ylim(-0.1, 1.55)
    stick.set_title("the optimal step, t = 0 (dark) to T (light)", fontsize=10)
    fig.suptitle(f"Kelly's five-link biped: optimal step (Hermite–Simpson, {gait.problem.segments} segments)")
    return fig


def _table(rows, errors):
    head = ("Ours beside CasADi/IPOPT's optimum of the same transcription (MUMPS, exact Hessian, tol 1e-10; "
            "benchmarks/kelly_reference.py) and Kelly's published cost on his mesh (fmincon, TolFun 1e-3): "
            f"J = {KELLY_COST} N² m² s. Closure error: the optimum integrated forward through heel strike.\n\n"
            "| method | segments | grid points | J, ours [N² m² s] | J, IPOPT | relative difference | iterations | "
            "closure error |\n|---|---|---|---|---|---|---|---|\n")
    lines = []
    for r in rows:
        m, n = r["method"], r["segments"]
        ref = IPOPT.get((m, n))
        diff = f"{abs(r['cost'] / ref - 1):.1e}" if ref else "—"
        err = f"{errors[n]:.1e}" if m == HS and n in errors else "—"
        lines.append(f"| {m} | {n} | {2 * n + 1 if m == HS else n + 1} | {r['cost']:.10f} | "
                     f"{f'{ref:.10f}' if ref else '—'} | {diff} | {r['iterations']} | {err} |\n")
    return head + "".join(lines)
