r"""A primal-dual interior-point method for ``min f(y)`` subject to ``h(y) = 0`` and ``l ≤ y ≤ u``, after IPOPT
(Wächter & Biegler, *On the implementation of an interior-point filter line-search algorithm for large-scale
nonlinear programming*, Math. Program. 106, 2006), written as one ``lax.while_loop`` so that it runs under
``jit`` and ``vmap``.

Each iteration solves the primal-dual Newton system of the barrier problem (eq. 13)

$$\begin{bmatrix} W + Σ + δ_w I & ∇h^T \\ ∇h & -δ_c I \end{bmatrix}
  \begin{bmatrix} d_y \\ λ^+ \end{bmatrix} = -\begin{bmatrix} ∇f - μ (Y - L)^{-1} e + μ (U - Y)^{-1} e \\ h
  \end{bmatrix},\qquad Σ = Z_L (Y - L)^{-1} + Z_U (U - Y)^{-1},$$

with ``W`` the exact Hessian of the Lagrangian by automatic differentiation. ``δ_w`` is raised as IPOPT's inertia
correction does (§3.1) until the matrix has the inertia ``(n, m, 0)`` (:mod:`.inertia`: a Cholesky attempt of the
augmented-Lagrangian matrix, or the pivots' signs of a banded elimination without pivoting, since the ``LU`` that
solves the system gives no inertia) and the step has positive curvature, ``d_yᵀ (W + Σ + δ_w I) d_y ≥ κ d_yᵀ d_y``
(the test of Chiang & Zavala, *An inertia-free filter line-search algorithm for large-scale nonlinear
programming*, Comput. Optim. Appl. 64, 2016), or, where ``W`` is not negative along the step, any positive
curvature: a step along a direction where the objective is flat is as long as ``Σ`` and ``δ_w`` make it, as in
IPOPT, so that the iterates of an unbounded problem pass `diverging_iterates_tol` within a few dozen iterations
(with ``κ`` alone they grew by about ``‖∇f‖ / κ`` an iteration). Steps are
kept inside the bounds by the fraction-to-the-boundary rule (eq. 15) and accepted by IPOPT's filter line
search with a second-order correction (:mod:`.filter`); where it fails with the constraints violated, the
iterations restore feasibility (:mod:`.restoration`, §3.3) before they go on. The multipliers start at their
least-squares estimate (§3.6).
"""

import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Array, Bool, Float, Int, Scalar
from . import newton, restoration
from .filter import Filter, search
from .matrix import AbstractMatrix
from .solution import NLPOptions, NLPResults
from .sparsity import hessian, values_and_jacobians, zero_hessian

_KAPPA_CURVATURE = 1e-10  # the curvature test's κ
_KAPPA_SIGMA = 1e10  # the bound multipliers' safeguard (IPOPT's κ_Σ, eq. 16)
_MAX_REGULARISATIONS = 24
_MAX_BARRIER_UPDATES = 64


class Scaled(eqx.Module):
    """The problem as the iterations see it: ``y = (x, s)``, the objective `f` and `cd`, the equalities and the
    inequalities ``(c, d)`` of ``x`` from one evaluation, scaled by constants fixed at the start, bounds on ``y``
    with ``±inf`` where there is none, the masks of the finite bounds, the derivatives' sparsity (or ``None``:
    dense) and, where given, `joint`: ``(f, (c, d))`` from one evaluation (what the Hessian differentiates)."""

    f: object = eqx.field(static=True)
    cd: object = eqx.field(static=True)
    n: int = eqx.field(static=True)
    sparsity: object = eqx.field(static=True)
    lower: Float[Array, " N"]
    upper: Float[Array, " N"]
    has_lower: Bool[Array, " N"]
    has_upper: Bool[Array, " N"]
    joint: object = eqx.field(static=True, default=None)

    def h(self, y):
        c, d = self.cd(y[: self.n])
        return jnp.concatenate([c, d - y[self.n:]])

    def slacks(self, y):
        """``y − l`` and ``u − y``, one where there is no bound (their logarithm is then zero)."""
        return (jnp.where(self.has_lower, y - self.lower, 1.0), jnp.where(self.has_upper, self.upper - y, 1.0))

    def barrier(self, y, mu, f=None):
        """The barrier objective at `y` (`f`: the objective there, where known)."""
        sl, su = self.slacks(y)
        f = self.f(y[: self.n]) if f is None else f
        return f - mu * (jnp.sum(jnp.where(self.has_lower, jnp.log(sl), 0.0))
                         + jnp.sum(jnp.where(self.has_upper, jnp.log(su), 0.0)))

    def barrier_gradient(self, g, y, mu):
        sl, su = self.slacks(y)
        return g - jnp.where(self.has_lower, mu / sl, 0.0) + jnp.where(self.has_upper, mu / su, 0.0)

    def sigma(self, y, zl, zu):
        sl, su = self.slacks(y)
        return jnp.where(self.has_lower, zl / sl, 0.0) + jnp.where(self.has_upper, zu / su, 0.0)


