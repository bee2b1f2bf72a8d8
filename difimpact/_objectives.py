r"""Differentiable objectives of an impact: scalar (or small vector) functions of a model, a pre-impact state
and contact parameters, for ``jax.grad``, ``jax.jacfwd``, ``jax.vmap`` and ``jax.jit``.

Each function is a thin wrapper around one map — :func:`~difimpact.impact` (impulsive, with post-impact
constraints), :func:`~difimpact.frictional_impact` (single point with Coulomb friction) or
:func:`~difimpact.compliant_impact` (finite-time contact) — and passes its keyword options through. Build the
pre-impact state with the model's own kinematic conditions (``CompassGait.pre_impact_state``,
``BipedWithTorso.pre_impact_state``, ``CrutchWalker.pre_impact_state``, ``SevenLinkHuman.heel_strike_state``):
they are differentiable, so the gradient with respect to a posture angle includes the change of the contact
geometry (the crutch angle ``q6`` that keeps the tip on the ground comes from an implicit-function derivative).
"""

from ._compliant import compliant_impact
from ._contact import Coulomb
from ._custom_types import Array, Config, Float, Scalar, Velocity
from ._impact.frictional_ground import frictional_impact
from ._impact.ground import impact
from ._linalg import full_precision
from ._models.base import AbstractPlanarModel


def energy_loss(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity, **impact_options) -> Scalar:
    """Kinetic energy lost at an impulsive impact, ``T⁻ − T⁺ = T_c⁻ − T_c⁺`` [J] (Ros et al. 2015, eqs. 23–24;
    Font & Kövecses 2008, eq. 21). `impact_options` are those of :func:`~difimpact.impact`
    (``stick``, ``blocked``, …)."""
    return impact(model, q, qdot_minus, **impact_options).loss


def energy_index(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity, **impact_options) -> Scalar:
    """``ξ = (T⁻ − T⁺) / T⁻``, the fraction of the kinetic energy dissipated (Ros et al. 2015, eq. 23)."""
    return impact(model, q, qdot_minus, **impact_options).xi


def constrained_energy_index(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity,
                             **impact_options) -> Scalar:
    """``ξ_I = T_c⁻ / T⁻``, the share of the pre-impact energy in the space of constrained motion
    (Font & Kövecses 2008, eq. 23); equal to :func:`energy_index` when ``b⁺ = 0``."""
    return impact(model, q, qdot_minus, **impact_options).xi_I


def impulses(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity, **impact_options
             ) -> Float[Array, " m"]:
    """Impulses ``λ̄`` of the post-impact constraint rows, laid out as in :func:`~difimpact.impact` [N s]
    (Ros et al. 2015, eq. 22)."""
    return impact(model, q, qdot_minus, **impact_options).impulses


@full_precision
def post_impact_velocity(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity, point: str,
                         **impact_options) -> Float[Array, " 2"]:
    """Velocity ``(v_x, v_y)`` of the named point after the impact, ``J_point(q) q̇⁺`` [m/s] — e.g. the
    stance-foot lift-off velocity ``v_Sn⁺`` of Font & Kövecses 2008 (eq. 4) is the ``y`` entry for ``P_R``."""
    qdot_plus = impact(model, q, qdot_minus, **impact_options).qdot_plus  # validates the model first
    return model.point_jacobian(q, point) @ qdot_plus


def sliding_margin(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity, point: str, *,
                   friction: Coulomb) -> Scalar:
    """``μ − μ_c``, with ``μ_c = |w_nt| / w_tt`` the critical friction of the impact at `point` (Font-Llagunes et
    al. 2012, eq. 8) and ``μ`` the coefficient of its :class:`~difimpact.Coulomb` law `friction` (as
    :func:`~difimpact.frictional_impact` names a contact). Positive: a stick, once reached, is kept (Table 2) —
    an impact from rest sticks, but one that starts sliding may still end sliding (crutch walker, ``q3 = 12°``,
    ``q̇5 = −0.2``: ``μ_c = 0.675``, yet it ends sliding for ``μ < 0.690``). Negative: the contact cannot stay
    stuck. For "the impact ends stuck" use :func:`sticking_margin`."""
    hit = frictional_impact(model, q, qdot_minus, point, friction=friction)  # validates `friction`
    return friction.mu - hit.mu_c


def sticking_margin(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity, point: str, *,
                    friction: Coulomb) -> Scalar:
    r"""``μ − μ_stick``: non-negative exactly when the frictional impact at `point` with the
    :class:`~difimpact.Coulomb` law `friction` ends stuck (``v_t⁺ = 0``: regime ``stick`` or ``slide-stick`` of
    :func:`~difimpact.frictional_impact`).

    ``μ_stick = max(μ_c, |P_t^*| / P_n^*)`` (:attr:`FrictionalImpactSolution.mu_stick`), with $P^* = -W^{-1} v^-$
    the impulse of the sticking map ($W = A M^{-1} A^T$, ``v⁻`` the contact point's pre-impact velocity): an
    impact that ends stuck ends at ``v⁺ = 0``, so its total impulse is ``P*``, which must lie in the friction
    cone, ``|P_t^*| ≤ μ P_n^*``; and the stick must be kept, ``μ ≥ μ_c`` (Font-Llagunes et al. 2012, eq. 8 and
    Table 2). Differentiable wherever ``|P_t^*|/P_n^* ≠ μ_c`` and ``P_t^* ≠ 0`` (a closed form in ``M``, the
    contact rows and ``q̇⁻``); ``−inf`` (zero gradient) when $P_n^* \le 0$: no friction ends that impact stuck.
    """
    hit = frictional_impact(model, q, qdot_minus, point, friction=friction)
    return friction.mu - hit.mu_stick


def peak_contact_force(model: AbstractPlanarModel, q: Config, qdot_minus: Velocity, points, *, normal=None,
                       friction=None, **compliant_options) -> Scalar:
    """Peak normal force of the first contact of `points` during the compliant contact phase [N] (Font-Llagunes
    et al. 2010, §1: the compliant model's estimate of the maximum impact force):
    ``CompliantSolution.peak_normal_force``, the maximum of the cubic Hermite interpolant of ``F_n`` and ``dF_n/dt``
    between accepted steps, O(h⁴) in the step and differentiated by the envelope theorem
    (:func:`~difimpact._compliant.peak.peak_force`).

    `points`, `normal`, `friction` and `compliant_options` are those of :func:`~difimpact.compliant_impact`
    (contacts named by point, laws by keyword).
    """
    return compliant_impact(model, q, qdot_minus, points, normal=normal, friction=friction,
                            **compliant_options).peak_normal_force[0]
