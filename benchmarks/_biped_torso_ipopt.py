"""An independent reference for the powered gaits of seed 003's biped with a torso, in CasADi + IPOPT.

What it is: one step of a periodic gait of the straight-legged biped with a torso of Font & Kövecses (seed 003,
IMECE 2008, Fig. 1 and Appendix A), powered by two hip torques, transcribed by Hermite-Simpson collocation
(separated form) and solved by IPOPT (exact Hessian of the Lagrangian from CasADi's algorithmic
differentiation, MUMPS). The same problem as ``difimpact.optimal_gait(difimpact.biped_torso_walker(model),
...)`` with a fixed step time and length and ``normalise="distance"``, written from the paper and nothing of the
library: a test and benchmark aid only (the library never imports CasADi).

The model (seed 003, Appendix A). Coordinates ``q = (q1, q2, q3, q4, q5)``: ``(q1, q2)`` the stance foot P_R,
``q3`` the stance leg's angle from the vertical (clockwise, the leg pointing up from its foot), ``q4`` the
inter-leg angle, the swing leg's absolute angle being ``q3 - q4``, and the torso's absolute angle ``q3 - q5``.
Point masses: legs ``m`` at ``b`` from the hip (``a = l - b`` from the foot), hip ``m_H``, torso ``m_T`` at
``l_T`` from the hip:

* hip ``H = P_R + l (sin q3, cos q3)``, swing foot ``P_L = H + l (sin(q4 - q3), -cos(q4 - q3))``,
  torso mass ``H + l_T (sin(q3 - q5), cos(q3 - q5))``;
* the mass matrix in closed form, eq. 26, the "..." of the printed M13, M23 and M33 completed by expanding
  eq. 5 (``mass_matrix``; the self-test checks it against ``sum m J^T J`` of the positions above):
  M13 = ((m + m_H + m_T) l + m a) cos q3 - m b cos(q4 - q3) + m_T l_T cos(q5 - q3),
  M23 = -((m + m_H + m_T) l + m a) sin q3 - m b sin(q4 - q3) + m_T l_T sin(q5 - q3),
  M33 = m (a^2 + b^2 + l^2) + m_H l^2 + m_T (l^2 + l_T^2) - 2 m b l cos q4 + 2 m_T l_T l cos q5;
* the potential ``U = g (total mass y of the centre of mass)``; single stance by Lagrange's equations (eq. 6)
  with ``q1 = q2 = 0`` fixed: rows 3..5 of ``M q'' + d/dt(M) q' - dT/dq + dU/dq = Q``, ``d/dt(M) q' =
  jacobian(M q', q) q'``;
* torques (positive clockwise): ``u1`` on the torso against the stance leg, ``u2`` on the swing leg against
  the torso; by virtual work ``Q = u1 d(phi_T - phi_R)/dq + u2 d(phi_L - phi_T)/dq = (0, 0, 0, -u2, u2 - u1)``
  with ``phi_R = q3``, ``phi_L = q3 - q4``, ``phi_T = q3 - q5``;
* heel strike (eqs. 3, 8): the swing foot sticks, ``[M, -A^T; A, 0] [q'+; lambda] = [M q'-; 0]`` with ``A = A_L``
  (eq. 25) and ``q'- = (0, 0, theta')``; the stance foot is free. ``xi_I = T_c^- / T^-`` (eq. 23) with
  ``T_c^- = 1/2 (A q'-)^T (A M^-1 A^T)^-1 (A q'-)``, the kinetic energy of the space of constrained motion; the
  trailing foot's normal velocity ``v_Sn+ = B_S q'+ = q2'+`` (eq. 4, ``B_S`` the second row of ``A_R``);
* relabelling: the swing leg becomes the stance leg, ``(q3, q4, q5) -> (q3 - q4, -q4, q5 - q4)``, and the same
  for the rates.

The problem: state ``x = (theta, theta')`` with ``theta = (q3, q4, q5)``, controls ``u = (u1, u2)``; fixed step
time ``T`` and step length ``L``; ``N`` segments, ``2N + 1`` points (the midpoints are variables), ``h = T/N``,
defects ``x_m - (x_0 + x_1)/2 - h/8 (f_0 - f_1)`` and ``x_1 - x_0 - h/6 (f_0 + 4 f_m + f_1)``; periodicity
``theta_0 = R(theta_G)``, ``theta'_0 = R(q'+_theta(theta_G, theta'_G))``; the swing foot at ``(L, 0)`` at the end;
cost ``(1/L) T sum_i w_i (u1_i^2 + u2_i^2)`` with Simpson's weights ``w = (1, 4, 2, ..., 4, 1) / (6N)``; no
bounds, no clearance (the straight legs scuff), lift-off reported, not imposed. The guess (Kelly's): angles
linear from ``theta_0`` to ``R^-1 theta_0``, constant rates, zero torques.

API::

    prob = biped_torso_problem(segments=40)              # mu_T = 1 by default (m = 5, m_H = m_T = 10 kg)
    sol = prob.solve(params={"mu_T": 2.0})               # no rebuild
    sol["cost"], sol["xi_I"], sol["lift_off_speed"], sol["states"], sol["controls"], sol["net_work"], ...

``python benchmarks/_biped_torso_ipopt.py`` runs the self-test (closed-form M against ``sum m J^T J``, energy
conservation of the unpowered dynamics, the impact's energy split) and solves the three rows of the experiment
``gait-biped-torso-powered``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import casadi as ca
import numpy as np

N_J, N_X, N_U = 3, 6, 2

#: Parameter vector of the NLP (casadi parameter ``p``), in this order.
PARAM_NAMES = ("m", "m_H", "m_T", "l", "b", "l_T", "g", "step_length", "step_time")

#: The experiment's biped (seed 003, Table 1): 30 kg, legs 5 kg each, mu_T = m_T/m_H = 1.
DEFAULTS = {"m": 5.0, "m_H": 10.0, "m_T": 10.0, "l": 0.8, "b": 0.4, "l_T": 0.4, "g": 9.81, "step_length": 0.5,
            "step_time": 0.5}


def masses(mu_T: float, total: float = 30.0, m: float = 5.0) -> dict:
    """``m``, ``m_H``, ``m_T`` with the legs' ``2m`` fixed and the rest split by ``mu_T = m_T / m_H``."""
    rest = total - 2 * m
    return {"m": m, "m_H": rest / (1 + mu_T), "m_T": rest * mu_T / (1 + mu_T)}