class State(eqx.Module):
    """An iterate; `h` the constraints at `y` once `done` (the previous iterate's before), `evaluating` a last
    trip through the loop that only evaluates them there (after a step that ended the solve)."""

    y: Float[Array, " N"]
    lam: Float[Array, " M"]
    zl: Float[Array, " N"]
    zu: Float[Array, " N"]
    mu: Scalar
    filter: Filter
    delta: Scalar
    error: Scalar
    h: Float[Array, " M"]
    step: Int[Array, ""]
    result: NLPResults
    done: Bool[Array, ""]
    restoring: Bool[Array, ""]
    theta_ref: Scalar
    evaluating: Bool[Array, ""]


class Linearisation(eqx.Module):
    """Values and first derivatives at ``y``: ``f``, ``∇f`` over ``y`` (zero on the slacks), ``h``, ``J_c``,
    ``J_d``."""

    f: Scalar
    g: Float[Array, " N"]
    h: Float[Array, " M"]
    Jc: AbstractMatrix
    Jd: AbstractMatrix

    def jacobian_transpose(self, lam):
        """``∇hᵀ λ`` over ``y = (x, s)``."""
        mc = self.Jc.shape[0]
        return jnp.concatenate([self.Jc.rmv(lam[:mc]) + self.Jd.rmv(lam[mc:]), -lam[mc:]])


def linearise(p: Scaled, y, evaluated=None) -> Linearisation:
    """The linearisation at `y`, from `evaluated` (``((f, c, d), (∇f, J_c, J_d))`` at ``x``) where given."""
    x = y[: p.n]
    (f, c, d), (gx, Jc, Jd) = values_and_jacobians(p.f, p.cd, x, p.sparsity) if evaluated is None else evaluated
    g = jnp.concatenate([gx, jnp.zeros(y.shape[0] - p.n, y.dtype)])
    return Linearisation(f, g, jnp.concatenate([c, d - y[p.n:]]), Jc, Jd)


def optimality_error(p: Scaled, y, lam, zl, zu, mu, lin: Linearisation):
    """IPOPT's scaled optimality error ``E_μ`` (eq. 5) with ``s_max = 100``."""
    sl, su = p.slacks(y)
    zl_, zu_ = jnp.where(p.has_lower, zl, 0.0), jnp.where(p.has_upper, zu, 0.0)
    n_z = jnp.maximum(jnp.sum(p.has_lower) + jnp.sum(p.has_upper), 1)
    s_d = jnp.maximum(100.0, (jnp.sum(jnp.abs(lam)) + jnp.sum(zl_) + jnp.sum(zu_)) / (lam.size + n_z)) / 100.0
    s_c = jnp.maximum(100.0, (jnp.sum(zl_) + jnp.sum(zu_)) / n_z) / 100.0
    dual = jnp.max(jnp.abs(lin.g + lin.jacobian_transpose(lam) - zl_ + zu_)) / s_d
    primal = jnp.max(jnp.abs(lin.h), initial=0.0)
    comp = jnp.maximum(jnp.max(jnp.where(p.has_lower, jnp.abs(sl * zl - mu), 0.0)),
                       jnp.max(jnp.where(p.has_upper, jnp.abs(su * zu - mu), 0.0))) / s_c
    return jnp.maximum(jnp.maximum(dual, primal), comp)


