r"""The filter line search of IPOPT (Wächter & Biegler 2006, §2.3–2.4, Algorithm A steps A-5 to A-8).

A trial point ``y_α = y + α d`` is judged by the constraint violation ``θ = ‖h‖_1`` and the barrier objective
``φ``. Where the step promises enough decrease of ``φ`` (the switching condition, eq. 19) and ``θ`` is small,
it must give Armijo's decrease of ``φ`` (eq. 20); otherwise it must reduce ``θ`` or ``φ`` enough against the
current point (eq. 18) and not be dominated by an entry of the filter, which then takes the current point's
margins (eq. 22). A rejected full step is tried once with a second-order correction (eqs. 26–28), which
avoids the Maratos effect; then ``α`` is halved.
"""

import equinox as eqx
import jax
import jax.numpy as jnp

from .._custom_types import Array, Float, Int, Scalar

SIZE = 64  # entries kept (the oldest is replaced when full)
_GAMMA_THETA, _GAMMA_PHI, _ETA = 1e-5, 1e-8, 1e-4
_S_THETA, _S_PHI, _DELTA = 1.1, 2.3, 1.0
_TINY, _TINY_THETA = 10.0, 1e-4  # IPOPT's tiny_step_tol (in ε_mach) and the violation below which it applies


class Filter(eqx.Module):
    """Forbidden ``(θ, φ)`` corners (``+inf`` for empty slots), the next slot, and the bounds ``θ_max``,
    ``θ_min`` fixed at the start (eq. 21 and §2.4)."""

    entries: Float[Array, "F 2"]
    slot: Int[Array, ""]
    theta_max: Scalar
    theta_min: Scalar

    @classmethod
    def start(cls, theta0) -> "Filter":
        entries = jnp.full((SIZE, 2), jnp.inf, theta0.dtype)
        big = jnp.maximum(1.0, theta0)
        return cls(entries, jnp.asarray(0), 1e4 * big, 1e-4 * big)

    def reset(self) -> "Filter":
        return eqx.tree_at(lambda f: f.entries, self, jnp.full_like(self.entries, jnp.inf))

    def acceptable(self, theta, phi):
        dominated = (theta >= self.entries[:, 0]) & (phi >= self.entries[:, 1])
        return (theta <= self.theta_max) & ~jnp.any(dominated)

    def add(self, theta, phi) -> "Filter":
        corner = jnp.stack([(1 - _GAMMA_THETA) * theta, phi - _GAMMA_PHI * theta])
        entries = self.entries.at[self.slot].set(corner)
        return eqx.tree_at(lambda f: (f.entries, f.slot), self, (entries, (self.slot + 1) % SIZE))


def _judge(flt: Filter, theta, phi, slope, theta_t, phi_t, alpha):
    """Whether the trial is accepted and whether the filter must take the current point (an θ-type step)."""
    switching = (slope < 0) & (alpha * (-slope) ** _S_PHI > _DELTA * theta**_S_THETA)
    le = lambda a, b, base: a - b <= 10 * jnp.finfo(phi.dtype).eps * jnp.abs(base)  # noqa: E731 (IPOPT's Compare_le)
    armijo = le(phi_t, phi + _ETA * alpha * slope, phi)
    f_type = switching & (theta <= flt.theta_min)
    decrease = le(theta_t, (1 - _GAMMA_THETA) * theta, theta) | le(phi_t, phi - _GAMMA_PHI * theta, phi)
    finite = jnp.isfinite(theta_t) & jnp.isfinite(phi_t)
    ok = finite & flt.acceptable(theta_t, phi_t) & jnp.where(f_type, armijo, decrease)
    return ok, ~(f_type & armijo)


def search(flt: Filter, trial, soc_direction, y, d, alpha_max, theta, phi, slope, max_backtracks, restoring=False):
    """Backtracking from ``alpha_max``: `trial(y)` gives ``(θ, φ, h)`` and `soc_direction(h_trial)` the
    corrected point of a rejected full step. A tiny step (``|d_i| ≤ 10 ε (1 + |y_i|)``, with ``θ ≤ 10⁻⁴``), whose
    trials would differ from ``y`` by rounding alone, is taken whole without a trial, as IPOPT does
    (``tiny_step_tol``). With `restoring`, the same loop (one traced trial for both) backtracks on ``θ`` alone
    instead (:mod:`.restoration`): ``θ(y + α d) ≤ (1 − 10⁻⁴ α) θ``, at most `max_backtracks` trials, no correction.
    Returns ``(y_new, α, accepted, filter, θ, φ)``, the last two of the last trial."""
    tiny = (jnp.max(jnp.abs(d) / (1.0 + jnp.abs(y)), initial=0.0) <= _TINY * jnp.finfo(y.dtype).eps) & (
        theta <= _TINY_THETA) & ~restoring

    def body(c):
        k, alpha, y_t, _, augment, _, _ = c
        theta_t, phi_t, h_t = trial(y_t)
        ok, aug = _judge(flt, theta, phi, slope, theta_t, phi_t, alpha)
        ok = jnp.where(restoring, theta_t <= (1 - 1e-4 * alpha) * theta, ok)
        use_soc = (k == 0) & (theta_t >= theta) & ~ok & ~restoring
        alpha_next = jnp.where(use_soc, alpha, 0.5 * alpha)
        y_next = jax.lax.cond(use_soc, soc_direction, lambda _: y + alpha_next * d, h_t)
        return (k + 1, jnp.where(ok, alpha, alpha_next), jnp.where(ok, y_t, y_next), ok, aug, theta_t, phi_t)

    trials = jnp.where(restoring, max_backtracks, max_backtracks + 2)
    init = (0, alpha_max, y + alpha_max * d, tiny, ~tiny, theta, phi)
    _, alpha, y_new, ok, augment, theta_t, phi_t = jax.lax.while_loop(lambda c: ~c[3] & (c[0] < trials), body, init)
    flt = jax.tree.map(lambda a, b: jnp.where(ok & augment, a, b), flt.add(theta, phi), flt)
    return y_new, alpha, ok, flt, theta_t, phi_t