def mass_matrix(q, par):
    """Seed 003, eq. 26 (Appendix A), the elided terms completed."""
    m, m_H, m_T, l, b, l_T = (par[k] for k in ("m", "m_H", "m_T", "l", "b", "l_T"))
    a = l - b
    q3, q4, q5 = q[2], q[3], q[4]
    total = 2 * m + m_H + m_T
    M13 = ((m + m_H + m_T) * l + m * a) * ca.cos(q3) - m * b * ca.cos(q4 - q3) + m_T * l_T * ca.cos(q5 - q3)
    M23 = -((m + m_H + m_T) * l + m * a) * ca.sin(q3) - m * b * ca.sin(q4 - q3) + m_T * l_T * ca.sin(q5 - q3)
    M33 = (m * (a**2 + b**2 + l**2) + m_H * l**2 + m_T * (l**2 + l_T**2) - 2 * m * b * l * ca.cos(q4)
           + 2 * m_T * l_T * l * ca.cos(q5))
    M14, M24 = m * b * ca.cos(q4 - q3), m * b * ca.sin(q4 - q3)
    M15, M25 = -m_T * l_T * ca.cos(q5 - q3), -m_T * l_T * ca.sin(q5 - q3)
    M34 = -m * b**2 + m * b * l * ca.cos(q4)
    M35 = -m_T * l_T * (l_T + l * ca.cos(q5))
    M44, M55 = m * b**2, m_T * l_T**2
    return ca.blockcat([
        [total, 0, M13, M14, M15],
        [0, total, M23, M24, M25],
        [M13, M23, M33, M34, M35],
        [M14, M24, M34, M44, 0],
        [M15, M25, M35, 0, M55],
    ])


