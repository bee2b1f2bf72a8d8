r"""Equations of motion with compliant ground contacts (seed 000, eq. 1 and §4):

.. math:: M(q)\,\ddot q + c(q, \dot q) = \sum_i A_{n,i}^T F_{n,i} + A_{t,i}^T F_{t,i},

``A_{n,i}, A_{t,i}`` the normal (+y) and tangential (+x) rows of contact ``i``'s Jacobian, ``δ_i = −y_i``
its indentation into the ground ``y = 0`` and ``F_{n,i} = F_n(δ_i, δ̇_i)`` its normal law. A sliding
stick–slip contact has ``F_t = −μ σ F_n`` (seed 000, eq. 38); a sticking exact-stick contact
(:class:`~difimpact.Coulomb`) the multiplier ``λ`` of the augmented system

.. math:: \begin{bmatrix} M & -A_t^T \\ A_t & 0 \end{bmatrix}
          \begin{bmatrix} \ddot q \\ \lambda \end{bmatrix} =
          \begin{bmatrix} -c + A_n^T F_n \\ -\dot A_t \dot q - v_t / \tau \end{bmatrix},

valid while ``|λ| ≤ μ F_n``, with ``τ = 1 ms`` stabilising the drift of ``v_t``; it is solved through the
Schur complement ``A_t M⁻¹ A_tᵀ`` with the unrolled ``LDLᵀ`` of ``difimpact._linalg`` (no LAPACK call under
``vmap``). A sticking elastic-stick contact (:class:`~difimpact.TangentialSpring`) applies its law's force of
the displacement ``z``, and a smooth law (:class:`~difimpact.RegularisedCoulomb`) its force at all times.
"""

import equinox as eqx
import jax
import jax.numpy as jnp

from .._contact import AbstractElasticStickLaw, AbstractExactStickLaw, AbstractStickSlipLaw, Contact
from .._custom_types import Array, Bool, Float, Scalar
from .._linalg import solve_spd
from .._models import AbstractPlanarModel
from .state import ContactModes, MM, MS, PhaseState

TAU_STICK = 1.0  # stick stabilisation time constant [ms] (docs/design.md: why not shorter)


def law_is(contacts: tuple[Contact, ...], kind: type) -> Bool[Array, " k"]:
    """Which contacts' friction laws are of type ``kind``."""
    return jnp.array([isinstance(c.friction_law, kind) for c in contacts])


def friction_coefficients(contacts: tuple[Contact, ...], kind: type) -> Float[Array, " k"]:
    """``μ`` of the contacts whose friction law is of type ``kind``, zero for the others."""
    return jnp.stack([c.friction_law.mu if isinstance(c.friction_law, kind) else jnp.zeros(()) for c in contacts])


class ContactEvaluation(eqx.Module):
    """The dynamics at one state: configuration `q` [m, rad], `qdot`, `qddot` [/s, /s²], and per contact
    the indentation `delta` [m], the contact-point velocities `v_n`, `v_t` [m/s], the forces `F_n`, `F_t`
    [N] and the displacement rate `z_dot` [mm/ms]."""

    q: Float[Array, " n"]
    qdot: Float[Array, " n"]
    qddot: Float[Array, " n"]
    delta: Float[Array, " k"]
    v_n: Float[Array, " k"]
    v_t: Float[Array, " k"]
    F_n: Float[Array, " k"]
    F_t: Float[Array, " k"]
    z_dot: Float[Array, " k"]


def _free_force(contact: Contact, F_n, v_t, z, delta, sigma, stick):
    """The tangential force of a contact that is not held by a multiplier."""
    law = contact.friction_law
    if law is None:
        return jnp.zeros_like(F_n)
    if isinstance(law, AbstractStickSlipLaw):
        sliding = law.sliding_force(F_n, sigma)
        if isinstance(law, AbstractElasticStickLaw):
            return jnp.where(stick, law.force(F_n, v_t, z, delta), sliding)
        return sliding
    return law.force(F_n, v_t, z, delta)


