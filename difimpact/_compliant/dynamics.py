r"""Equations of motion with compliant ground contacts (Font-Llagunes et al. 2012, eq. 1 and §4):

$$
M(q)\,\ddot q + c(q, \dot q) = \sum_i A_{n,i}^T F_{n,i} + A_{t,i}^T F_{t,i},
$$

``A_{n,i}, A_{t,i}`` the normal (+y) and tangential (+x) rows of contact ``i``'s Jacobian, ``δ_i = −y_i``
its indentation into the ground ``y = 0`` and ``F_{n,i} = F_n(δ_i, δ̇_i)`` its normal law. A sliding
stick–slip contact has ``F_t = −μ σ F_n`` (Font-Llagunes et al. 2012, eq. 38); a sticking exact-stick contact
(:class:`~difimpact.Coulomb`) the multiplier ``λ`` of the augmented system

$$
\begin{bmatrix} M & -A_t^T \\ A_t & 0 \end{bmatrix}
\begin{bmatrix} \ddot q \\ \lambda \end{bmatrix} =
\begin{bmatrix} -c + A_n^T F_n \\ -\dot A_t \dot q - v_t / \tau \end{bmatrix},
$$

valid while ``|λ| ≤ μ F_n``, with ``τ = 1 ms`` stabilising the drift of ``v_t``; it is solved through the
Schur complement ``A_t M⁻¹ A_tᵀ`` with the unrolled ``LDLᵀ`` of ``difimpact._linalg`` (no LAPACK call under
``vmap``). A sticking elastic-stick contact (:class:`~difimpact.TangentialSpring`) applies its law's force of
the displacement ``z``, and a smooth law (:class:`~difimpact.RegularisedCoulomb`) its force at all times.
"""

import equinox as eqx
import jax
import jax.numpy as jnp

from .._check import mode
from .._contact import AbstractElasticStickLaw, AbstractExactStickLaw, AbstractStickSlipLaw, Contact
from .._custom_types import Array, Bool, Float
from .._linalg import full_precision, solve_spd
from .._models import AbstractPlanarModel
from .state import ContactModes, MM, MS, PhaseState

TAU_STICK = 1.0  # stick stabilisation time constant [ms] (docs/design.md: why not shorter)


def law_is(contacts: tuple[Contact, ...], kind: type) -> Bool[Array, " k"]:
    """Which contacts' friction laws are of type ``kind``."""
    return jnp.array([isinstance(c.friction_law, kind) for c in contacts])


def friction_coefficients(contacts: tuple[Contact, ...], kind: type) -> Float[Array, " k"]:
    """``μ`` of the contacts whose friction law is of type ``kind``, zero for the others."""
    return jnp.stack([c.friction_law.mu if isinstance(c.friction_law, kind) else jnp.zeros(()) for c in contacts])


class FreeMotion(eqx.Module):
    """What the dynamics at one state owe to the state alone, before the friction regimes pick the tangential
    forces: configuration `q` [m, rad] and `qdot` [/s], per contact the indentation `delta` [m], the
    contact-point velocities `v_n`, `v_t` [m/s], the normal force `F_n` [N] and the contact-point
    accelerations at ``q̈ = 0``, `b_n`, `b_t` (``J̇_n q̇``, ``J̇_t q̇``) [m/s²]; the accelerations without
    tangential forces `free_qddot` ``= M⁻¹(−c + A_nᵀ F_n)``, the response to them `Z` ``= M⁻¹ A_tᵀ``
    ``(n, k)``, the contact rows `A_n`, `A_t` ``(k, n)`` and ``W = A_t M⁻¹ A_tᵀ`` ``(k, k)``.

    One per state: the regimes (:func:`tangential_forces`), the stick multipliers that decide a switch
    (:func:`stick_multiplier`) and the force rates (:func:`normal_force_rates`) are cheap given it."""

    q: Float[Array, " n"]
    qdot: Float[Array, " n"]
    delta: Float[Array, " k"]
    v_n: Float[Array, " k"]
    v_t: Float[Array, " k"]
    F_n: Float[Array, " k"]
    b_n: Float[Array, " k"]
    b_t: Float[Array, " k"]
    A_n: Float[Array, "k n"]
    A_t: Float[Array, "k n"]
    free_qddot: Float[Array, " n"]
    Z: Float[Array, "n k"]
    W: Float[Array, "k k"]


class ContactEvaluation(eqx.Module):
    """The dynamics at one state in given regimes: its :class:`FreeMotion` `free`, the accelerations `qddot`
    [/s²], and per contact the tangential force `F_t` [N] and the displacement rate `z_dot` [mm/ms]. The
    kinematics and normal forces are read through (`q`, `qdot`, `delta`, `v_n`, `v_t`, `F_n`)."""

    free: FreeMotion
    qddot: Float[Array, " n"]
    F_t: Float[Array, " k"]
    z_dot: Float[Array, " k"]

    @property
    def q(self) -> Float[Array, " n"]:
        return self.free.q

    @property
    def qdot(self) -> Float[Array, " n"]:
        return self.free.qdot

    @property
    def delta(self) -> Float[Array, " k"]:
        return self.free.delta

    @property
    def v_n(self) -> Float[Array, " k"]:
        return self.free.v_n

    @property
    def v_t(self) -> Float[Array, " k"]:
        return self.free.v_t

    @property
    def F_n(self) -> Float[Array, " k"]:
        return self.free.F_n


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