def _split(p: Scaled, lin: Linearisation, v):
    """A vector over ``(y, h)`` as ``(r_x, r_s, r_c, r_d)``."""
    n, N, mc = p.n, lin.g.shape[0], lin.Jc.shape[0]
    return v[:n], v[n:N], v[N:N + mc], v[N + mc:]


def newton_solve(R: newton.Reduced, p: Scaled, lin: Linearisation, rhs):
    """The step ``(d_y, λ⁺)`` of the full system from the reduced factors."""
    dx, ds, lam_c, lam_d = newton.solve(R, *_split(p, lin, rhs))
    return jnp.concatenate([dx, ds]), jnp.concatenate([lam_c, lam_d])


def _newton(p: Scaled, W, lin: Linearisation, sigma, rhs, delta_last, mu):
    """Factor and solve the Newton system, raising ``δ_w`` until the step passes the curvature test and ``δ_c``
    when the matrix is singular (one loop, one traced factorisation). Returns the factors, the step, ``δ_w`` and
    whether a step was found."""
    zero = jnp.zeros_like(mu)
    n = p.n
    # W diagonal and nowhere negative (a linear program): A = W + Σ_x + δ_w I + J_dᵀ E J_d is positive definite for
    # any δ_w > 0, so the matrix has the inertia (n, m_c, 0) wherever it is regular, without the inertia test,
    # whose rounding (ε ρ max|J_c|², :mod:`.inertia`) would hold δ_w near 1e-10 along a direction of zero
    # curvature in null(J_c), and an unbounded LP's steps to about ‖∇f‖ / 1e-10 an iteration
    separable = W.nonnegative_diagonal()

    def attempt(delta_w, delta_c):
        R = newton.factor(W, lin.Jc, lin.Jd, sigma[:n], sigma[n:], delta_w, delta_c,
                          newton.structure(p.sparsity, lin.Jc.shape[0]), test_inertia=True,
                          wanted=separable & (delta_w > 0))
        d, lam = newton_solve(R, p, lin, rhs)
        w_curvature = d[:n] @ W.mv(d[:n])
        curvature = w_curvature + d @ ((sigma + delta_w) * d)
        singular = R.lu.min_pivot < 1e-30
        # sufficiently positive; or positive with W not negative along d (its positive part from Σ and δ_w alone):
        # a long step along a flat direction is then the model's own minimiser, as IPOPT takes it
        positive = (curvature >= _KAPPA_CURVATURE * (d @ d)) | ((w_curvature >= 0) & (curvature > 0))
        inertia = R.inertia | (separable & (delta_w > 0))
        ok = positive & inertia & ~singular & jnp.all(jnp.isfinite(d)) & jnp.all(jnp.isfinite(lam))
        return R, d, lam, ok, singular

    def body(c):
        delta_w, delta_c, k, _, _, _, _, singular = c
        delta_c = jnp.where(singular, 1e-8 * mu**0.25, delta_c)
        first = jnp.where(delta_last == 0, 1e-4, jnp.maximum(1e-20, delta_last / 3))
        delta_w = jnp.where(k == 0, zero, jnp.where(delta_w == 0, first,
                                                    delta_w * jnp.where(delta_last == 0, 100.0, 8.0)))
        return (delta_w, delta_c, k + 1) + attempt(delta_w, delta_c)

    shapes = jax.eval_shape(attempt, zero, zero)
    init = (zero, zero, 0) + jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)
    delta_w, _, _, R, d, lam, ok, _ = jax.lax.while_loop(
        lambda c: ~c[6] & (c[2] < _MAX_REGULARISATIONS), body, init)
    return R, d, lam, delta_w, ok


