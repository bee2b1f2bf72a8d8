"""Single-point planar impact with Coulomb friction, ended by ``v_n(Q)⁺ = 0`` (Font-Llagunes et al. 2012, §3).

With the normal impulse ``P_n`` as the independent variable (Font-Llagunes et al. 2012, §3.2; Font-Llagunes et al. 2010,
§3.2) the impact is at most two phases, each linear in ``P_n``:

$$
M\\,d\\dot q = (A_n^T + \\tau A_t^T)\\,dP_n,\\qquad
\\tau = \\frac{dP_t}{dP_n} = \\begin{cases} -\\mu\\sigma & \\text{sliding (eq. 19)}\\\\
-w_{nt}/w_{tt} & \\text{sticking (eq. 17)}\\end{cases}
$$

with the Delassus entries ``w_ij = A_i M⁻¹ A_jᵀ``. The regime of Table 2 follows from the state: the first
phase slides in the direction of ``v_t⁻`` (or, from rest, sticks when ``μ ≥ μ_c`` and otherwise slides in
the direction of ``w_nt``); it ends either with ``v_n = 0`` (the impact ends) or with ``v_t = 0`` (eq. 28), after
which the contact sticks when ``μ ≥ μ_c`` and slides back otherwise (eq. 27).

Why friction always stops the approach here: while sliding in the direction ``σ`` of ``v_t⁻``, the normal
rate ``k_σ = w_nn − μσw_nt`` can be ``≤ 0`` (the approach speeds up), but that needs ``μσw_nt ≥ w_nn``, hence
``μ w_tt > σw_nt`` whenever ``w_nn w_tt > w_nt²``, so ``v_t`` reaches zero first and sticking (rate
``w_nn − w_nt²/w_tt > 0``) ends the impact. After reversal, or sliding from rest, the rate is
``w_nn − μ|w_nt| > 0``. Only a Delassus matrix that is not positive definite (``M`` not positive definite)
leaves a final phase whose normal velocity does not grow; that is reported as
``FrictionalImpactResults.approach_not_stopped``, never returned as a negative or infinite impulse.

Gradients: every quantity is a piecewise closed form selected with ``jnp.where``, smooth inside a regime; at
a regime boundary (``μ = μ_c``, the switch impulse reaching ``P_n⁺``, ``v_t⁻ = 0``) the map is continuous but
only one-sided differentiable, and ``jax.grad`` gives the derivative of the regime the state was classified in.
"""

import functools

import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Array, Float, MassMatrix, Scalar, ScalarLike, Velocity
from .._linalg import full_precision, solve_spd
from .._check import failed_check
from .._results import RESULTS
from .._validation import as_float, check, count, flag, instance, psd_matrix, tolerance
from . import regime as _regimes
from .regime import FrictionalRegime, RegimeName


class FrictionalImpactResults(RESULTS):  # pyright: ignore
    """Outcome of :func:`frictional_impact_map`; ``nonfinite``: non-finite velocities, impulses or works from
    finite input (velocities or masses too large for the floating-point range)."""

    successful = ""
    approach_not_stopped = (
        "friction cannot stop the normal approach: the normal velocity of the contact point does not "
        "grow with the normal impulse in the final phase (A M⁻¹ Aᵀ is not positive definite; check M and "
        "the contact rows)."
    )


_NONFINITE = ("The frictional impact gave non-finite velocities, impulses or works (or phase slopes dq̇/dP_n, ∝ 1/M) "
              "from finite input: an overflow (velocities or masses too large, or masses too small, for the "
              "floating-point range).")