def free_motion(model: AbstractPlanarModel, contacts: tuple[Contact, ...], q0, y) -> FreeMotion:
    """The :class:`FreeMotion` at the flat state ``y``.

    A jitted function: every caller in a solve (solver stages, event function, records, root find,
    transitions) shares one trace of it, and XLA merges the calls made on the same state. ``M⁻¹`` is applied
    column by column (one ``LDLᵀ`` factorisation): XLA simplifies the resulting scalar chains in a few passes,
    where a matrix right-hand side makes its simplifier move reshapes back and forth through every
    substitution. One trace per mode of the run-time checks (:func:`~difimpact._check.mode`): the singular mass
    matrix's check raises in a caller's program and is NaN in an entry point's own."""
    return _free_motion(model, contacts, q0, y, mode())


@eqx.filter_jit
@full_precision
def _free_motion(model: AbstractPlanarModel, contacts: tuple[Contact, ...], q0, y, checks: str) -> FreeMotion:
    del checks  # a static argument: one trace per mode
    n = q0.shape[0]
    state = PhaseState.unpack(y, n, len(contacts))
    q, qdot = q0 + state.dq * MM, state.qdot
    tree = model.tree()
    rows = []
    for c in contacts:
        p, J, b = tree.point_kinematics(q, qdot, c.point)  # b = J̇ q̇: the acceleration at q̈ = 0
        vel = J @ qdot
        dn = -p[1]
        rows.append((dn, vel[1], vel[0], c.normal_law.force(dn, -vel[1]), b[1], b[0], J[1], J[0]))
    delta, v_n, v_t, F_n, b_n, b_t, A_n, A_t = (jnp.stack(r) for r in zip(*rows))
    M, bias = tree.mass_and_bias(q, qdot)
    free_qddot, *columns = solve_spd(M, (-bias + A_n.T @ F_n, *A_t), "mass_matrix")
    Z = jnp.stack(columns, axis=1)
    return FreeMotion(q, qdot, delta, v_n, v_t, F_n, b_n, b_t, A_n, A_t, free_qddot, Z, A_t @ Z)


def evaluate(model: AbstractPlanarModel, contacts: tuple[Contact, ...], q0, y, modes: ContactModes
             ) -> ContactEvaluation:
    """Accelerations, contact forces and kinematics at the flat state ``y`` in regimes ``modes``."""
    return tangential_forces(contacts, free_motion(model, contacts, q0, y), y, modes)


@full_precision
def tangential_forces(contacts: tuple[Contact, ...], free: FreeMotion, y, modes: ContactModes
                      ) -> ContactEvaluation:
    """The tangential forces, accelerations and displacement rates at the state ``y`` of ``free`` in regimes
    ``modes`` (module docstring)."""
    n, k = free.q.shape[0], len(contacts)
    z = PhaseState.unpack(y, n, k).z * MM
    F_free = jnp.stack([_free_force(c, free.F_n[i], free.v_t[i], z[i], free.delta[i], modes.sigma[i],
                                    modes.stick[i]) for i, c in enumerate(contacts)])
    stick = modes.stick & modes.active & law_is(contacts, AbstractExactStickLaw)
    s = stick.astype(free.q.dtype)
    # Rows of sticking contacts impose a_t = −v_t/τ; the others fix λ to the given friction force:
    # q̈ = M⁻¹(f + A_tᵀλ), and for sticking rows (A_t M⁻¹ A_tᵀ) λ = a_t − A_t M⁻¹ f.
    target = s * (-free.b_t - free.v_t / (TAU_STICK * MS)) + (1.0 - s) * F_free
    fixed = (1.0 - s) * target
    S = s[:, None] * free.W * s[None, :] + jnp.diag(1.0 - s)
    F_t = solve_spd(S, s * (target - free.A_t @ free.free_qddot - free.W @ fixed) + fixed,
                    "sticking contacts' A_t M⁻¹ A_tᵀ")
    # An elastic-stick law's z is integrated in both regimes: sliding does not read it and every entry into
    # stick sets it (onset: 0, slide → stick: the displacement of the sliding force).
    z_dot = jnp.stack([
        jnp.zeros_like(free.F_n[i]) if c.friction_law is None
        else c.friction_law.displacement_rate(free.F_n[i], free.v_t[i], z[i], free.delta[i])
        for i, c in enumerate(contacts)
    ])
    return ContactEvaluation(free, free.free_qddot + free.Z @ F_t, F_t, z_dot)


def stick_multiplier(contacts: tuple[Contact, ...], free: FreeMotion, y, modes: ContactModes, i: int):
    """Multiplier ``λ_i`` if contact ``i`` were to stick now (the others keep their regimes)."""
    trial = eqx.tree_at(lambda m: m.stick, modes, modes.stick.at[i].set(True))
    return tangential_forces(contacts, free, y, trial).F_t[i]


@full_precision
def normal_force_rates(contacts: tuple[Contact, ...], e: ContactEvaluation) -> Float[Array, " k"]:
    """``dF_n/dt`` [N/s] of each contact: the derivative of its normal law along ``(δ̇, δ̈)`` with
    ``δ̈ = −(A_n q̈ + J̇_n q̇)``."""
    free = e.free
    a_n = free.A_n @ e.qddot + free.b_n
    return jnp.stack([jax.jvp(c.normal_law.force, (free.delta[i], -free.v_n[i]), (-free.v_n[i], -a_n[i]))[1]
                      for i, c in enumerate(contacts)])