def positions(q, par):
    """Hip, swing foot, and the four masses (stance leg, hip, swing leg, torso) with their masses."""
    l, b, l_T = par["l"], par["b"], par["l_T"]
    q3, q4, q5 = q[2], q[3], q[4]
    foot = ca.vertcat(q[0], q[1])
    up = ca.vertcat(ca.sin(q3), ca.cos(q3))
    down = ca.vertcat(ca.sin(q4 - q3), -ca.cos(q4 - q3))  # hip to swing foot
    hip = foot + l * up
    bodies = [(par["m"], foot + (l - b) * up), (par["m_H"], hip), (par["m"], hip + b * down),
              (par["m_T"], hip + l_T * ca.vertcat(ca.sin(q3 - q5), ca.cos(q3 - q5)))]
    return hip, hip + l * down, bodies


def swing_foot_jacobian(q, par):
    """``A_L``, seed 003 eq. 25."""
    l, q3, q4 = par["l"], q[2], q[3]
    return ca.blockcat([
        [1, 0, l * ca.cos(q3) - l * ca.cos(q4 - q3), l * ca.cos(q4 - q3), 0],
        [0, 1, -l * ca.sin(q3) - l * ca.sin(q4 - q3), l * ca.sin(q4 - q3), 0],
    ])


def relabel(v):
    """``(q3, q4, q5) -> (q3 - q4, -q4, q5 - q4)`` (angles or rates)."""
    return ca.vertcat(v[0] - v[1], -v[1], v[2] - v[1])


def _model(p_sym):
    """CasADi functions: single-stance dynamics ``f(x, u, p)``, the heel strike ``(x, p) -> (theta'+ relabelled,
    xi_I, v_Sn+, T_c^-, T^-, T^+, impulse, q'+)``, the swing foot's position, the total energy, and
    ``(M, sum m J^T J, A_L, the swing foot's Jacobian)`` of a free base (self-test)."""
    par = dict(zip(PARAM_NAMES, ca.vertsplit(p_sym)))
    th, thd, u = ca.SX.sym("theta", N_J), ca.SX.sym("theta_dot", N_J), ca.SX.sym("u", N_U)
    q, qd = ca.vertcat(0, 0, th), ca.vertcat(0, 0, thd)
    qs, qds = ca.SX.sym("q", 5), ca.SX.sym("qd", 5)  # free base, for Lagrange's equations
    M = mass_matrix(qs, par)
    _, foot_L, bodies = positions(qs, par)
    U = par["g"] * sum(mi * r[1] for mi, r in bodies)
    T_kin = 0.5 * ca.dot(qds, M @ qds)
    bias = ca.jacobian(M @ qds, qs) @ qds - ca.gradient(T_kin, qs) + ca.gradient(U, qs)
    Q = ca.vertcat(0, 0, 0, -u[1], u[1] - u[0])
    rows = slice(2, 5)
    Mq = ca.substitute(M, qs, q)
    bq = ca.substitute(ca.substitute(bias, qs, q), qds, qd)
    acc = ca.solve(Mq[rows, rows], Q[rows] - bq[rows])
    x = ca.vertcat(th, thd)
    f = ca.Function("biped_torso_dynamics", [x, u, p_sym], [ca.vertcat(thd, acc)], ["x", "u", "p"], ["dx"])

    A = swing_foot_jacobian(q, par)
    K = ca.blockcat([[Mq, -A.T], [A, ca.SX.zeros(2, 2)]])
    sol = ca.solve(K, ca.vertcat(Mq @ qd, ca.SX.zeros(2)))
    qd_plus = sol[:5]
    Aqd = A @ qd
    T_c = 0.5 * ca.dot(Aqd, ca.solve(A @ ca.solve(Mq, A.T), Aqd))
    T_minus = 0.5 * ca.dot(qd, Mq @ qd)
    T_plus = 0.5 * ca.dot(qd_plus, Mq @ qd_plus)
    heel = ca.Function("biped_torso_heel_strike", [x, p_sym],
                       [relabel(qd_plus[2:]), T_c / T_minus, qd_plus[1], T_c, T_minus, T_plus, sol[5:], qd_plus],
                       ["x", "p"], ["theta_dot_plus", "xi_I", "v_Sn", "T_c", "T_minus", "T_plus", "impulse",
                                    "qdot_plus"])
    foot = ca.Function("biped_torso_swing_foot", [th, p_sym], [ca.substitute(foot_L, qs, q)])
    energy = ca.Function("biped_torso_energy", [x, p_sym],
                         [ca.substitute(ca.substitute(T_kin + U, qs, q), qds, qd)])
    lumped = sum(mi * ca.jacobian(r, qs).T @ ca.jacobian(r, qs) for mi, r in bodies)
    check = ca.Function("biped_torso_mass_check", [qs, p_sym], [M, lumped, swing_foot_jacobian(qs, par),
                                                                ca.jacobian(foot_L, qs)])
    return f, heel, foot, energy, check