def evaluate(model: AbstractPlanarModel, contacts: tuple[Contact, ...], q0, y, modes: ContactModes
             ) -> ContactEvaluation:
    """Accelerations, contact forces and kinematics at the flat state ``y`` in regimes ``modes``."""
    n, k = q0.shape[0], len(contacts)
    state = PhaseState.unpack(y, n, k)
    q, qdot = q0 + state.dq * MM, state.qdot
    tree = model.tree()
    rows = []
    for i, c in enumerate(contacts):
        J = tree.point_jacobian(q, c.point)
        vel = J @ qdot
        dn = -tree.point_position(q, c.point)[1]
        fn = c.normal_law.force(dn, -vel[1])
        ft = _free_force(c, fn, vel[0], state.z[i] * MM, dn, modes.sigma[i], modes.stick[i])
        # Ȧ_t q̇: the tangential acceleration of the contact point at q̈ = 0.
        bt = jax.jvp(lambda qq: tree.point_jacobian(qq, c.point)[0] @ qdot, (q,), (qdot,))[1]
        rows.append((dn, vel[1], vel[0], J[1], J[0], bt, fn, ft))
    delta, v_n, v_t, A_n, A_t, b_t, F_n, F_free = (jnp.stack(r) for r in zip(*rows))
    stick = modes.stick & modes.active & law_is(contacts, AbstractExactStickLaw)
    s = stick.astype(q.dtype)
    # Rows of sticking contacts impose a_t = −v_t/τ; the others fix λ to the given friction force:
    # q̈ = M⁻¹(f + A_tᵀλ), and for sticking rows (A_t M⁻¹ A_tᵀ) λ = a_t − A_t M⁻¹ f.
    M, bias = tree.mass_and_bias(q, qdot)
    target = s * (-b_t - v_t / (TAU_STICK * MS)) + (1.0 - s) * F_free
    X = solve_spd(M, jnp.concatenate([(-bias + A_n.T @ F_n)[:, None], A_t.T], axis=1), "mass_matrix")
    free_qddot, Z = X[:, 0], X[:, 1:]
    W = A_t @ Z
    fixed = (1.0 - s) * target
    S = s[:, None] * W * s[None, :] + jnp.diag(1.0 - s)
    F_t = solve_spd(S, s * (target - A_t @ free_qddot - W @ fixed) + fixed, "sticking contacts' A_t M⁻¹ A_tᵀ")
    # An elastic-stick law's z is integrated in both regimes: sliding does not read it and every entry into
    # stick sets it (onset: 0, slide → stick: the displacement of the sliding force).
    z_dot = jnp.stack([
        jnp.zeros_like(F_n[i]) if c.friction_law is None
        else c.friction_law.displacement_rate(F_n[i], v_t[i], state.z[i] * MM, delta[i])
        for i, c in enumerate(contacts)
    ])
    return ContactEvaluation(q, qdot, free_qddot + Z @ F_t, delta, v_n, v_t, F_n, F_t, z_dot)


def stick_multiplier(model: AbstractPlanarModel, contacts: tuple[Contact, ...], q0, y, modes: ContactModes,
                     i: int) -> Scalar:
    """Multiplier ``λ_i`` if contact ``i`` were to stick now (the others keep their regimes)."""
    trial = eqx.tree_at(lambda m: m.stick, modes, modes.stick.at[i].set(True))
    return evaluate(model, contacts, q0, y, trial).F_t[i]


def normal_force_rates(model: AbstractPlanarModel, contacts: tuple[Contact, ...], e: ContactEvaluation
                       ) -> Float[Array, " k"]:
    """``dF_n/dt`` [N/s] of each contact: the derivative of its normal law along ``(δ̇, δ̈)`` with
    ``δ̈ = −(J_n q̈ + J̇_n q̇)``, ``d/dt (J_n(q) q̇)`` a jvp of ``(q, q̇) ↦ J_n(q) q̇`` along ``(q̇, q̈)``."""
    tree = model.tree()
    rates = []
    for i, c in enumerate(contacts):
        a_n = jax.jvp(lambda qq, vv: tree.point_jacobian(qq, c.point)[1] @ vv, (e.q, e.qdot), (e.qdot, e.qddot))[1]
        rates.append(jax.jvp(c.normal_law.force, (e.delta[i], -e.v_n[i]), (-e.v_n[i], -a_n))[1])
    return jnp.stack(rates)
