"""An independent reference solution of Kelly's five-link biped trajectory optimisation, in CasADi + IPOPT.

What it is: the walking-gait problem of OptimTraj's ``demo/fiveLinkBiped`` (Matthew P. Kelly, MIT licence;
M. Kelly, "An Introduction to Trajectory Optimization: How to Do Your Own Direct Collocation", SIAM Review
59(4), 2017, section 7 and appendix), transcribed by Hermite-Simpson (separated form) or trapezoidal direct
collocation exactly as OptimTraj does, and solved by IPOPT (exact Hessian of the Lagrangian from CasADi's
algorithmic differentiation, MUMPS). A test and benchmark aid only: the library ``difimpact`` never imports
CasADi.

Sources, read from the OptimTraj mirror (commit 27bcf50697a0a8ec95fbe729b418d0fd72b66f3b):
``demo/fiveLinkBiped/{MAIN,getPhysicalParameters,Derive_Equations,stepConstraint,pathConstraint,
cst_heelStrike,cst_footVel,cst_stepLength,obj_torqueSquared,dynamics}.m`` and ``hermiteSimpson.m``,
``trapezoid.m``, ``directCollocation.m``, ``collectConstraints.m``.

The problem (MAIN.m):

* state x = [q1..q5, dq1..dq5], absolute link angles (stance tibia, stance femur, torso, swing femur,
  swing tibia), counter-clockwise positive, zero = link vertical (legs down, torso up); controls u1..u5,
  u1 (stance ankle) fixed to 0 by its bounds; u_k is the torque of link k-1 (the ground for k = 1) on
  link k, so the generalised forces on the absolute angles are [u1-u2, u2-u3, u3-u4, u4-u5, u5];
* fixed step time T (0.7 s) and step length (0.5 m); bounds |q| <= pi/2, |dq| <= 10, |u| <= 100;
* path constraints q1 - q2 <= 0 and q5 - q4 <= 0 at every grid point (pathConstraint.m);
* boundary constraints (stepConstraint.m): heel-strike periodicity q0 = qF[5 4 3 2 1] and dq0 = the
  heel-strike map of (qF, dqF) (cst_heelStrike.m: a plastic impact at the swing foot, no impulse at the old
  stance foot, which lifts off); the swing foot at (step length, 0) at tF (cst_stepLength.m); its vertical
  velocity >= 0 at t0 and <= 0 at tF (cst_footVel.m);
* cost: integral of sum(u^2) dt (obj_torqueSquared.m) by the method's quadrature, dt * sum_i w_i L_i;
* Hermite-Simpson (hermiteSimpson.m, separated): nGrid = 2 nSegment + 1 points, midpoints are decision
  variables, dt = T/(nGrid-1), defects xMid - (xLow+xUpp)/2 - dt (fLow-fUpp)/4 and
  xUpp - xLow - dt (fLow + 4 fMid + fUpp)/3, Simpson weights 1/3, 4/3, 2/3, ..., 4/3, 1/3;
  trapezoid (trapezoid.m): nGrid points, defects x_{k+1} - x_k - dt/2 (f_k + f_{k+1}), weights 1/2, 1, ..., 1/2;
* initial guess (MAIN.m): states linear in time from q0 = [-0.3, 0.7, 0, -0.5, -0.6] to its left-right flip,
  dq = (qF - q0)/T constant, zero torques.

What differs from OptimTraj on purpose: time is not a decision variable (Kelly fixes t0 = 0 and tF = T by
equal bounds, so the feasible set is the same); the heel-strike rates are imposed as dq0 = H(qF, dqF) with
H written as a function of the pre-impact state only (Kelly writes M(q0) dq0 = F(qF, dqF); the two agree
wherever q0 = qF[5 4 3 2 1], so the solutions agree, the multipliers of those rows do not).

The equations are derived here from Kelly's kinematic definitions (P_i, G_i of Derive_Equations.m) and
nothing else: single stance by Lagrange's equations (M from the link Jacobians, Coriolis terms from
casadi.jacobian), heel-strike by impulse-momentum in extended coordinates (hip-free base, a plastic
contact impulse at the swing foot) followed by the relabelling of the links. ``python
benchmarks/_kelly_ipopt.py`` checks them against OptimTraj's generated code translated to NumPy
(``benchmarks/_kelly_autogen.py``) at random states and parameters.

API::

    prob = kelly_problem(method="hermite-simpson", segments=6, step_length=0.5, step_time=0.7, m_torso=20.0)
    sol = prob.solve()                       # MAIN.m's guess, the problem's own parameters, tol 1e-10
    sol = prob.solve(params={"step_length": 0.6, "m_torso": 25.0}, guess=sol)   # no rebuild
    sol["cost"], sol["states"], sol["controls"], sol["iterations"], sol["status"], sol["ipopt_time_s"]

IPOPT options: print_level 0, linear_solver mumps, exact Hessian (CasADi's default), tol as asked (1e-10),
max_iter 3000, bound_relax_factor 0 (IPOPT's default 1e-8 lets the active knee limit be violated by 1e-8 and
lowers the cost by about 2e-7); the rest IPOPT's defaults, ``ipopt_options`` overrides any of them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import casadi as ca
import numpy as np

N_X, N_U, N_Q = 10, 5, 5

#: Parameter vector of the NLP (casadi parameter ``p``), in this order. Physical ones as getPhysicalParameters.m.
PARAM_NAMES = (
    ("step_length", "step_time")
    + tuple(f"m{k}" for k in range(1, 6))
    + tuple(f"I{k}" for k in range(1, 6))
    + tuple(f"l{k}" for k in range(1, 6))
    + tuple(f"c{k}" for k in range(1, 6))
    + ("g",)
)
#: Other names accepted for parameters.
PARAM_ALIASES = {"m_torso": "m3", "T": "step_time", "stepLength": "step_length", "stepTime": "step_time"}

_RABBIT = {  # getPhysicalParameters.m (RABBIT: Westervelt, Grizzle & Koditschek 2003)
    "m1": 3.2, "m2": 6.8, "m3": 20.0, "m4": 6.8, "m5": 3.2,
    "I1": 0.93, "I2": 1.08, "I3": 2.22, "I4": 1.08, "I5": 0.93,
    "l1": 0.4, "l2": 0.4, "l3": 0.625, "l4": 0.4, "l5": 0.4,
    "c1": 0.128, "c2": 0.163, "c3": 0.2, "c4": 0.163, "c5": 0.128,
    "g": 9.81,
}  # fmt: skip

METHODS = ("hermite-simpson", "trapezoid")

_LEG_PAIRS = [(f"{s}{a}", f"{s}{b}") for s in "mIlc" for a, b in ((1, 5), (2, 4))]


def _check_symmetric(pv: np.ndarray) -> np.ndarray:
    """The legs must be alike (m1 = m5, m2 = m4, and the same for I, l, c). Kelly's heel-strike
    (Derive_Equations.m) gives each link the parameters of its role (after the swap the new stance tibia
    carries m1, I1, c1), this module's the parameters of the physical link (m5, ...); the two agree, and a
    one-step periodic gait exists, only for identical legs, as RABBIT's."""
    idx = {k: i for i, k in enumerate(PARAM_NAMES)}
    for a, b in _LEG_PAIRS:
        if pv[idx[a]] != pv[idx[b]]:
            raise ValueError(f"{a} = {pv[idx[a]]} but {b} = {pv[idx[b]]}: the two legs must be alike "
                             "(set both members of each pair: m1/m5, m2/m4, I1/I5, I2/I4, l1/l5, l2/l4, c1/c5, c2/c4)")
    return pv