class FrictionalImpactSolution(eqx.Module):
    """Result of a frictional single-point impact (Font-Llagunes et al. 2012, §3.1). Every field may carry batch axes.

    - `qdot_plus`: post-impact velocities ``q̇⁺`` (eqs. 6, 21, 30).
    - `normal_impulse`, `tangential_impulse`: ``P_n⁺ ≥ 0`` and ``P_t⁺`` with ``|P_t⁺| ≤ μ P_n⁺``.
    - `normal_work`, `tangential_work`: ``W_n⁺``, ``W_t⁺`` (eqs. 15–34), summing to ``ΔT = T⁺ − T⁻``.
    - `regime`: a :class:`~difimpact.FrictionalRegime` item; `regime_name` its name.
    - `switch_impulse`: ``P_n`` at the end of the first phase (eq. 28, $P_n^\\sigma$); equal to ``P_n⁺`` for
      the single-phase regimes ``stick``, ``slide`` and ``slide-from-rest``.
    - `mu_c`: critical friction (eq. 8): with ``μ ≥ μ_c`` a stick, once reached, is kept (Table 2); an impact
      that starts sliding may still end sliding. `mu_stick`: the least ``μ`` for which it ends stuck (``stick``,
      ``slide-stick``), $\\max(\\mu_c, |P_t^*|/P_n^*)$ with $P^* = -(A M^{-1} A^T)^{-1} v^-$ the sticking
      map's impulse (``v⁺ = 0``), ``inf`` when $P_n^* \\le 0$.
    - `result`: :class:`FrictionalImpactResults` item.

    The remaining fields describe the two linear phases in ``P_n`` and are used by :meth:`at` and
    :func:`impulse_space_path`: `jacobian` ``[A_n; A_t]``, `qdot_minus`, the slopes ``dq̇/dP_n`` of each
    phase (`slopes`, ``(2, n)``) and ``dP_t/dP_n`` (`tangent_rates`, ``(2,)``).
    """

    qdot_plus: Velocity
    normal_impulse: Scalar
    tangential_impulse: Scalar
    normal_work: Scalar
    tangential_work: Scalar
    regime: FrictionalRegime
    switch_impulse: Scalar
    mu_c: Scalar
    mu_stick: Scalar
    result: FrictionalImpactResults
    jacobian: Float[Array, "2 n"]
    qdot_minus: Velocity
    slopes: Float[Array, "2 n"]
    tangent_rates: Float[Array, " 2"]

    @property
    def regime_name(self) -> RegimeName:
        """The paper's name of the regime (``"slide-stick"``, …): a string, an array of them for a batched result."""
        return _regimes.names(self.regime)

    @property
    def energy_change(self) -> Scalar:
        """``ΔT = W_n⁺ + W_t⁺`` (Font-Llagunes et al. 2012, eq. 39)."""
        return self.normal_work + self.tangential_work

    @full_precision
    def at(self, pn: ScalarLike) -> tuple[Velocity, Scalar, Scalar, Scalar]:
        """State at normal impulse ``pn`` (``0 ≤ pn ≤ P_n⁺``) of an unbatched result: ``(q̇, P_t, W_n, W_t)``.

        Exact: ``q̇`` and ``P_t`` are piecewise linear in ``P_n``, the works piecewise quadratic,
        ``W_n = ∫ v_n dP_n`` and ``W_t = ∫ v_t dP_t`` (Font-Llagunes et al. 2012, eqs. 15–16, 31–32).
        """
        p1 = jnp.minimum(pn, self.switch_impulse)
        p2 = jnp.maximum(pn - self.switch_impulse, 0.0)
        d1, d2 = self.slopes
        t1, t2 = self.tangent_rates
        v0 = self.jacobian @ self.qdot_minus
        g1, g2 = self.jacobian @ d1, self.jacobian @ d2
        vi = v0 + g1 * self.switch_impulse
        # ∫ v dP_n per phase (v linear in P_n); W_t weights v_t by dP_t/dP_n; (g p) p: p² underflows at huge μ.
        i1 = v0 * p1 + 0.5 * (g1 * p1) * p1
        i2 = vi * p2 + 0.5 * (g2 * p2) * p2
        qdot = self.qdot_minus + p1 * d1 + p2 * d2
        return qdot, t1 * p1 + t2 * p2, i1[0] + i2[0], t1 * i1[1] + t2 * i2[1]


def _safe_div(num, den, ok):
    """``num / den`` where ``ok``, else ``inf``; the double ``where`` keeps gradients finite."""
    return jnp.where(ok, num / jnp.where(ok, den, 1.0), jnp.inf)


def _sign(x):
    return jnp.where(x >= 0, 1.0, -1.0)