def _fraction_to_boundary(p: Scaled, y, d, tau):
    """The largest ``α ≤ 1`` with ``y + α d`` at least a fraction ``1 − τ`` of the way from each bound (eq. 15)."""
    sl, su = p.slacks(y)
    al = jnp.where(p.has_lower & (d < 0), -tau * sl / jnp.where(d < 0, d, -1.0), jnp.inf)
    au = jnp.where(p.has_upper & (d > 0), tau * su / jnp.where(d > 0, d, 1.0), jnp.inf)
    return jnp.minimum(1.0, jnp.minimum(jnp.min(al, initial=jnp.inf), jnp.min(au, initial=jnp.inf)))


def _dual_fraction(z, dz, active, tau):
    a = jnp.where(active & (dz < 0), -tau * z / jnp.where(dz < 0, dz, -1.0), jnp.inf)
    return jnp.minimum(1.0, jnp.min(a, initial=jnp.inf))


def _barrier_update(p: Scaled, s: State, lin: Linearisation, options: NLPOptions):
    """``μ`` decreased (eq. 7) while the barrier problem is solved to ``10 μ`` (eq. 6), repeatedly in one
    iteration as IPOPT's monotone update does (``mu_allow_fast_monotone_decrease``), never while restoring; the
    filter emptied where it is."""
    floor = options.tol / 10

    def solved(mu):
        return (optimality_error(p, s.y, s.lam, s.zl, s.zu, mu, lin) <= 10.0 * mu) & ~s.restoring & (mu > floor)

    def decrease(c):
        mu, k = c
        return jnp.maximum(floor, jnp.minimum(options.kappa_mu * mu, mu**options.theta_mu)), k + 1

    # bounded: μ falls at least by κ_μ a turn to the floor, and never more than _MAX_BARRIER_UPDATES turns
    mu, _ = jax.lax.while_loop(lambda c: solved(c[0]) & (c[1] < _MAX_BARRIER_UPDATES), decrease, (s.mu, 0))
    return mu, jax.tree.map(lambda a, b: jnp.where(mu < s.mu, a, b), s.filter.reset(), s.filter)


def _step(p: Scaled, s: State, lin: Linearisation, R, rhs, d, alpha_max, tau, mu, flt, options: NLPOptions):
    """The next point: by the filter line search with its second-order correction (eqs. 26–28), or, while
    restoring, by backtracking on ``θ`` (:mod:`.restoration`), both by one loop (:func:`.filter.search`) that
    traces the constraints once. A failed line search with ``θ`` above `tol` starts restoration from this point,
    which the filter then takes. Returns ``(y, α, ok, filter, restoring, θ_ref)``."""
    y, N = s.y, s.y.shape[0]
    theta, phi = jnp.sum(jnp.abs(lin.h)), p.barrier(s.y, mu, lin.f)

    def trial(z):
        h = p.h(z)
        return jnp.sum(jnp.abs(h)), p.barrier(z, mu), h

    def corrected(h_trial):
        d_soc, _ = newton_solve(R, p, lin, rhs.at[N:].set(-(alpha_max * lin.h + h_trial)))
        return y + _fraction_to_boundary(p, y, d_soc, tau) * d_soc

    slope = p.barrier_gradient(lin.g, y, mu) @ d
    y_t, alpha_t, ok_t, flt_f, theta_t, phi_t = search(flt, trial, corrected, y, d, alpha_max, theta, phi, slope,
                                                       options.max_backtracks, restoring=s.restoring)
    found = s.restoring & ok_t  # restoration's backtracking found a point
    leave = found & (theta_t <= restoration.KAPPA_RESTO * s.theta_ref) & flt.acceptable(theta_t, phi_t)
    ok_f = ~s.restoring & ok_t
    enter = ~s.restoring & ~ok_f & (theta > options.tol)
    where = lambda c, a, b: jax.tree.map(lambda u, v: jnp.where(c, u, v), a, b)  # noqa: E731
    flt = where(enter, flt.add(theta, phi), where(s.restoring, flt, flt_f))
    alpha = jnp.where(s.restoring, jnp.where(found, alpha_t, 0.0), jnp.where(enter, 0.0, alpha_t))
    y_new = where(s.restoring, where(found, y_t, y), where(enter, y, y_t))
    return (y_new, alpha, jnp.where(s.restoring, found, ok_f | enter), flt,
            jnp.where(s.restoring, found & ~leave, enter), jnp.where(enter, theta, s.theta_ref))