def default_params(step_length: float = 0.5, step_time: float = 0.7, m_torso: float = 20.0, **physical) -> dict:
    """Kelly's parameters (MAIN.m, getPhysicalParameters.m) as a dict, with overrides."""
    p = dict(_RABBIT, step_length=step_length, step_time=step_time)
    p["m3"] = m_torso
    for k, v in physical.items():
        k = PARAM_ALIASES.get(k, k)
        if k not in p:
            raise KeyError(f"unknown parameter {k!r}; known: {PARAM_NAMES} and aliases {tuple(PARAM_ALIASES)}")
        p[k] = float(v)
    return p


# --------------------------------------------------------------------------------------------------------
# Model, derived from the kinematic definitions alone.


def _unit(q, down: bool):
    """Kelly's e_i: a link at absolute angle q (CCW positive, zero vertical) points up (e1, e2, e3) or
    down (e4, e5) from its parent joint."""
    e = ca.vertcat(-ca.sin(q), ca.cos(q))
    return -e if down else e


def _kinematics(q, par):
    """Joint positions P0..P5 and link centres of mass G1..G5 (Derive_Equations.m), stance foot P0 at 0."""
    e = [_unit(q[0], False), _unit(q[1], False), _unit(q[2], False), _unit(q[3], True), _unit(q[4], True)]
    P0 = ca.DM.zeros(2)
    P1 = P0 + par["l1"] * e[0]
    P2 = P1 + par["l2"] * e[1]
    P3 = P2 + par["l3"] * e[2]
    P4 = P2 + par["l4"] * e[3]
    P5 = P4 + par["l5"] * e[4]
    G = [
        P1 - par["c1"] * e[0],
        P2 - par["c2"] * e[1],
        P3 - par["c3"] * e[2],
        P2 + par["c4"] * e[3],
        P4 + par["c5"] * e[4],
    ]
    return [P0, P1, P2, P3, P4, P5], G