def _checked_inputs(M, a_n, a_t, qdot_minus, mu):
    """``[a_n; a_t]``, ``q̇⁻`` and ``μ ≥ 0`` as float arrays of the mass matrix's size."""
    n = M.shape[0]
    A = jnp.stack([as_float("a_n", a_n, shape=(n,)), as_float("a_t", a_t, shape=(n,))])
    mu = as_float("mu", mu, shape=())
    return A, as_float("qdot_minus", qdot_minus, shape=(n,)), check(mu, mu < 0, "`mu` must be non-negative.")


def frictional_impact_map(
    M: MassMatrix,
    a_n: Velocity,
    a_t: Velocity,
    qdot_minus: Velocity,
    mu: ScalarLike,
    *,
    rest_tol: float = 1e-9,
    throw: bool = True,
) -> FrictionalImpactSolution:
    """Frictional single-point impact ended by ``v_n⁺ = 0`` (Font-Llagunes et al. 2012, eq. 3), regime from the state.

    With ``w_ij = A_i M⁻¹ A_jᵀ`` the critical friction is ``μ_c = |w_nt| / w_tt`` (Font-Llagunes et al. 2012, eq. 8).
    Each phase integrates ``M dq̇ = (A_nᵀ + τ A_tᵀ) dP_n`` exactly (eqs. 17, 20): sliding ``τ = −μσ`` with
    ``P_n = −A_n q̇⁻ / A_n M⁻¹(A_nᵀ − μσA_tᵀ)`` (eq. 22), switch at
    $P_n^\\sigma  = -A_t \\dot{q}^- / A_t M^{-1}(A_n^\\top - \\mu \\sigma A_t^\\top)$ (eq. 28), then sticking (end state
    eq. 10) or reversal (eqs. 29–30); works from eqs. 18, 24–25, 31–32.

    **Arguments:**

    - `M`: ``(n, n)`` symmetric positive definite mass matrix (checked, to ``√ε``).
    - `a_n`, `a_t`: ``(n,)`` normal and tangential rows of the contact Jacobian (eq. 2).
    - `qdot_minus`: ``(n,)`` pre-impact velocities, approaching: ``A_n q̇⁻ < 0``.
    - `mu`: friction coefficient ``μ ≥ 0`` (beyond ``10¹² max(1, μ_c)`` it acts as that: a relative change
      below ``10⁻¹²``, and the sliding phase's impulse, ``∝ 1/μ``, stays representable).
    - `rest_tol`: ``v_t⁻`` counts as zero (Table 2, first row) when ``|v_t⁻| ≤ rest_tol · |v_n⁻|``;
      ``0 ≤ rest_tol < 10⁻³`` (a larger one would turn sliding impacts into impacts from rest).
    - `throw`: raise on a failed result (``approach_not_stopped``, ``nonfinite``); otherwise return it in
      `result` (with zero impulses for ``approach_not_stopped``).

    **Returns:** a :class:`FrictionalImpactSolution`. It is solved in units of ``max|M|`` and ``max|q̇⁻|``, so
    masses and speeds anywhere in the floating-point range keep their digits; only a result below the smallest
    normal number (``2.2·10⁻³⁰⁸`` in float64: XLA flushes subnormal numbers) is returned as zero.
    """
    return _map(psd_matrix("M", M, definite=True), a_n, a_t, qdot_minus, mu, rest_tol, throw)


def _power_of_two(x):
    """``2^e`` with ``1 ≤ max|x| / 2^e < 2`` (``1`` where ``x`` is zero or not finite), from a stopped gradient:
    dividing by it is exact, and the map is homogeneous in ``M`` and ``q̇⁻``, so its derivatives are unchanged."""
    big = jax.lax.stop_gradient(jnp.max(jnp.abs(x)))
    _, e = jnp.frexp(jnp.where(jnp.isfinite(big) & (big > 0), big, 1.0))
    return jnp.ldexp(jnp.ones_like(big), e - 1)