def _iterate(p: Scaled, s: State, options: NLPOptions) -> State:
    """One iteration: derivatives, barrier update, Newton step (while restoring, the objective dropped and the
    Hessian replaced by ``√μ I``), line search, multiplier update (``λ`` kept while restoring). A new point with
    $\\|x\\|_\\infty >$ `diverging_iterates_tol`, ``x`` the variables of ``y`` without the slacks (unscaled: the
    scaling is of the functions), ends the solve as ``unbounded`` (IPOPT's divergence test)."""
    y, lam, zl, zu = s.y, s.lam, s.zl, s.zu
    lin = linearise(p, y)
    mc = lin.Jc.shape[0]
    W = hessian(p.f, p.cd, y[: p.n], lam[:mc], lam[mc:], p.sparsity, p.joint)
    error = optimality_error(p, y, lam, zl, zu, 0.0, lin)
    converged = error <= options.tol
    mu, flt = _barrier_update(p, s, lin, options)
    tau = jnp.maximum(options.tau_min, 1.0 - mu)
    sl, su = p.slacks(y)
    sigma = p.sigma(y, zl, zu)
    rhs = -jnp.concatenate([p.barrier_gradient(jnp.where(s.restoring, 0.0, lin.g), y, mu), lin.h])
    R, d, lam_plus, delta, regular = _newton(p, W.with_identity(s.restoring, jnp.sqrt(mu)), lin, sigma, rhs,
                                             s.delta, mu)
    dzl = jnp.where(p.has_lower, mu / sl - zl - zl / sl * d, 0.0)
    dzu = jnp.where(p.has_upper, mu / su - zu + zu / su * d, 0.0)
    alpha_max = _fraction_to_boundary(p, y, d, tau)
    alpha_z = jnp.minimum(_dual_fraction(zl, dzl, p.has_lower, tau), _dual_fraction(zu, dzu, p.has_upper, tau))
    y_new, alpha, ok, flt, restoring, theta_ref = _step(p, s, lin, R, rhs, d, alpha_max, tau, mu, flt, options)
    lam_new = lam + jnp.where(s.restoring, 0.0, alpha) * (lam_plus - lam)
    zl_new, zu_new = zl + alpha_z * dzl, zu + alpha_z * dzu
    # safeguard: z within a factor κ_Σ of μ / slack (eq. 16)
    sl_new, su_new = p.slacks(y_new)
    zl_new = jnp.where(p.has_lower, jnp.clip(zl_new, mu / (_KAPPA_SIGMA * sl_new), _KAPPA_SIGMA * mu / sl_new), 0.0)
    zu_new = jnp.where(p.has_upper, jnp.clip(zu_new, mu / (_KAPPA_SIGMA * su_new), _KAPPA_SIGMA * mu / su_new), 0.0)
    finite = (jnp.isfinite(lin.f) & jnp.all(jnp.isfinite(lin.g)) & jnp.all(jnp.isfinite(lin.h))
              & lin.Jc.all_finite() & lin.Jd.all_finite() & W.all_finite())
    step = s.step + 1
    diverged = jnp.max(jnp.abs(y_new[: p.n]), initial=0.0) > options.diverging_iterates_tol
    stopped = NLPResults.where(diverged, NLPResults.unbounded, NLPResults.iteration_limit)
    failed = NLPResults.where(~ok, _failure(lin.h, options), stopped)
    result = NLPResults.where(converged, NLPResults.successful,
                              NLPResults.where(~finite, NLPResults.nonfinite,
                                               NLPResults.where(~regular, _singular(lin.h, options), failed)))
    done = converged | ~finite | ~regular | ~ok | diverged | (step >= options.max_steps)
    keep = converged | ~finite | ~regular
    pick = lambda old, new: jnp.where(keep, old, new)  # noqa: E731
    new = State(pick(y, y_new), pick(lam, lam_new), pick(zl, zl_new), pick(zu, zu_new), mu, flt,
                jnp.where(regular & ~s.restoring, delta, s.delta), error, lin.h, jnp.where(keep, s.step, step),
                result, done & keep, restoring & ~keep, theta_ref, done & ~keep)
    last = eqx.tree_at(lambda t: (t.h, t.done, t.evaluating), s, (lin.h, jnp.asarray(True), jnp.asarray(False)))
    return jax.tree.map(lambda a, b: jnp.where(s.evaluating, a, b), last, new)