def _mass_matrix(J, par):
    M = ca.diag(ca.vertcat(*[par[f"I{k}"] for k in range(1, 6)]))
    for k in range(5):
        M = M + par[f"m{k + 1}"] * (J[k].T @ J[k])
    return M


def _build_model(p_sym):
    """CasADi SX functions of the model: dynamics f(x, u, p), heel-strike map, swing-foot position and
    velocity."""
    par = dict(zip(PARAM_NAMES, ca.vertsplit(p_sym)))
    q = ca.SX.sym("q", N_Q)
    dq = ca.SX.sym("dq", N_Q)
    u = ca.SX.sym("u", N_U)
    P, G = _kinematics(q, par)
    J = [ca.jacobian(Gi, q) for Gi in G]
    M = _mass_matrix(J, par)
    # Lagrange: M ddq + d/dt(M) dq - dT/dq + dV/dq = Q, with d/dt(M) dq = jacobian(M dq, q) dq.
    T_kin = 0.5 * ca.dot(dq, M @ dq)
    V = sum(par[f"m{k + 1}"] * par["g"] * G[k][1] for k in range(5))
    bias = ca.jacobian(M @ dq, q) @ dq - ca.gradient(T_kin, q) + ca.gradient(V, q)
    Q = ca.vertcat(u[0] - u[1], u[1] - u[2], u[2] - u[3], u[3] - u[4], u[4])
    ddq = ca.solve(M, Q - bias)
    x = ca.vertcat(q, dq)
    f = ca.Function("kelly_dynamics", [x, u, p_sym], [ca.vertcat(dq, ddq)], ["x", "u", "p"], ["dx"])

    # Swing foot: position and velocity.
    P5 = P[5]
    dP5 = ca.jacobian(P5, q) @ dq
    foot = ca.Function("kelly_swing_foot", [x, p_sym], [P5, dP5], ["x", "p"], ["P5", "dP5"])

    # Heel-strike: base coordinates r = (b, q), b = position of the (old) stance foot. Plastic impulse at
    # the swing foot: M_e (v+ - v-) = J5' Lambda, J5 v+ = 0, v- = (0, 0, dq-); the old stance foot is free.
    J_e = [ca.horzcat(ca.SX.eye(2), Ji) for Ji in J]
    M_e = ca.diag(ca.vertcat(0, 0, *[par[f"I{k}"] for k in range(1, 6)]))
    for k in range(5):
        M_e = M_e + par[f"m{k + 1}"] * (J_e[k].T @ J_e[k])
    J5 = ca.horzcat(ca.SX.eye(2), ca.jacobian(P5, q))
    K = ca.blockcat([[M_e, -J5.T], [J5, ca.SX.zeros(2, 2)]])
    v_minus = ca.vertcat(0, 0, dq)
    sol = ca.solve(K, ca.vertcat(M_e @ v_minus, ca.SX.zeros(2)))
    dq_after = sol[2:7]
    impulse = sol[7:9]
    # Relabel: the swing leg becomes the stance leg. Absolute angles keep their values (e1(q) = -e5(q),
    # e2(q) = -e4(q)), so new (q1..q5) = old (q5..q1), and the same for the rates.
    flip = list(range(4, -1, -1))
    hs = ca.Function(
        "kelly_heel_strike", [x, p_sym], [ca.vertcat(q[flip], dq_after[flip]), impulse], ["x_minus", "p"],
        ["x_plus", "impulse"],
    )
    return f, hs, foot


# --------------------------------------------------------------------------------------------------------
# Transcription and solve.