@full_precision
def _map(M, a_n, a_t, qdot_minus, mu, rest_tol, throw) -> FrictionalImpactSolution:
    """:func:`frictional_impact_map` for a mass matrix already known to be symmetric positive definite.

    Solved in units where ``max|M| ≈ 1`` and ``max|q̇⁻| ≈ 1`` (powers of two ``m``, ``s``): the map is homogeneous
    (Font-Llagunes et al. 2012, eqs. 17–22 are linear in ``q̇⁻`` and in ``M``), ``q̇⁺ ∝ s``, impulses ``∝ m s``, works
    ``∝ m s²``, so no intermediate product leaves the normal range
    (XLA flushes subnormal numbers to zero) unless the result itself does.
    """
    A, qdot_minus, mu = _checked_inputs(M, a_n, a_t, qdot_minus, mu)
    rest_tol = tolerance("rest_tol", rest_tol, below=1e-3, allow_zero=True)
    m, s = _power_of_two(M), _power_of_two(qdot_minus)
    unit = _unit_map(M / m, A, qdot_minus / s, mu, rest_tol)
    qdot_plus, pt, wn, wt = unit.at(unit.normal_impulse)
    qdot_plus, pn, pt = qdot_plus * s, unit.normal_impulse * m * s, pt * m * s
    wn, wt = wn * m * s * s, wt * m * s * s  # (W m) s s: no partial product leaves the range the result is in
    slopes, switch = unit.slopes / m, unit.switch_impulse * m * s
    failed = unit.result != FrictionalImpactResults.successful
    overflow = ~jnp.all(jnp.isfinite(jnp.concatenate([qdot_plus, slopes.ravel(), jnp.stack([pn, pt, wn, wt, switch])])))
    result = FrictionalImpactResults.where(overflow & ~failed, FrictionalImpactResults.nonfinite, unit.result)
    if flag("throw", throw):
        qdot_plus = failed_check(qdot_plus, result, FrictionalImpactResults, _NONFINITE)
    return FrictionalImpactSolution(
        qdot_plus=qdot_plus, normal_impulse=pn, tangential_impulse=pt, normal_work=wn, tangential_work=wt,
        regime=unit.regime, switch_impulse=switch, mu_c=unit.mu_c, mu_stick=unit.mu_stick,
        result=result, jacobian=A, qdot_minus=qdot_minus, slopes=slopes, tangent_rates=unit.tangent_rates,
    )


def _unit_map(M, A, qdot_minus, mu, rest_tol) -> FrictionalImpactSolution:
    """The regime, impulses and phases of the impact (its ``q̇⁺``, ``P_t`` and works not yet filled in)."""
    X = solve_spd(M, A.T, "M")  # M⁻¹ Aᵀ, (n, 2)
    w = A @ X
    w_nn, w_tt, w_nt = w[0, 0], w[1, 1], 0.5 * (w[0, 1] + w[1, 0])
    w_tt = check(w_tt, ~(w_tt > 0), "`a_t` gives A_t M⁻¹ A_tᵀ <= 0: the tangential row must be nonzero and "
                 "`M` positive definite.")
    v_n, v_t = A @ qdot_minus
    v_n = check(v_n, ~(v_n < 0), "the contact point must approach the ground: A_n q̇⁻ < 0 (`qdot_minus`).")
    mu_c = jnp.abs(w_nt) / w_tt
    # The sticking map's P* = −W⁻¹v: |P_t*| / P_n* = |w_nn v_t − w_nt v_n| / (w_nt v_t − w_tt v_n) (det W > 0).
    stick_den = w_nt * v_t - w_tt * v_n
    can_stick = mu >= mu_c
    rest = jnp.abs(v_t) <= rest_tol * jnp.abs(v_n)
    ratio = _safe_div(jnp.abs(w_nn * v_t - w_nt * v_n), stick_den, stick_den > 0)
    mu_stick = jnp.where(rest, mu_c, jnp.maximum(mu_c, ratio))  # from rest: sticks iff μ ≥ μ_c (Table 2)
    tau_stick = -w_nt / w_tt

    # First phase: sticking from rest, or sliding along v_t⁻ (from rest: along w_nt, Table 2).
    sigma = jnp.where(rest, _sign(w_nt), _sign(v_t))
    stick_first = rest & can_stick
    mu = jnp.minimum(mu, 1e12 * jnp.maximum(1.0, mu_c))  # more changes < 1e-12; its slide's P_n would underflow
    tau1 = jnp.where(stick_first, tau_stick, -mu * sigma)
    k1 = w_nn + tau1 * w_nt  # dv_n/dP_n
    h1 = w_nt + tau1 * w_tt  # dv_t/dP_n
    p_end1 = _safe_div(-v_n, k1, k1 > 0)
    p_switch = jnp.where(rest, jnp.inf, _safe_div(-v_t, h1, sigma * h1 < 0))
    two_phase = p_switch < p_end1

    # Second phase after v_t = 0: sticking (eq. 17) or sliding back (eq. 27).
    tau2 = jnp.where(can_stick, tau_stick, mu * sigma)
    k2 = w_nn + tau2 * w_nt
    vn_i = v_n + k1 * jnp.where(two_phase, p_switch, 0.0)
    p_end2 = _safe_div(-vn_i, k2, k2 > 0)
    pn = jnp.where(two_phase, p_switch + p_end2, p_end1)

    failed = ~jnp.isfinite(pn)
    result = FrictionalImpactResults.where(
        failed, FrictionalImpactResults.approach_not_stopped, FrictionalImpactResults.successful
    )
    pn = jnp.where(failed, 0.0, pn)
    rates = jnp.stack([tau1, jnp.where(two_phase, tau2, tau1)])
    zero = jnp.zeros_like(pn)
    return FrictionalImpactSolution(
        qdot_plus=qdot_minus, normal_impulse=pn, tangential_impulse=zero, normal_work=zero, tangential_work=zero,
        regime=_regimes.regime(rest, can_stick, two_phase), switch_impulse=jnp.where(two_phase & ~failed, p_switch, pn),
        mu_c=mu_c, mu_stick=mu_stick, result=result, jacobian=A, qdot_minus=qdot_minus,
        slopes=X[:, 0][None, :] + rates[:, None] * X[:, 1][None, :], tangent_rates=rates,
    )