def _singular(h, options) -> NLPResults:
    """A Newton matrix singular after regularisation: where the constraints are violated, the iterates are
    stuck at bounds that keep them infeasible (local infeasibility); else a degenerate problem."""
    return NLPResults.where(jnp.max(jnp.abs(h), initial=0.0) > jnp.sqrt(options.tol), NLPResults.infeasible,
                            NLPResults.singular_newton)


def _failure(h, options) -> NLPResults:
    """A failed line search: infeasible where the constraints are violated, else a step failure."""
    return NLPResults.where(jnp.max(jnp.abs(h), initial=0.0) > jnp.sqrt(options.tol), NLPResults.infeasible,
                            NLPResults.step_failure)


def initial_point(lower, upper, y0, options: NLPOptions):
    """``y0`` moved inside its bounds (IPOPT §3.6: ``bound_push`` and ``bound_frac`` both `bound_push`)."""
    k = options.bound_push
    has_lower, has_upper = jnp.isfinite(lower), jnp.isfinite(upper)
    width = jnp.where(has_lower & has_upper, upper - lower, jnp.inf)
    pl = jnp.minimum(k * jnp.maximum(1.0, jnp.abs(lower)), k * width)
    pu = jnp.minimum(k * jnp.maximum(1.0, jnp.abs(upper)), k * width)
    y = jnp.where(has_lower, jnp.maximum(y0, lower + pl), y0)
    return jnp.where(has_upper, jnp.minimum(y, upper - pu), y)


def start(p: Scaled, y0, options: NLPOptions, evaluated=None) -> State:
    """The first iterate: ``y0`` moved inside the bounds, ``z = 1`` and the least-squares ``λ``
    (:func:`.restoration.least_squares_multipliers`); `evaluated`: as in :func:`linearise`, at that point."""
    y = initial_point(p.lower, p.upper, y0, options)
    one = jnp.ones_like(y)
    zl, zu = jnp.where(p.has_lower, one, 0.0), jnp.where(p.has_upper, one, 0.0)
    lin = linearise(p, y, evaluated)
    R = newton.factor(zero_hessian(p.sparsity, p.n, y.dtype), lin.Jc, lin.Jd, one[:p.n], one[p.n:], 0.0, 0.0,
                      newton.structure(p.sparsity, lin.Jc.shape[0]))
    lam = restoration.least_squares_multipliers(lambda r: newton_solve(R, p, lin, r), lin.g, zl, zu, lin.h)
    mu = jnp.asarray(options.mu_init, y.dtype)
    inf = jnp.full_like(mu, jnp.inf)
    return State(y, lam, zl, zu, mu, Filter.start(jnp.sum(jnp.abs(lin.h))), jnp.zeros_like(mu), inf, lin.h,
                 jnp.asarray(0), NLPResults.successful, jnp.asarray(False), jnp.asarray(False), inf,
                 jnp.asarray(False))


def solve(p: Scaled, y0, m: int, options: NLPOptions, evaluated=None) -> State:
    """Run the iterations from :func:`start` (`m`, the number of constraints, is that of its multipliers)."""
    return jax.lax.while_loop(lambda s: ~s.done, lambda s: _iterate(p, s, options), start(p, y0, options, evaluated))