@dataclass
class KellyProblem:
    """The NLP of one mesh, built once; ``solve`` re-solves for other parameters and guesses without
    rebuilding (one IPOPT instance per tolerance, cached)."""

    method: str
    n_grid: int
    params: dict
    u_max: float = 100.0
    dq_max: float = 10.0
    q_max: float = np.pi / 2
    ipopt_options: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        n = self.n_grid
        self.p_sym = ca.SX.sym("p", len(PARAM_NAMES))
        self.f_dyn, self.heel_strike, self.swing_foot = _build_model(self.p_sym)
        z = ca.MX.sym("z", n * (N_X + N_U))
        p = ca.MX.sym("p", len(PARAM_NAMES))
        Z = ca.reshape(z, N_X + N_U, n)  # column k = [x_k; u_k] (Kelly's packing, without t0, tF)
        X, U = Z[:N_X, :], Z[N_X:, :]
        step_length, step_time = p[0], p[1]
        dt = step_time / (n - 1)
        F = self.f_dyn.map(n)(X, U, p)

        if self.method == "hermite-simpson":
            lo, mid, up = range(0, n - 2, 2), range(1, n - 1, 2), range(2, n, 2)
            xl, xm, xu = X[:, list(lo)], X[:, list(mid)], X[:, list(up)]
            fl, fm, fu = F[:, list(lo)], F[:, list(mid)], F[:, list(up)]
            d_mid = xm - (xu + xl) / 2 - dt * (fl - fu) / 4
            d_int = xu - xl - dt * (fu + 4 * fm + fl) / 3
            cols = [None] * (n - 1)
            for j, k in enumerate(lo):
                cols[k] = d_int[:, j]
            for j, k in enumerate(mid):
                cols[k] = d_mid[:, j]
            defects = ca.horzcat(*cols)
            w = np.full(n, 2.0 / 3.0)
            w[1::2] = 4.0 / 3.0
            w[[0, -1]] = 1.0 / 3.0
        else:
            defects = X[:, 1:] - X[:, :-1] - 0.5 * dt * (F[:, :-1] + F[:, 1:])
            w = np.ones(n)
            w[[0, -1]] = 0.5
        self.weights = w
        cost = dt * ca.sum2(ca.DM(w).T * ca.sum1(U**2))

        x0, xF = X[:, 0], X[:, -1]
        x_plus, _ = self.heel_strike(xF, p)
        P5F, _ = self.swing_foot(xF, p)
        _, dP50 = self.swing_foot(x0, p)
        _, dP5F = self.swing_foot(xF, p)
        g_parts = [
            ("defects", ca.vec(defects), 0.0, 0.0),  # (10, nGrid-1) column-major, as collectConstraints.m
            ("heel_strike", x0 - x_plus, 0.0, 0.0),  # [q0 - qF(5:-1:1); dq0 - H(qF, dqF)]
            ("step_length", P5F - ca.vertcat(step_length, 0), 0.0, 0.0),
            ("path", ca.vec(ca.vertcat(X[0, :] - X[1, :], X[4, :] - X[3, :])), -np.inf, 0.0),
            ("foot_vel", ca.vertcat(-dP50[1], dP5F[1]), -np.inf, 0.0),
        ]
        self._g_slices, lbg, ubg, gs, i = {}, [], [], [], 0
        for name, expr, lo_, up_ in g_parts:
            m = expr.shape[0]
            self._g_slices[name] = slice(i, i + m)
            i += m
            gs.append(expr)
            lbg.append(np.full(m, lo_))
            ubg.append(np.full(m, up_))
        g = ca.vertcat(*gs)
        self.lbg, self.ubg = np.concatenate(lbg), np.concatenate(ubg)

        lbx = np.concatenate([np.full(N_Q, -self.q_max), np.full(N_Q, -self.dq_max), np.full(N_U, -self.u_max)])
        ubx = -lbx
        lbx[N_X], ubx[N_X] = 0.0, 0.0  # stance-ankle motor disabled
        self.lbx, self.ubx = np.tile(lbx, n), np.tile(ubx, n)
        self.nlp = {"x": z, "p": p, "f": cost, "g": g}
        self.n_z, self.n_g = z.shape[0], g.shape[0]
        self._fg = ca.Function("kelly_fg", [z, p], [cost, g])
        self._solvers = {}

    # ---- helpers ----------------------------------------------------------------------------------------
    @property
    def segments(self) -> int:
        return (self.n_grid - 1) // 2 if self.method == "hermite-simpson" else self.n_grid - 1

    def param_vector(self, params=None) -> np.ndarray:
        """The problem's parameters, updated by ``params`` (a dict, names or aliases as ``PARAM_NAMES`` /
        ``PARAM_ALIASES``, or a full vector in ``PARAM_NAMES`` order)."""
        if params is not None and not isinstance(params, dict):
            v = np.asarray(params, dtype=float).reshape(-1)
            if v.size != len(PARAM_NAMES):
                raise ValueError(f"parameter vector must have {len(PARAM_NAMES)} entries ({PARAM_NAMES})")
            return _check_symmetric(v)
        merged = dict(self.params)
        for k, v in (params or {}).items():
            k = PARAM_ALIASES.get(k, k)
            if k not in merged:
                raise KeyError(f"unknown parameter {k!r}")
            merged[k] = float(v)
        return _check_symmetric(np.array([merged[k] for k in PARAM_NAMES]))

    def time_grid(self, params=None) -> np.ndarray:
        return np.linspace(0.0, self.param_vector(params)[1], self.n_grid)

    def pack(self, states, controls) -> np.ndarray:
        return np.hstack([np.asarray(states, float), np.asarray(controls, float)]).reshape(-1)

    def unpack(self, z):
        Z = np.asarray(z, float).reshape(self.n_grid, N_X + N_U)
        return Z[:, :N_X].copy(), Z[:, N_X:].copy()

    def kelly_guess(self, params=None) -> np.ndarray:
        """MAIN.m's guess: states linear in time between (q0, dq0) and (qF, dqF), dq constant, u = 0."""
        T = self.param_vector(params)[1]
        q0 = np.array([-0.3, 0.7, 0.0, -0.5, -0.6])
        qF = q0[::-1]
        dq = (qF - q0) / T
        s = np.linspace(0.0, 1.0, self.n_grid)[:, None]
        states = np.hstack([(1 - s) * q0 + s * qF, np.tile(dq, (self.n_grid, 1))])
        return self.pack(states, np.zeros((self.n_grid, N_U)))

    def interpolate(self, t, states, controls, params=None) -> np.ndarray:
        """A guess on this mesh from a trajectory on another (linear interpolation in time, the source's
        time axis rescaled to this problem's step time)."""
        t = np.asarray(t, float)
        tn = self.time_grid(params)
        tq = tn / tn[-1] * t[-1]
        X = np.column_stack([np.interp(tq, t, c) for c in np.asarray(states).T])
        U = np.column_stack([np.interp(tq, t, c) for c in np.asarray(controls).T])
        return self.pack(X, U)

    def _guess_vector(self, guess, params) -> np.ndarray:
        if guess is None:
            return self.kelly_guess(params)
        if isinstance(guess, dict):
            return self.interpolate(guess["t"], guess["states"], guess["controls"], params)
        z = np.asarray(guess, float).reshape(-1)
        if z.size != self.n_z:
            raise ValueError(f"guess has {z.size} entries, the NLP {self.n_z}")
        return z

    def solver(self, tol: float = 1e-10):
        """The CasADi ``nlpsol`` (IPOPT) for this tolerance, built on first use."""
        key = float(tol)
        if key not in self._solvers:
            opts = {
                "expand": True,
                "print_time": False,
                "record_time": True,
                "ipopt.print_level": 0,
                "ipopt.sb": "yes",
                "ipopt.linear_solver": "mumps",
                "ipopt.tol": key,
                "ipopt.max_iter": 3000,
                # IPOPT relaxes every bound by 1e-8 (relative) by default; the active knee limit then sits
                # 1e-8 rad outside the feasible set and the cost is lower by lambda * 1e-8 (about 2e-7 here).
                # A reference to 1e-10 wants the true feasible set.
                "ipopt.bound_relax_factor": 0.0,
            }
            opts.update({k if k.startswith("ipopt.") or k in ("expand", "print_time") else "ipopt." + k: v
                         for k, v in self.ipopt_options.items()})
            self._solvers[key] = ca.nlpsol(f"kelly_{self.method.replace('-', '_')}_{self.n_grid}", "ipopt", self.nlp, opts)
        return self._solvers[key]

    def evaluate(self, z, params=None):
        """Cost and constraint vector at ``z`` (for checks)."""
        J, g = self._fg(np.asarray(z, float), self.param_vector(params))
        return float(J), np.asarray(g).reshape(-1)

    def max_violation(self, z, params=None) -> float:
        """Largest violation of the constraints and bounds at ``z``, unscaled."""
        _, g = self.evaluate(z, params)
        z = np.asarray(z, float)
        return float(max(np.max(np.maximum(self.lbg - g, 0.0)), np.max(np.maximum(g - self.ubg, 0.0)),
                         np.max(np.maximum(self.lbx - z, 0.0)), np.max(np.maximum(z - self.ubx, 0.0))))

    # ---- solve ------------------------------------------------------------------------------------------
    def solve(self, params=None, guess=None, tol: float = 1e-10, lam_x0=None, lam_g0=None) -> dict:
        """Solve the NLP. ``params``: see ``param_vector``. ``guess``: None (MAIN.m's guess), a flat ``z``,
        or a previous result dict (interpolated onto this mesh). Returns a dict:

        cost, z (flat, per grid point [x(10), u(5)]), t, states (nGrid x 10, Kelly's order), controls
        (nGrid x 5), iterations, status (IPOPT's return_status), success, ipopt_time_s (CasADi's
        ``stats()['t_wall_total']``: wall time of the IPOPT call, IPOPT's own work plus the CasADi function
        evaluations it asked for), timings (all ``t_wall_*`` / ``t_proc_*`` of the call), wall_s (this
        method's own wall time around the call), max_violation, params (dict), p (vector), and the
        multipliers: lam_g, lam_x, lam_p (flat, CasADi's signs; -lam_p = d cost*/d p by the envelope
        theorem, PARAM_NAMES order, also as the dict dcost_dparams, checked against central differences),
        and by block: lam_defects (nGrid-1 x 10),
        lam_heel_strike (10), lam_step_length (2), lam_path (nGrid x 2), lam_foot_vel (2),
        lam_states (nGrid x 10), lam_controls (nGrid x 5)."""
        pv = self.param_vector(params)
        z0 = self._guess_vector(guess, params)
        args = {"x0": z0, "p": pv, "lbx": self.lbx, "ubx": self.ubx, "lbg": self.lbg, "ubg": self.ubg}
        if lam_x0 is not None:
            args["lam_x0"] = lam_x0
        if lam_g0 is not None:
            args["lam_g0"] = lam_g0
        S = self.solver(tol)
        w0 = time.perf_counter()
        res = S(**args)
        wall = time.perf_counter() - w0
        st = S.stats()
        z = np.asarray(res["x"]).reshape(-1)
        states, controls = self.unpack(z)
        lam_g = np.asarray(res["lam_g"]).reshape(-1)
        lam_x = np.asarray(res["lam_x"]).reshape(-1)
        lam_p = np.asarray(res["lam_p"]).reshape(-1)
        sl = self._g_slices
        LX = lam_x.reshape(self.n_grid, N_X + N_U)
        return {
            "method": self.method,
            "n_grid": self.n_grid,
            "segments": self.segments,
            "cost": float(res["f"]),
            "z": z,
            "t": np.linspace(0.0, pv[1], self.n_grid),
            "states": states,
            "controls": controls,
            "iterations": int(st["iter_count"]),
            "status": st["return_status"],
            "success": bool(st["success"]),
            "ipopt_time_s": float(st["t_wall_total"]),
            "timings": {k: float(v) for k, v in st.items() if k.startswith(("t_wall_", "t_proc_"))},
            "wall_s": wall,
            "max_violation": self.max_violation(z, pv),
            "params": dict(zip(PARAM_NAMES, pv.tolist())),
            "p": pv,
            "lam_g": lam_g,
            "lam_x": lam_x,
            "lam_p": lam_p,
            "dcost_dparams": dict(zip(PARAM_NAMES, (-lam_p).tolist())),
            "lam_defects": lam_g[sl["defects"]].reshape(self.n_grid - 1, N_X),
            "lam_heel_strike": lam_g[sl["heel_strike"]],
            "lam_step_length": lam_g[sl["step_length"]],
            "lam_path": lam_g[sl["path"]].reshape(self.n_grid, 2),
            "lam_foot_vel": lam_g[sl["foot_vel"]],
            "lam_states": LX[:, :N_X].copy(),
            "lam_controls": LX[:, N_X:].copy(),
        }