@dataclass
class BipedTorsoProblem:
    """The NLP of one mesh, built once; ``solve`` re-solves for other parameters without rebuilding."""

    segments: int
    params: dict
    theta0: tuple | None = None
    ipopt_options: dict = field(default_factory=dict)
    strike: bool = True

    def __post_init__(self):
        N = self.segments
        n = 2 * N + 1
        self.n_grid = n
        p_sym = ca.SX.sym("p", len(PARAM_NAMES))
        self.f, self.heel, self.foot, self.energy, self._mass_check = _model(p_sym)
        z = ca.MX.sym("z", n * (N_X + N_U))
        p = ca.MX.sym("p", len(PARAM_NAMES))
        Z = ca.reshape(z, N_X + N_U, n)  # column i = [x_i; u_i]
        X, U = Z[:N_X, :], Z[N_X:, :]
        L, T = p[PARAM_NAMES.index("step_length")], p[PARAM_NAMES.index("step_time")]
        h = T / N
        F = self.f.map(n)(X, U, p)
        x0, xm, x1 = X[:, 0:n - 1:2], X[:, 1:n:2], X[:, 2:n:2]
        f0, fm, f1 = F[:, 0:n - 1:2], F[:, 1:n:2], F[:, 2:n:2]
        interpolation = xm - 0.5 * (x0 + x1) - h / 8 * (f0 - f1)
        simpson = x1 - x0 - h / 6 * (f0 + 4 * fm + f1)
        w = np.full(n, 2.0)
        w[1::2] = 4.0
        w[[0, -1]] = 1.0
        self.weights = w / (6.0 * N)
        cost = T * ca.sum2(ca.DM(self.weights).T * ca.sum1(U**2)) / L
        xG = X[:, -1]
        rates_plus = self.heel(xG, p)[0]
        g = ca.vertcat(ca.vec(interpolation), ca.vec(simpson), X[:N_J, 0] - relabel(xG[:N_J]),
                       X[N_J:, 0] - rates_plus, self.foot(xG[:N_J], p) - ca.vertcat(L, 0))
        if self.strike:  # the swing foot approaches the ground at heel strike: v_y⁻ ≤ 0
            th, thd, ps = ca.SX.sym("th", N_J), ca.SX.sym("thd", N_J), ca.SX.sym("ps", len(PARAM_NAMES))
            vy = ca.Function("foot_vy", [th, thd, ps], [ca.jtimes(self.foot(th, ps)[1], th, thd)])
            g = ca.vertcat(g, vy(xG[:N_J], xG[N_J:], p))
        self.lbg, self.ubg = np.zeros(g.shape[0]), np.zeros(g.shape[0])
        if self.strike:
            self.lbg[-1] = -np.inf
        self.nlp = {"x": z, "p": p, "f": cost, "g": g}
        self.n_z, self.n_g = z.shape[0], g.shape[0]
        self._fg = ca.Function("biped_torso_fg", [z, p], [cost, g])
        self._solvers = {}

    def param_vector(self, params=None) -> np.ndarray:
        """The problem's parameters updated by ``params`` (names of ``PARAM_NAMES``, or ``mu_T``: the masses of
        :func:`masses`)."""
        merged = dict(self.params)
        for k, v in (params or {}).items():
            if k == "mu_T":
                merged.update(masses(float(v)))
            elif k in merged:
                merged[k] = float(v)
            else:
                raise KeyError(f"unknown parameter {k!r}")
        return np.array([merged[k] for k in PARAM_NAMES], float)

    def unpack(self, z):
        Z = np.asarray(z, float).reshape(self.n_grid, N_X + N_U)
        return Z[:, :N_X].copy(), Z[:, N_X:].copy()

    def guess(self, params=None) -> np.ndarray:
        """Kelly's guess from ``theta0`` (default: stance leg back at ``-alpha``, swing leg at ``+alpha``, upright
        torso; ``sin alpha = L / 2l``): linear angles to ``R^-1 theta0``, constant rates, zero torques."""
        pv = dict(zip(PARAM_NAMES, self.param_vector(params)))
        if self.theta0 is None:
            alpha = math.asin(pv["step_length"] / (2 * pv["l"]))
            th0 = np.array([-alpha, -2 * alpha, -alpha])
        else:
            th0 = np.asarray(self.theta0, float)
        th_end = np.array([th0[0] - th0[1], -th0[1], th0[2] - th0[1]])  # R is an involution
        s = np.linspace(0.0, 1.0, self.n_grid)[:, None]
        X = np.hstack([th0 + s * (th_end - th0), np.tile((th_end - th0) / pv["step_time"], (self.n_grid, 1))])
        return np.hstack([X, np.zeros((self.n_grid, N_U))]).reshape(-1)

    def solver(self, tol: float = 1e-10):
        key = float(tol)
        if key not in self._solvers:
            opts = {"expand": True, "print_time": False, "record_time": True, "ipopt.print_level": 0,
                    "ipopt.sb": "yes", "ipopt.linear_solver": "mumps", "ipopt.tol": key, "ipopt.max_iter": 500,
                    "ipopt.bound_relax_factor": 0.0}
            opts.update({k if k.startswith("ipopt.") or k in ("expand", "print_time") else "ipopt." + k: v
                         for k, v in self.ipopt_options.items()})
            self._solvers[key] = ca.nlpsol(f"biped_torso_{self.segments}", "ipopt", self.nlp, opts)
        return self._solvers[key]

    def evaluate(self, z, params=None):
        J, g = self._fg(np.asarray(z, float), self.param_vector(params))
        return float(J), np.asarray(g).reshape(-1)

    def solve(self, params=None, guess=None, tol: float = 1e-10) -> dict:
        """Solve from ``guess`` (a flat ``z``; default :meth:`guess`). Returns a dict: cost, xi_I,
        lift_off_speed, impact_loss (``T^- - T^+``), T_c, net_work (``T sum w_i u_i . omega_i`` with
        ``omega = (-q5', q5' - q4')`` the actuators' rates), step_length (where the swing foot lands), t,
        states ``(2N+1, 6)``, controls ``(2N+1, 2)``, z, iterations, status, success, max_violation, ipopt_time_s."""
        pv = self.param_vector(params)
        z0 = self.guess(params) if guess is None else np.asarray(guess, float)
        S = self.solver(tol)
        res = S(x0=z0, p=pv, lbg=self.lbg, ubg=self.ubg)
        st = S.stats()
        z = np.asarray(res["x"]).reshape(-1)
        X, U = self.unpack(z)
        heel = self.heel(X[-1], pv)
        T = pv[PARAM_NAMES.index("step_time")]
        omega = np.stack([-X[:, 5], X[:, 5] - X[:, 4]], axis=1)
        _, g = self.evaluate(z, params)
        return {
            "cost": float(res["f"]),
            "xi_I": float(heel[1]),
            "lift_off_speed": float(heel[2]),
            "T_c": float(heel[3]),
            "impact_loss": float(heel[4] - heel[5]),
            "net_work": float(T * self.weights @ np.sum(U * omega, axis=1)),
            "step_length": float(np.asarray(self.foot(X[-1, :N_J], pv)).reshape(-1)[0]),
            "t": np.linspace(0.0, T, self.n_grid),
            "states": X,
            "controls": U,
            "z": z,
            "iterations": int(st["iter_count"]),
            "status": st["return_status"],
            "success": bool(st["success"]),
            "max_violation": float(np.max(np.maximum(self.lbg - g, g - self.ubg))),
            "ipopt_time_s": float(st["t_wall_total"]),
        }