class ImpulsePath(eqx.Module):
    """Evolution through an impact with the normal impulse ``P_n`` as the independent variable (Font-Llagunes et al.
    2012, §3.2, Figs. 13–17), ``k`` samples along ``P_n`` (the switch impulse is one of them):

    - `normal_impulse` ``(k,)``: ``P_n``; `qdot` ``(k, n)``: ``q̇``; `velocity` ``(k, 2)``: the contact-point
      velocity ``[v_n, v_t]``;
    - `tangential_impulse`, `normal_work`, `tangential_work` ``(k,)``: ``P_t``, ``W_n``, ``W_t``.
    """

    normal_impulse: Float[Array, " k"]
    qdot: Float[Array, "k n"]
    velocity: Float[Array, "k 2"]
    tangential_impulse: Float[Array, " k"]
    normal_work: Float[Array, " k"]
    tangential_work: Float[Array, " k"]


@full_precision
def impulse_space_path(impact: FrictionalImpactSolution, num: int = 201) -> ImpulsePath:
    """Sample a :class:`FrictionalImpactSolution` at ``num`` normal impulses from 0 to ``P_n⁺``: ``num − 1``
    evenly spaced points plus the switch impulse $P_n^\\sigma$ (eq. 28), so a piecewise-linear plot is exact. A
    batched result (``vmap``, :func:`~difimpact.sweep`) gives a path with its batch axes in front."""
    instance("impact", impact, FrictionalImpactSolution)
    num = count("num", num, minimum=2)
    path = functools.partial(_path, num=num)
    for _ in jnp.shape(impact.normal_impulse):
        path = jax.vmap(path)
    return path(impact)


def _path(impact: FrictionalImpactSolution, num: int) -> ImpulsePath:
    """:func:`impulse_space_path` of an unbatched result."""
    pn = jnp.sort(jnp.append(jnp.linspace(0.0, 1.0, num - 1) * impact.normal_impulse,
                             impact.switch_impulse))
    qdot, pt, wn, wt = jax.vmap(impact.at)(pn)
    return ImpulsePath(normal_impulse=pn, qdot=qdot, velocity=qdot @ impact.jacobian.T, tangential_impulse=pt,
                       normal_work=wn, tangential_work=wt)


__all__ = [
    "FrictionalImpactResults", "FrictionalImpactSolution", "FrictionalRegime", "ImpulsePath", "frictional_impact_map",
    "impulse_space_path",
]