def kelly_problem(
    method: str = "hermite-simpson",
    segments: int | None = None,
    step_length: float = 0.5,
    step_time: float = 0.7,
    m_torso: float = 20.0,
    *,
    n_grid: int | None = None,
    u_max: float = 100.0,
    dq_max: float = 10.0,
    q_max: float = np.pi / 2,
    ipopt_options: dict | None = None,
    **physical,
) -> KellyProblem:
    """Build Kelly's five-link-biped NLP once.

    method: "hermite-simpson" (``segments`` segments, nGrid = 2 segments + 1; default 6, Kelly's first mesh)
    or "trapezoid" (``n_grid`` points, or ``segments`` + 1; default 25). step_length, step_time, m_torso and
    any of ``PARAM_NAMES`` (m1..m5, I1..I5, l1..l5, c1..c5, g) given as keywords are the defaults of the
    CasADi parameter vector ``p``; ``solve(params=...)`` changes them without rebuilding. u_max, dq_max and
    q_max are the bounds of MAIN.m. ``ipopt_options`` adds IPOPT options (names with or without "ipopt.")."""
    method = {"hs": "hermite-simpson", "hermiteSimpson": "hermite-simpson", "trap": "trapezoid"}.get(method, method)
    if method == "hermite-simpson":
        if n_grid is not None:
            if n_grid % 2 == 0 or n_grid < 3:
                raise ValueError("Hermite-Simpson needs an odd n_grid >= 3")
        else:
            n_grid = 2 * (6 if segments is None else int(segments)) + 1
    elif method == "trapezoid":
        if n_grid is None:
            n_grid = 25 if segments is None else int(segments) + 1
    else:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    params = default_params(step_length=step_length, step_time=step_time, m_torso=m_torso, **physical)
    return KellyProblem(method=method, n_grid=int(n_grid), params=params, u_max=u_max, dq_max=dq_max,
                        q_max=q_max, ipopt_options=dict(ipopt_options or {}))