def biped_torso_problem(segments: int = 40, *, theta0=None, ipopt_options: dict | None = None, strike: bool = True,
                        **params) -> BipedTorsoProblem:
    """Build the NLP once: ``segments`` Hermite-Simpson segments; ``params`` (names of ``PARAM_NAMES``, or
    ``mu_T``) change the defaults :data:`DEFAULTS`; ``theta0`` the guess's angles after heel strike; ``strike``:
    the swing foot's vertical velocity at the end ``≤ 0`` (a heel strike, as the experiment imposes)."""
    merged = dict(DEFAULTS)
    if "mu_T" in params:
        merged.update(masses(float(params.pop("mu_T"))))
    for k, v in params.items():
        if k not in merged:
            raise KeyError(f"unknown parameter {k!r}")
        merged[k] = float(v)
    return BipedTorsoProblem(int(segments), merged, None if theta0 is None else tuple(theta0),
                             dict(ipopt_options or {}), strike)


def _self_test(n_states: int = 100, seed: int = 0) -> dict:
    """Closed-form M against ``sum m J^T J`` and eq. 25 against the swing foot's Jacobian; the unpowered
    dynamics conserve energy (``dE/dt = 0``); the torques' power is ``u . omega``; the impact keeps
    ``A q'+ = 0`` and loses exactly ``T_c^-``. Returns the largest errors."""
    rng = np.random.default_rng(seed)
    p_sym = ca.SX.sym("p", len(PARAM_NAMES))
    f, heel, _, energy, check = _model(p_sym)
    x_sym = ca.SX.sym("x", N_X)
    dE = ca.Function("dE", [x_sym, p_sym], [ca.jacobian(energy(x_sym, p_sym), x_sym)])
    worst = dict.fromkeys(("mass_matrix", "jacobian", "energy_rate", "power", "sticking", "impact_loss"), 0.0)
    for _ in range(n_states):
        par = dict(DEFAULTS, **masses(rng.uniform(0.2, 3.0)), l=rng.uniform(0.6, 1.0), l_T=rng.uniform(0.2, 0.6))
        par["b"] = rng.uniform(0.1, 0.9) * par["l"]
        pv = np.array([par[k] for k in PARAM_NAMES])
        q = rng.uniform(-1.0, 1.0, 5)
        M, lumped, A, J = (np.asarray(v) for v in check(q, pv))
        worst["mass_matrix"] = max(worst["mass_matrix"], np.max(np.abs(M - lumped)))
        worst["jacobian"] = max(worst["jacobian"], np.max(np.abs(A[:, 2:] - J[:, 2:])))
        x, u = rng.uniform(-1.5, 1.5, N_X), rng.uniform(-30, 30, N_U)
        grad = np.asarray(dE(x, pv)).reshape(-1)
        rate0 = grad @ np.asarray(f(x, np.zeros(N_U), pv)).reshape(-1)
        worst["energy_rate"] = max(worst["energy_rate"], abs(rate0))
        power = grad @ np.asarray(f(x, u, pv)).reshape(-1)
        worst["power"] = max(worst["power"], abs(power - (u[0] * -x[5] + u[1] * (x[5] - x[4]))))
        out = heel(x, pv)
        A = np.asarray(check(np.r_[0.0, 0.0, x[:N_J]], pv)[2])
        worst["sticking"] = max(worst["sticking"], np.max(np.abs(A @ np.asarray(out[7]).ravel())))
        worst["impact_loss"] = max(worst["impact_loss"], abs(float(out[4] - out[5] - out[3])) / float(out[4]))
    return worst


if __name__ == "__main__":
    errors = _self_test()
    print("self-test, largest errors: " + ", ".join(f"{k} {v:.1e}" for k, v in errors.items()))
    if not max(errors.values()) < 1e-10:
        raise SystemExit("FAILED")
    for N in (40, 80):
        prob = biped_torso_problem(N)
        for mu_T in (0.5, 1.0, 2.0):
            w0 = time.perf_counter()
            sol = prob.solve(params={"mu_T": mu_T})
            print(f"N = {N}, mu_T = {mu_T}: cost {sol['cost']:.10f}, xi_I {sol['xi_I']:.10f}, "
                  f"v_Sn+ {sol['lift_off_speed']:.10f} m/s, net work {sol['net_work']:.8f} J, impact loss "
                  f"{sol['impact_loss']:.8f} J, {sol['iterations']} iterations, {sol['status']}, "
                  f"{time.perf_counter() - w0:.2f} s")
