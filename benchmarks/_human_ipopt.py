"""IPOPT on the seven-link human's gait transcription: a test and benchmark reference, never a library dependency.

The NLP is the library's own (:class:`difimpact._human_gait.problem.HumanGaitProblem`: objective, equality and
inequality constraints, bounds); IPOPT (CasADi's bundled build, MUMPS) solves it with the exact Hessian of the
Lagrangian. Values come from JAX; the sparse constraint Jacobian and the Hessian's upper triangle are
colour-compressed forward derivatives over the problem's own sparsity pattern
(:func:`difimpact._human_gait.problem.sparsity`). What is independent of the library is the solver: IPOPT's
interior point, line search, inertia correction and MUMPS's factorisation (Wächter & Biegler 2006).

    solver = HumanIpopt(problem)            # compiles the derivative programs once
    z, stats = solver.solve(z0)              # stats: casadi's (success, return_status, iter_count, t_wall_total …)
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np


class HumanIpopt:
    """IPOPT on `problem`, built once; :meth:`solve` runs it from a start (`max_iter`, `tol` IPOPT's options).
    The derivative programs take the problem as an argument (its speed a traced array), so problems that differ
    only in their numbers (a speed sweep) share one compile."""

    def __init__(self, problem, max_iter: int = 500, tol: float = 1e-9):
        import casadi as ca

        from difimpact._human_gait.problem import sparsity

        problem = eqx.tree_at(lambda p: p.speed, problem, jnp.asarray(problem.speed, float))
        self.problem, n = problem, problem.size
        sp = sparsity(problem)
        m = jax.eval_shape(_constraints, problem, jnp.zeros(n)).shape[0]
        neq = jax.eval_shape(problem.constraints, jnp.zeros(n))[0].shape[0]
        jac, sp_j = _compressed(ca, sp.jacobian_colours, sp.jacobian_pattern)
        hess, sp_h = _compressed(ca, sp.hessian_colours, np.triu(sp.hessian_pattern))
        arr = lambda a: jnp.asarray(np.asarray(a, float).reshape(-1))
        dense = ca.Sparsity.dense
        Cb = _callback_class(ca, n)
        J = Cb("human_jac", 3, [dense(1, n), sp_j], lambda a: [
            ca.DM(np.asarray(_gradient(problem, arr(a[0])))).T,
            ca.DM(sp_j, np.asarray(jac(_constraints, problem, arr(a[0]))))], [dense(n, 1), dense(1, 1), dense(m, 1)])
        H = Cb("human_hess", 4, [sp_h], lambda a: [ca.DM(sp_h, np.asarray(hess(
            _lagrangian_gradient, problem, arr(a[0]), jnp.asarray(float(a[2])), arr(a[3]))))],
            [dense(n, 1), ca.Sparsity(0, 0), dense(1, 1), dense(m, 1)], ["x", "p", "lam_f", "lam_g"])

        def values(a):
            f, g = _values(problem, arr(a[0]))
            return [ca.DM(float(f)), ca.DM(np.asarray(g))]

        F = Cb("human_fg", 1, [dense(1, 1), dense(m, 1)], values, jac=J)
        self._keep = (J, H, F)  # casadi holds raw references to the callbacks
        z, lam = jnp.zeros(n), jnp.zeros(m)  # compiled here (once per transcription), not in the timed solves
        jax.block_until_ready((_values(problem, z), _gradient(problem, z), jac(_constraints, problem, z),
                               hess(_lagrangian_gradient, problem, z, jnp.asarray(1.0), lam)))
        x = ca.MX.sym("x", n)
        f, g = F(x)
        self.lo, self.hi = (np.asarray(a) for a in problem.variable_bounds(jnp.float64))
        self.ubg = np.concatenate([np.zeros(neq), np.full(m - neq, 1e20)])
        self.solver = ca.nlpsol("ipopt", "ipopt", {"x": x, "f": f, "g": g}, {
            "hess_lag": H, "print_time": False,
            "ipopt": {"max_iter": max_iter, "tol": tol, "print_level": 0, "sb": "yes"}})

    def solve(self, z0):
        """IPOPT from `z0`: ``(z, stats)``."""
        res = self.solver(x0=np.asarray(z0), lbx=self.lo, ubx=self.hi, lbg=np.zeros_like(self.ubg), ubg=self.ubg)
        return np.asarray(res["x"]).reshape(-1), self.solver.stats()


def _constraints(problem, z):
    return jnp.concatenate(problem.constraints(z))  # both kinds from one evaluation of the dynamics


def _lagrangian_gradient(problem, z, lf, lg):
    return jax.grad(lambda z: lf * problem.objective(z) + lg @ _constraints(problem, z))(z)


_values = eqx.filter_jit(lambda problem, z: (problem.objective(z), _constraints(problem, z)))
_gradient = eqx.filter_jit(lambda problem, z: jax.grad(problem.objective)(z))


@eqx.filter_jit
def _forward(f, problem, z, *args, seeds, pick_colour, pick_row):
    """``∂f/∂z`` on the pattern: one forward derivative per colour (`seeds` ``(colours, n)``), read at the
    pattern's entries (`pick_colour`, `pick_row`). Seeds and indices are arguments, not constants XLA folds."""
    tangents = jax.vmap(lambda s: jax.jvp(lambda z: f(problem, z, *args), (z,), (s,))[1])(seeds)
    return tangents[pick_colour, pick_row]


def _compressed(ca, colours, pattern):
    """``(values, sparsity)``: `values(f, problem, z, *args)` the sparse derivative of `f` with `pattern` in
    casadi's column-major order, and the casadi sparsity."""
    seeds = jnp.asarray(np.eye(colours.max() + 1)[colours].T)  # (colours, n)
    r, c = np.nonzero(pattern)
    order = np.lexsort((r, c))
    pick = dict(seeds=seeds, pick_colour=jnp.asarray(colours[c[order]]), pick_row=jnp.asarray(r[order]))
    return (lambda f, problem, z, *args: _forward(f, problem, z, *args, **pick),
            ca.Sparsity.triplet(*pattern.shape, r.tolist(), c.tolist()))


def _callback_class(ca, n):
    class _Callback(ca.Callback):
        def __init__(self, name, n_in, outs, ev, sp_in=None, names=None, jac=None):
            ca.Callback.__init__(self)
            self.n_in, self.outs, self.ev, self.sp_in, self.names, self.jac = n_in, outs, ev, sp_in, names, jac
            self.construct(name, {})

        def has_jacobian(self): return self.jac is not None
        def get_jacobian(self, *args): return self.jac
        def get_n_in(self): return self.n_in
        def get_n_out(self): return len(self.outs)
        def get_sparsity_in(self, i): return self.sp_in[i] if self.sp_in else ca.Sparsity.dense(n, 1)
        def get_sparsity_out(self, i): return self.outs[i]
        def get_name_in(self, i): return self.names[i] if self.names else f"i{i}"
        def eval(self, arg): return self.ev(arg)

    return _Callback