# --------------------------------------------------------------------------------------------------------
# Self-test against OptimTraj's generated code (benchmarks/_kelly_autogen.py).


def _self_test(n_states: int = 200, seed: int = 0) -> None:
    import os
    import sys

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _kelly_autogen as ag

    rng = np.random.default_rng(seed)
    p_sym = ca.SX.sym("p", len(PARAM_NAMES))
    f, hs, foot = _build_model(p_sym)
    worst = {"dynamics": 0.0, "heel_strike": 0.0, "foot_vel": 0.0, "step_length": 0.0, "flip": 0.0}
    for i in range(n_states):
        phys = dict(_RABBIT)
        if i % 2:  # every other state with perturbed physical parameters (all of them enter both codes)
            phys = {k: v * rng.uniform(0.7, 1.3) for k, v in phys.items()}
            for a, b in _LEG_PAIRS:  # legs alike (see _check_symmetric)
                phys[b] = phys[a]
        sl = rng.uniform(0.2, 0.8)
        pv = np.array([dict(phys, step_length=sl, step_time=0.7)[k] for k in PARAM_NAMES])
        x = np.concatenate([rng.uniform(-np.pi / 2, np.pi / 2, 5), rng.uniform(-10, 10, 5)])
        u = rng.uniform(-100, 100, 5)
        ref = ag.dynamics(x, u, phys)
        mine = np.asarray(f(x, u, pv)).reshape(-1)
        worst["dynamics"] = max(worst["dynamics"], np.max(np.abs(mine - ref)) / max(1.0, np.max(np.abs(ref))))
        # single stance does not need alike legs: every parameter drawn on its own
        phys_a = {k: v * rng.uniform(0.7, 1.3) for k, v in _RABBIT.items()}
        pv_a = np.array([dict(phys_a, step_length=sl, step_time=0.7)[k] for k in PARAM_NAMES])
        ref = ag.dynamics(x, u, phys_a)
        mine = np.asarray(f(x, u, pv_a)).reshape(-1)
        worst["dynamics"] = max(worst["dynamics"], np.max(np.abs(mine - ref)) / max(1.0, np.max(np.abs(ref))))
        xp = np.asarray(hs(x, pv)[0]).reshape(-1)
        worst["flip"] = max(worst["flip"], np.max(np.abs(xp[:5] - x[4::-1])))
        ref_hs = ag.heel_strike_rates(x[4::-1], x[:5], x[5:], phys)
        worst["heel_strike"] = max(worst["heel_strike"],
                                   np.max(np.abs(xp[5:] - ref_hs)) / max(1.0, np.max(np.abs(ref_hs))))
        # cst_heelStrike at x0 = H(xF) vanishes in Kelly's form too
        worst["heel_strike"] = max(worst["heel_strike"], np.max(np.abs(ag.cst_heel_strike(xp, x, phys))))
        x0 = np.concatenate([rng.uniform(-np.pi / 2, np.pi / 2, 5), rng.uniform(-10, 10, 5)])
        P5F, dP5F = (np.asarray(v).reshape(-1) for v in foot(x, pv))
        _, dP50 = (np.asarray(v).reshape(-1) for v in foot(x0, pv))
        worst["foot_vel"] = max(worst["foot_vel"],
                                np.max(np.abs(np.array([-dP50[1], dP5F[1]]) - ag.cst_foot_vel(x0, x, phys))))
        worst["step_length"] = max(worst["step_length"],
                                   np.max(np.abs(P5F - [sl, 0.0] - ag.cst_step_length(x, phys, sl))))
    print(f"self-test, {n_states} random states (|q| <= pi/2, |dq| <= 10, |u| <= 100), half with parameters "
          "scaled by U(0.7, 1.3) (legs alike; for single stance also unlike): largest (relative) differences from OptimTraj's autoGen code")
    for k, v in worst.items():
        print(f"  {k:12s} {v:.2e}")
    bad = {k: v for k, v in worst.items() if not v < 1e-10}
    if bad:
        raise SystemExit(f"FAILED (tolerance 1e-10): {bad}")

    # The transcription: cost and constraints at MAIN.m's guess, recomputed in NumPy from the autoGen code.
    for method, n_grid in (("hermite-simpson", 13), ("trapezoid", 10)):
        prob = kelly_problem(method, n_grid=n_grid)
        z = prob.kelly_guess()
        rng_z = z + 0.05 * rng.standard_normal(z.size) * np.tile(np.r_[np.ones(10), 20 * np.ones(5)], n_grid)
        J, g = prob.evaluate(rng_z)
        X, U = prob.unpack(rng_z)
        phys = dict(_RABBIT)
        dt = 0.7 / (n_grid - 1)
        Fd = np.array([ag.dynamics(X[k], U[k], phys) for k in range(n_grid)])
        if method == "hermite-simpson":
            d = np.zeros((n_grid - 1, 10))
            for k in range(0, n_grid - 2, 2):
                d[k] = X[k + 2] - X[k] - dt * (Fd[k + 2] + 4 * Fd[k + 1] + Fd[k]) / 3
                d[k + 1] = X[k + 1] - (X[k + 2] + X[k]) / 2 - dt * (Fd[k] - Fd[k + 2]) / 4
            w = np.full(n_grid, 2 / 3)
            w[1::2] = 4 / 3
            w[[0, -1]] = 1 / 3
        else:
            d = X[1:] - X[:-1] - 0.5 * dt * (Fd[:-1] + Fd[1:])
            w = np.ones(n_grid)
            w[[0, -1]] = 0.5
        J_ref = dt * np.dot(w, [ag.autoGen_obj_torqueSquared(*U[k]) for k in range(n_grid)])
        sl = prob._g_slices
        errs = {
            "cost": abs(J - J_ref) / J_ref,
            "defects": np.max(np.abs(g[sl["defects"]] - d.reshape(-1))),
            "path": np.max(np.abs(g[sl["path"]] - np.concatenate([ag.path_constraint(x) for x in X]))),
            "foot_vel": np.max(np.abs(g[sl["foot_vel"]] - ag.cst_foot_vel(X[0], X[-1], phys))),
            "step_length": np.max(np.abs(g[sl["step_length"]] - ag.cst_step_length(X[-1], phys, 0.5))),
            "heel_strike_q": np.max(np.abs(g[sl["heel_strike"]][:5] - ag.cst_heel_strike(X[0], X[-1], phys)[:5])),
        }
        print(f"  transcription {method}, nGrid {n_grid}, perturbed guess: " +
              ", ".join(f"{k} {v:.1e}" for k, v in errs.items()))
        if not max(errs.values()) < 1e-10:
            raise SystemExit(f"FAILED transcription check {method}: {errs}")
    print("OK")


if __name__ == "__main__":
    _self_test()
    prob = kelly_problem("hermite-simpson", segments=6)
    sol = prob.solve()
    print(f"Hermite-Simpson, 6 segments (Kelly's mesh), MAIN.m guess: cost {sol['cost']:.10f}, "
          f"{sol['iterations']} iterations, {sol['status']}, IPOPT {sol['ipopt_time_s']:.3f} s, "
          f"max violation {sol['max_violation']:.1e}")
