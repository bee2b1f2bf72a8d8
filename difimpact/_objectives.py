r"""Differentiable objectives of an impact: scalar (or small vector) functions of a model, a pre-impact state
and contact parameters, for ``jax.grad``, ``jax.jacfwd``, ``jax.vmap`` and ``jax.jit`` (issue 5, item 1).

Each function is a thin wrapper around one map — :func:`~difimpact.impact` (impulsive, with post-impact
constraints), :func:`~difimpact.frictional_impact` (single point with Coulomb friction) or
:func:`~difimpact.compliant_impact` (finite-time contact) — and passes its keyword options through. Build the
pre-impact state with the model's own kinematic conditions (``CompassGait.pre_impact_state``,
``BipedWithTorso.pre_impact_state``, ``CrutchWalker.pre_impact_state``, ``SevenLinkHuman.heel_strike_state``):
they are differentiable, so the gradient with respect to a posture angle includes the change of the contact
geometry (the crutch angle ``q6`` that keeps the tip on the ground comes from an implicit-function derivative).
"""

import jax.numpy as jnp

from ._compliant import Contact, compliant_impact
from ._custom_types import Array, Config, Float, Scalar, ScalarLike, Velocity
from ._impact.constrained import impact
from ._impact.frictional import frictional_impact
from ._models.base import AbstractPlanarModel


def energy_loss(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity, **impact_options) -> Scalar:
    """Kinetic energy lost at an impulsive impact, ``T⁻ − T⁺ = T_c⁻ − T_c⁺`` [J] (seed 002, eqs. 23–24;
    seed 003, eq. 21). `impact_options` are those of :func:`~difimpact.impact` (``stick``, ``blocked``, …)."""
    return impact(model, q, qdot_minus, **impact_options).loss


def energy_index(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity, **impact_options) -> Scalar:
    """``ξ = (T⁻ − T⁺) / T⁻``, the fraction of the kinetic energy dissipated (seed 002, eq. 23)."""
    return impact(model, q, qdot_minus, **impact_options).xi


def constrained_energy_index(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity,
                             **impact_options) -> Scalar:
    """``ξ_I = T_c⁻ / T⁻``, the share of the pre-impact energy in the space of constrained motion
    (seed 003, eq. 23); equal to :func:`energy_index` when ``b⁺ = 0``."""
    return impact(model, q, qdot_minus, **impact_options).xi_I


def impulses(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity, **impact_options
             ) -> Float[Array, " m"]:
    """Impulses ``λ̄`` of the post-impact constraint rows, laid out as in :func:`~difimpact.impact` [N s]
    (seed 002, eq. 22)."""
    return impact(model, q, qdot_minus, **impact_options).impulses


def post_impact_velocity(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity, point: str,
                         **impact_options) -> Float[Array, " 2"]:
    """Velocity ``(v_x, v_y)`` of the named point after the impact, ``J_point(q) q̇⁺`` [m/s] — e.g. the
    stance-foot lift-off velocity ``v_Sn⁺`` of seed 003 (eq. 4) is the ``y`` entry for ``P_R``."""
    return model.point_jacobian(q, point) @ impact(model, q, qdot_minus, **impact_options).qdot_plus


def sliding_margin(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity, point: str = "Q",
                   mu: ScalarLike = 0.75) -> Scalar:
    """Distance to sliding ``μ − μ_c`` with ``μ_c = |w_nt| / w_tt`` the critical friction of the point's
    impact (seed 000, eq. 8): positive when the impact ends sticking, negative when it slides."""
    return mu - frictional_impact(model, q, qdot_minus, point, mu).mu_c


def peak_contact_force(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity,
                       contacts: tuple[Contact, ...], **compliant_options) -> Scalar:
    r"""Peak normal force of the first contact during the compliant contact phase [N] (seed 001, §1: the
    compliant model's estimate of the maximum impact force).

    :func:`~difimpact.compliant_impact` reports the largest force over its accepted steps; its derivative
    treats the step times as fixed (diffrax does not differentiate step-size selection), which makes the
    gradient of the sampled maximum wrong at first order in the step size. Here the peak is the vertex of the
    parabola through the largest sample and its two neighbours in time,

    $$F^* = F_k - \frac{\beta^2}{4\alpha},\qquad F(t_k + s) \approx F_k + \beta s + \alpha s^2,$$

    whose value and derivative are those of the true peak up to the interpolation error (envelope theorem:
    ``dF*/dp = ∂F/∂p`` at the peak). The vertex is clamped to the bracketing interval; without a bracketing
    sample (peak at an end of the history) the largest sample is returned. Measured on the crutch tip at
    ``rtol = 1e-9``: the gradient agrees with finite differences to 2.4e-4 relative (the spread of the finite
    differences over their step size); the raw sampled maximum was 1 % off at ``rtol = 1e-6``.

    `compliant_options` are those of :func:`~difimpact.compliant_impact` (``history`` is forced on).
    """
    hist = compliant_impact(model, q, qdot_minus, contacts, **{**compliant_options, "history": True}).history
    order = jnp.argsort(hist.t)  # padding (t = inf) goes last, samples of all phases in time order
    t, f = hist.t[order], hist.F_n[order, 0]
    valid = jnp.isfinite(t)
    k = jnp.argmax(jnp.where(valid, f, -jnp.inf))
    last = jnp.sum(valid) - 1
    inside = (k > 0) & (k < last)
    i0, i2 = jnp.clip(k - 1, 0, last), jnp.clip(k + 1, 0, last)
    s0, s2 = t[i0] - t[k], t[i2] - t[k]
    s0 = jnp.where(inside, s0, -1.0)
    s2 = jnp.where(inside, s2, 1.0)
    d0, d2 = (f[i0] - f[k]) / s0, (f[i2] - f[k]) / s2
    alpha = (d2 - d0) / (s2 - s0)
    concave = inside & (alpha < 0)
    alpha = jnp.where(concave, alpha, -1.0)
    beta = d2 - alpha * s2
    s = jnp.clip(-beta / (2 * alpha), s0, s2)
    return jnp.where(concave, f[k] + beta * s + alpha * s**2, f[k])
