r"""The compliant contact phase: contact forces in finite time, integrated with diffrax and events.

Equations of motion with compliant contacts at ground points ``i`` (seed 000, eq. 1 and §4):

.. math:: M(q)\,\ddot q + c(q, \dot q) = \sum_i A_{n,i}^T F_{n,i} + A_{t,i}^T F_{t,i},

``A_{n,i}, A_{t,i}`` the normal (+y) and tangential (+x) rows of the contact Jacobian, ``δ_i = −y_i`` the
indentation of the point into the flat ground ``y = 0``, ``F_{n,i} = F_n(δ_i, δ̇_i)`` its normal law. With
exact :class:`~difimpact.Coulomb` friction a sliding contact has ``F_t = −μ σ F_n`` (seed 000, eq. 38) and a
sticking one the multiplier ``λ`` of the augmented system

.. math:: \begin{bmatrix} M & -A_t^T \\ A_t & 0 \end{bmatrix}
          \begin{bmatrix} \ddot q \\ \lambda \end{bmatrix} =
          \begin{bmatrix} -c + A_n^T F_n \\ -\dot A_t \dot q - v_t / \tau \end{bmatrix},

(``τ = 1 ms`` stabilises the drift of ``v_t``; ``_TAU_STICK`` says why not shorter), valid while
``|λ| ≤ μ F_n``; it is solved through the Schur complement ``A_t M⁻¹ A_tᵀ`` with the unrolled ``LDLᵀ`` of
``difimpact._linalg`` (no LAPACK call under ``vmap``, whose batched LU deadlocked XLA's CPU thread pool in
jaxlib 0.10.2). A
:class:`~difimpact.TangentialSpring` contact has the same two regimes (its ``hybrid`` flag), but its stick is
elastic: ``F_t = −k_t √δ z`` with ``ż = v_t`` and no constraint row; it enters stick with ``z = 0`` at onset
and with the ``z`` whose force equals the sliding force after a slide (seed 001, eqs. 17–19 and after eq. 19).

**Phases and events.** The solve is a chain of at most ``max_phases`` ``diffeqsolve`` calls, a
``lax.scan`` over phases whose body is skipped (``lax.cond``) once the end is reached, so it works under
``jit``, ``vmap`` and reverse-mode ``grad``. Under ``vmap`` the body runs until every member has finished; a
finished member meanwhile re-solves a tiny interval from its initial state and keeps its result (solving
from its end state gave NaN gradients through diffrax's event root find). Each
phase ends at the first of: contact onset (``δ`` crosses 0 upward), separation (``δ`` or the normal law's
margin crosses 0), slide → stick (``σ v_t`` reaches 0; the contact sticks if the stick multiplier is inside
the friction cone, otherwise the sliding reverses; a spring contact always enters its elastic stick), stick →
slide (``μF_n − |λ|`` reaches 0, ``|F_t|`` for a spring), end of
compression (``v_n = 0`` at the first contact, seed 000's end) or separation of the first contact. All are
scaled to O(1) (indentation in mm, velocities in m/s, forces in units of the law's force at ``δ = 1 mm``)
and combined into one event function, their minimum: diffrax then root-finds the **earliest** crossing
(separate events would let the first in pytree order win when two trigger in one step, diffrax #639),
and the minimum's active branch gives the correct implicit-function gradient of the event time. The event
uses an optimistix bisection root finder, robust on the kinks of the minimum where Newton's method failed
to converge (measured on the compass walker), told that the function decreases through the root (each phase
starts with every component positive, see below: no sign detection, which fails under ``vmap`` for members
without an event); its gradient is the implicit-function formula at the root either way (without a root
finder the event time is not differentiated). It stops on the width of the bracket alone
(``_BracketBisection``), 512 ε: 10⁻¹³ ms in float64, 6·10⁻⁵ ms in float32, below the solver's error: a
looser root (10⁻¹⁰ ms in float64) moved the impulses by ~10⁻⁹ N s,
enough to spoil finite differences of the gradients. A component that
starts a phase at or below zero — a contact placed on the ground to within its tolerance (``δ = −10⁻¹⁶``),
the separation component right after an onset event, an unloaded foot at rest — would hide every other
event (the minimum never changes sign), so each phase shifts its components to start at ``+10⁻⁹`` or
more (``δ`` by 1 pm, velocities by 1 nm/s).

**State and units.** A flat array in mm and ms: ``q − q₀`` [mm, mrad], ``q̇`` [m/s = mm/ms], impulses ``P_n,
P_t`` [N s], works ``W_n = ∫F_n v_n dt``, ``W_t = ∫F_t v_t dt`` [J] (integrated as states), and the
tangential displacement ``z`` [mm] of spring friction laws. Integrating ``q − q₀`` lets the relative
tolerance act on the millimetre-scale indentation instead of on metre-scale coordinates.

**Solver choice** (measured on the crutch walker, seed 000 nominal case, float64, on a shared 2-core CPU):
exact Coulomb + Hunt–Crossley is not stiff: ``Tsit5`` takes 28 / 54 / 121 accepted steps at ``rtol`` 1e-6 /
1e-8 / 1e-10 (about 10–30 ms per solve), ``Dopri8`` 24 / 33 / 52 steps but twice the time per solve, and all
agree on ``P_n`` to 1e-9; ``Tsit5`` is the default. Smooth friction laws
(:class:`~difimpact.RegularisedCoulomb`) are stiff
(``∂F_t/∂v_t = μF_n/v_ε``) and default to ``Kvaerno5`` (the explicit solvers gave wrong gradients on a
prototype, ``../shared/DIFFRAX_NOTES.md``): with ``RegularisedCoulomb(0.75, v_ε = 1e-3)`` the nominal case
takes 298 steps (260 ms) and biases ``P_n, P_t`` by −0.08 %, −0.09 % against exact Coulomb. The hybrid
:class:`~difimpact.TangentialSpring` is smooth within each phase and not stiff at seed 000's ``k_t`` (its
tangential frequency ``√(k_t √δ / m)`` grows as ``k_t^{1/2}``): Tsit5 takes 78 / 92 / 162 steps at ``k_t``
× 1 / 10 / 100 (rtol 1e-8; its switched-rate predecessor did not finish in 32 768 Kvaerno5 steps).
Step control is ``PIDController(pcoeff=0.3, icoeff=0.4)`` (fewer
rejected steps), the adjoint ``RecursiveCheckpointAdjoint`` (reverse mode through the scan, the
``lax.cond`` and the event root find; pass ``diffrax.ForwardMode()`` for ``jax.jacfwd``). Compiling one solve
takes 25–75 s depending on the load, most of it tracing the right-hand side about twenty times (solver
stages, event, root find, saved records); this is why ``M`` and ``c`` are formed in forward mode.

**Peak force.** Each accepted step records ``F_n`` and its rate ``dF_n/dt`` (``SaveAt(steps=True)``, the
same records as the optional history); the peak is the maximum of the cubic Hermite interpolant on the step
around the largest sample (``_peak``), O(h⁴) accurate, with the envelope-theorem derivative. The raw sampled
maximum was 1 % off in its gradient at ``rtol = 1e-6``: its derivative holds the sampling times fixed.
"""

from typing import Literal

import diffrax
import equinox as eqx
import equinox.internal as eqxi
import jax
import jax.numpy as jnp
import optimistix as optx

from ._contact import AbstractFrictionLaw, AbstractNormalLaw, Coulomb, HuntCrossley, hertz_stiffness
from ._contact.base import DELTA_REF
from ._custom_types import Array, Bool, Config, Float, Int, Scalar, Velocity
from ._linalg import solve_spd
from ._models import AbstractPlanarModel
from ._validation import as_float, check, positive

_MS = 1e-3  # time unit of the integration [s]
_MM = 1e-3  # length unit of the displacement states [m]
# Stick stabilisation time constant [ms]. It adds a fast mode (rate 1/τ) that the step-size control hardly sees, as
# v_t ≈ 0 while sticking, but that the sensitivities carry: with τ = 0.1 ms Tsit5 took stick-phase steps of 1.4 τ at
# rtol 1e-8 (|hλ| where its stability function is 1e-3 off e^{hλ}), and dP_t/dμ was 7e-3 off (1.1e-4 at rtol 1e-10),
# dP_n/dk_n 8e-5; with τ = 1 ms (steps ≤ 0.19 τ) every gradient is at the finite-difference floor (dP_t/dμ 4e-6,
# k_n 3e-8) in 52 steps instead of 54, v_t in stick never exceeds the 1e-9 m/s it starts at (2e-8 at 0.1 ms), and the
# solution moves by 1e-9 N s (τ only sets how fast that 1e-9 m/s arming offset decays).
_TAU_STICK = 1.0
_BIG = 1e3  # value of an inactive event component
_IDLE = 1e-9  # interval [ms] solved by a finished batch member under vmap (see `run` in compliant_impact)
_ARM = 1e-9  # every event component starts a phase at least this positive (see the module docstring)
_REST = 1e-12  # a contact point slower than this [m/s] is at tangential rest (rounding of a placed posture)


class Contact(eqx.Module):
    """A ground contact at the model point ``point`` with a normal law and an optional friction law
    (``None``: frictionless)."""

    point: str = eqx.field(static=True)
    normal_law: AbstractNormalLaw
    friction_law: AbstractFrictionLaw | None = None


class CompliantResults(eqx.Enumeration):
    successful = ""
    max_steps_reached = ("The compliant contact phase hit `max_steps` before its end event (the contact may "
                         "never close, or the solve is too stiff for the solver).")
    no_end = "The contact phase did not reach its end event before `t_max` (the contact never closes?)."
    max_phases_reached = "More contact/stick/slip switches than `max_phases` before the end event."
    solver_failed = ("The ODE solver or the event root find failed before the end event (a non-finite state, "
                     "or an event function whose root could not be bracketed).")


class History(eqx.Module):
    """Per accepted step records (padded with ``inf`` in ``t`` after the last step): ``t`` [s] from the
    start, and per contact ``F_n, F_t`` [N], ``v_n, v_t`` [m/s] and the loading rate ``dF_n`` = ``dF_n/dt``
    [N/s]; shape ``(max_phases * max_steps, ...)``."""

    t: Float[Array, " s"]
    F_n: Float[Array, "s k"]
    F_t: Float[Array, "s k"]
    v_n: Float[Array, "s k"]
    v_t: Float[Array, "s k"]
    dF_n: Float[Array, "s k"]


class CompliantResult(eqx.Module):
    """Output of :func:`compliant_impact`; per-contact quantities have shape ``(k,)`` in ``contacts`` order.

    - `q`, `qdot`: state at the end event. `duration` [s].
    - `P_n`, `P_t`: impulses of the normal and tangential forces [N s]; `W_n`, `W_t`: their works [J].
    - `peak_Fn`: maximum normal force [N], interpolated between accepted steps (see the module docstring).
    - `stick_time`: time [s] of the first slide → stick switch (``inf`` if none); `final_stick`: sticking
      at the end; `n_phases`: number of phases solved; `n_steps`: accepted steps, all phases; `result`: a :class:`CompliantResults` item.
    - `history`: a :class:`History` if requested, else ``None``.
    """

    q: Config
    qdot: Velocity
    duration: Scalar
    P_n: Float[Array, " k"]
    P_t: Float[Array, " k"]
    W_n: Float[Array, " k"]
    W_t: Float[Array, " k"]
    peak_Fn: Float[Array, " k"]
    stick_time: Float[Array, " k"]
    final_stick: Bool[Array, " k"]
    n_phases: Int[Array, ""]
    n_steps: Int[Array, ""]
    result: CompliantResults
    history: History | None


class _Modes(eqx.Module):
    active: Bool[Array, " k"]
    stick: Bool[Array, " k"]
    sigma: Float[Array, " k"]


def _split(y, n, k):
    dq, qdot = y[:n], y[n:2 * n]
    P_n, P_t, W_n, W_t, z = jnp.reshape(y[2 * n:], (5, k))
    return dq, qdot, P_n, P_t, W_n, W_t, z


def _exact(contact):
    return contact.friction_law is not None and contact.friction_law.exact_stick


def _hybrid(contact):
    return contact.friction_law is not None and contact.friction_law.hybrid


def _evaluate(model, contacts, q0, y, modes):
    """Accelerations, contact forces and kinematics at state ``y`` with friction regimes ``modes``."""
    n, k = q0.shape[0], len(contacts)
    dq, qdot, *_, z_mm = _split(y, n, k)
    q = q0 + dq * _MM
    tree = model.tree()
    delta, v_n, v_t, A_n, A_t, b_t, F_n, F_free = [], [], [], [], [], [], [], []
    for i, c in enumerate(contacts):
        J = tree.point_jacobian(q, c.point)
        vel = J @ qdot
        dn = -tree.point_position(q, c.point)[1]
        fn = c.normal_law.force(dn, -vel[1])
        law = c.friction_law
        if law is None:
            ft = jnp.zeros_like(fn)
        elif law.hybrid:
            # Sliding force; in stick an exact law's multiplier replaces it (below), a spring's force does here.
            ft = -law.mu * modes.sigma[i] * fn
            if not law.exact_stick:
                ft = jnp.where(modes.stick[i], law.force(fn, vel[0], z_mm[i] * _MM, dn), ft)
        else:
            ft = law.force(fn, vel[0], z_mm[i] * _MM, dn)
        # Ȧ_t q̇: the tangential acceleration of the contact point at q̈ = 0.
        bt = jax.jvp(lambda qq: tree.point_jacobian(qq, c.point)[0] @ qdot, (q,), (qdot,))[1]
        delta.append(dn); v_n.append(vel[1]); v_t.append(vel[0]); A_n.append(J[1]); A_t.append(J[0])
        b_t.append(bt); F_n.append(fn); F_free.append(ft)
    delta, v_n, v_t, b_t, F_n, F_free = map(jnp.stack, (delta, v_n, v_t, b_t, F_n, F_free))
    A_n, A_t = jnp.stack(A_n), jnp.stack(A_t)
    stick = modes.stick & modes.active & jnp.array([_exact(c) for c in contacts])
    s = stick.astype(q.dtype)
    # Rows of sticking contacts impose a_t = −v_t/τ; the others fix λ to the given friction force. Solved by
    # the Schur complement of M with the unrolled LDLᵀ (no LAPACK call under vmap, see _linalg):
    # q̈ = M⁻¹(f + A_tᵀλ), and for sticking rows (A_t M⁻¹ A_tᵀ) λ = a_t − A_t M⁻¹ f.
    M, bias = tree.mass_and_bias(q, qdot)
    target = s * (-b_t - v_t / (_TAU_STICK * _MS)) + (1.0 - s) * F_free
    X = solve_spd(M, jnp.concatenate([(-bias + A_n.T @ F_n)[:, None], A_t.T], axis=1), "mass_matrix")
    free_qddot, Z = X[:, 0], X[:, 1:]
    W = A_t @ Z
    fixed = (1.0 - s) * target
    S = s[:, None] * W * s[None, :] + jnp.diag(1.0 - s)
    F_t = solve_spd(S, s * (target - A_t @ free_qddot - W @ fixed) + fixed, "sticking contacts' A_t M⁻¹ A_tᵀ")
    qddot = free_qddot + Z @ F_t
    # A hybrid law's displacement is frozen while sliding.
    zdot = jnp.stack([
        jnp.zeros_like(F_n[i]) if c.friction_law is None
        else jnp.where(modes.stick[i] | ~c.friction_law.hybrid,
                       c.friction_law.displacement_rate(F_n[i], v_t[i], z_mm[i] * _MM, delta[i]), 0.0)
        for i, c in enumerate(contacts)
    ])
    return q, qdot, qddot, delta, v_n, v_t, F_n, F_t, zdot


def _vector_field(t, y, args):
    model, contacts, q0, modes, _ = args
    _, qdot, qddot, _, v_n, v_t, F_n, F_t, zdot = _evaluate(model, contacts, q0, y, modes)
    return jnp.concatenate([qdot, qddot * _MS, F_n * _MS, F_t * _MS, F_n * v_n * _MS, F_t * v_t * _MS,
                            zdot])


def _components(model, contacts, q0, y, modes, end):
    """Event components, shape ``(5, k)``, each positive while the phase goes on (see module docs)."""
    _, _, _, delta, v_n, v_t, F_n, F_t, _ = _evaluate(model, contacts, q0, y, modes)
    big = jnp.full_like(delta, _BIG)
    margin = jnp.stack([c.normal_law.margin(delta[i], -v_n[i]) for i, c in enumerate(contacts)])
    hybrid = jnp.array([_hybrid(c) for c in contacts])
    mu = jnp.stack([c.friction_law.mu if _hybrid(c) else jnp.zeros(()) for c in contacts])
    fref = jnp.stack([c.normal_law.reference_force() for c in contacts])
    sliding = modes.active & hybrid & ~modes.stick
    sticking = modes.active & hybrid & modes.stick
    onset = jnp.where(modes.active, big, -delta / DELTA_REF)
    separation = jnp.where(modes.active, jnp.minimum(delta / DELTA_REF, margin), big)
    to_stick = jnp.where(sliding, modes.sigma * v_t, big)
    to_slide = jnp.where(sticking, (mu * F_n - jnp.abs(F_t)) / fref, big)
    if end == "compression":
        finish = jnp.where(modes.active[0], -v_n[0], _BIG)
        separation = separation.at[0].set(jnp.where(modes.active[0], _BIG, separation[0]))
    else:
        finish = _BIG
    finish = big.at[0].set(finish)
    return jnp.stack([onset, separation, to_stick, to_slide, finish])


class _BracketBisection(optx.Bisection):
    """Bisection that stops when the bracket is narrower than ``atol + rtol |t|``. ``optx.Bisection`` also asks
    ``|g| < atol``, which the event function cannot always meet: ``δ`` comes from metre-scale coordinates, so
    ``g = δ / 1 mm`` carries ~1e-13 of rounding, and the elastic crutch impact at rtol 1e-10 ran the root find
    to its step limit (``nonlinear_max_steps_reached``) with the root bracketed to 1e-15 ms."""

    def terminate(self, fn, y, args, options, state, tags):
        return jnp.abs(state.lower - state.upper) < self.atol + self.rtol * jnp.abs(y), optx.RESULTS.successful


def _record(model, contacts, q0):
    """Per-step records: ``F_n, F_t, v_n, v_t`` and the rate ``dF_n/dt`` [N/s], the derivative of the normal
    law along ``(δ̇, δ̈)`` with ``δ̈ = −(J_n q̈ + J̇_n q̇)``."""
    tree = model.tree()

    def fn(t, y, args):
        q, qdot, qddot, delta, v_n, v_t, F_n, F_t, _ = _evaluate(model, contacts, q0, y, args[3])
        rates = []
        for i, c in enumerate(contacts):
            # d/dt (J_n(q) q̇) = J̇_n q̇ + J_n q̈: a jvp of (q, q̇) ↦ J_n(q) q̇ along (q̇, q̈).
            a_n = jax.jvp(lambda qq, vv: tree.point_jacobian(qq, c.point)[1] @ vv, (q, qdot), (qdot, qddot))[1]
            rates.append(jax.jvp(c.normal_law.force, (delta[i], -v_n[i]), (-v_n[i], -a_n))[1])
        return F_n, F_t, v_n, v_t, jnp.stack(rates)
    return fn


def _peak(t: Float[Array, " s"], F: Float[Array, " s"], rate: Float[Array, " s"]) -> Scalar:
    r"""Maximum of one contact's normal force from its per-step samples ``t`` [ms] (``inf`` = padding), ``F``
    [N] and ``rate = dF/dt`` [N/s]: the maximum of the cubic Hermite interpolant on the step that brackets
    the largest sample (the rate changes sign from + to − across it),

    .. math:: p(s) = F_a + c_1 s + c_2 s^2 + c_3 s^3,\quad s ∈ [0, 1],\quad p'(s^*) = 0,

    with ``c_1 = h F'_a``, ``c_2 = 3(F_b − F_a) − h(2F'_a + F'_b)``, ``c_3 = 2(F_a − F_b) + h(F'_a + F'_b)``.
    Its error is O(h⁴) in the step ``h``, and ``s*`` is held fixed under differentiation (envelope theorem:
    ``dp(s*)/dθ = ∂p/∂θ`` at ``s*``), so the gradient is that of the interpolated peak, free of the first-
    order error of differentiating a sampled maximum at step times that diffrax holds fixed. Without a
    bracketing step (largest sample at an end, or a rate that jumps at a friction switch) the largest sample.
    """
    valid = jnp.isfinite(t)
    i = jnp.argmax(jnp.where(valid, F, -jnp.inf))
    after, before = valid & (t > t[i]), valid & (t < t[i])
    rising = rate[i] >= 0
    a = jnp.where(rising, i, jnp.argmax(jnp.where(before, t, -jnp.inf)))
    b = jnp.where(rising, jnp.argmin(jnp.where(after, t, jnp.inf)), i)
    h = t[b] - t[a]
    d_a, d_b = rate[a] * _MS, rate[b] * _MS  # per ms
    ok = jnp.where(rising, jnp.any(after), jnp.any(before)) & (h > 0) & (d_a > 0) & (d_b < 0)
    h = jnp.where(ok, h, 1.0)
    c1 = h * d_a
    c2 = 3 * (F[b] - F[a]) - h * (2 * d_a + d_b)
    c3 = 2 * (F[a] - F[b]) + h * (d_a + d_b)
    # The one root of p'(s) = c1 + 2 c2 s + 3 c3 s² in (0, 1) (p'(0) > 0 > p'(1)), in the stable form.
    A, B, C = jax.lax.stop_gradient((3 * c3, 2 * c2, c1))
    root = jnp.sqrt(jnp.maximum(B**2 - 4 * A * C, 0.0))
    r = -(B + jnp.where(B >= 0, root, -root)) / 2
    r = jnp.where(ok & (r != 0), r, 1.0)
    s1 = C / r
    s = jnp.where((s1 >= 0) & (s1 <= 1), s1, r / jnp.where(A != 0, A, 1.0))
    s = jnp.clip(jnp.where(ok, s, 0.0), 0.0, 1.0)
    return jnp.where(ok, F[a] + c1 * s + c2 * s**2 + c3 * s**3, F[i])


def _stick_multiplier(model, contacts, q0, y, modes, i):
    """Multiplier ``λ_i`` if contact ``i`` were to stick now (the others keep their regimes)."""
    trial = eqx.tree_at(lambda m: m.stick, modes, modes.stick.at[i].set(True))
    return _evaluate(model, contacts, q0, y, trial)[7][i]


@eqx.filter_jit
def compliant_impact(
    model: AbstractPlanarModel,
    q0: Config,
    qdot0: Velocity,
    contacts: tuple[Contact, ...],
    *,
    end: Literal["compression", "separation"] = "compression",
    solver: diffrax.AbstractSolver | None = None,
    rtol: float = 1e-8,
    atol: float = 1e-10,
    t_max: float = 0.5,
    max_steps: int = 4096,
    max_phases: int = 4,
    adjoint: diffrax.AbstractAdjoint = diffrax.RecursiveCheckpointAdjoint(),
    history: bool = False,
    throw: bool = True,
) -> CompliantResult:
    r"""Integrate the compliant contact phase from ``(q0, qdot0)`` to its end event.

    The first contact in ``contacts`` is the impacting one: the phase ends at its end of compression
    (``v_n = 0``, seed 000 §5) or, with ``end="separation"``, when its normal force returns to zero.
    The other contacts stay compliant throughout (they may open and close). Forces, switches and units:
    see the module docstring.

    **Arguments:**

    - `model`: an :class:`~difimpact.AbstractPlanarModel`.
    - `q0`, `qdot0`: initial state; a contact point with ``δ ≥ 0`` is in contact. The first contact must
      not start in contact while already separating (``δ ≥ 0`` and ``v_n ≥ 0``).
    - `contacts`: tuple of :class:`Contact`.
    - `end`: ``"compression"`` or ``"separation"``.
    - `solver`: a diffrax solver; default ``Tsit5`` with hybrid friction laws (Coulomb, TangentialSpring)
      or no friction, ``Kvaerno5`` with smooth ones.
    - `rtol`, `atol`: step-size control tolerances (state in mm, ms, m/s, N s, J). At the defaults the
      gradients with respect to stiffness, damping, masses and posture agree with finite differences to
      1e-4 relative (seed 000 nominal case), including ``dP_t/dμ ≈ 0.005 N s``, a small difference of the
      sliding and sticking parts (``P_t/μ ≈ 13``): 4e-6 relative at the defaults (see ``_TAU_STICK``).
    - `t_max` [s]: the phase must end before this time. `max_steps`: steps per phase.
      `max_phases`: number of phases (contact/stick/slip switches + 1); each costs reverse-mode memory and time
      whether used or not (gradient / forward 2.5× at 4 phases, 3.2× at 8, seed 000 nominal case); raise it for
      several contacts (the compass walker's two feet need 4–5).
    - `adjoint`: diffrax adjoint. `history`: also return per-step :class:`History`.
    - `throw`: raise on failure (``max_steps``, no end, too many phases); otherwise see ``result``.

    **Returns:** a :class:`CompliantResult`.
    """
    if end not in ("compression", "separation"):
        raise ValueError(f"`end` must be 'compression' or 'separation', got {end!r}.")
    contacts = tuple(contacts)
    if not contacts or not all(isinstance(c, Contact) for c in contacts):
        raise ValueError("`contacts` must be a non-empty tuple of `Contact`.")
    missing = [c.point for c in contacts if c.point not in model.point_names]
    if missing:
        raise ValueError(f"`contacts` name points {missing} that the model does not have "
                         f"(it has {model.point_names}).")
    n, k = model.n, len(contacts)
    q0 = as_float("q0", q0, shape=(n,))
    qdot0 = as_float("qdot0", qdot0, shape=(n,))
    if solver is None:
        smooth = any(c.friction_law is not None and not c.friction_law.hybrid for c in contacts)
        solver = diffrax.Kvaerno5() if smooth else diffrax.Tsit5()

    y0 = jnp.concatenate([jnp.zeros(n), qdot0, jnp.zeros(5 * k)])
    no = jnp.zeros(k, dtype=bool)
    modes0 = _Modes(no, no, jnp.ones(k))
    _, _, _, delta0, v_n0, v_t0, *_ = _evaluate(model, contacts, q0, y0, modes0)
    qdot0 = check(qdot0, (delta0[0] >= -1e-12) & (v_n0[0] >= 0),
                  f"the first contact {contacts[0].point!r} starts in contact (δ ≥ 0) but is already "
                  "separating (v_n ≥ 0): there is no impact to integrate.")
    y0 = y0.at[n:2 * n].set(qdot0)
    # The impacting contact starts closed if it touches to within the residual of placing a point on the
    # ground (1 pm); the others only if indented beyond it: an unloaded stance foot at δ = ±1e-16 starts open
    # and closes at its onset event (closed, its zero friction cone made the stick/slip events chatter).
    active0 = (delta0 > 1e-12).at[0].set(delta0[0] >= -1e-12)
    exact = jnp.array([_exact(c) for c in contacts])
    # A spring friction law starts in (elastic) stick with zero displacement.
    elastic = jnp.array([_hybrid(c) and not _exact(c) for c in contacts])
    modes0 = _Modes(active0, active0 & elastic, jnp.where(v_t0 >= 0, 1.0, -1.0))
    # An exact-Coulomb contact that starts loaded and at rest sticks if its multiplier is in the cone.
    for i, c in enumerate(contacts):
        if _exact(c):
            lam = _stick_multiplier(model, contacts, q0, y0, modes0, i)
            fn = _evaluate(model, contacts, q0, y0, modes0)[6][i]
            rest = jnp.abs(v_t0[i]) <= _REST
            sticks = active0[i] & rest & (jnp.abs(lam) <= c.friction_law.mu * fn) & (fn > 0)
            modes0 = _Modes(modes0.active, modes0.stick.at[i].set(sticks),
                            modes0.sigma.at[i].set(jnp.where(rest, -jnp.sign(lam), modes0.sigma[i])))

    term = diffrax.ODETerm(_vector_field)
    controller = diffrax.PIDController(rtol=rtol, atol=atol, pcoeff=0.3, icoeff=0.4)
    saveat = diffrax.SaveAt(subs=[diffrax.SubSaveAt(t1=True),
                                  diffrax.SubSaveAt(steps=True, fn=_record(model, contacts, q0))])

    def cond_fn(t, y, args, **kwargs):
        model_, contacts_, q0_, modes, shift = args
        return jnp.min(_components(model_, contacts_, q0_, y, modes, end) + shift)

    eps = float(jnp.finfo(q0.dtype).eps)
    event = diffrax.Event(cond_fn, _BracketBisection(rtol=64 * eps, atol=512 * eps, flip=True), direction=False)
    t_end = positive("t_max", t_max) / _MS
    mu_all = jnp.stack([c.friction_law.mu if _exact(c) else jnp.zeros(()) for c in contacts])
    eye = jnp.eye(k, dtype=bool)

    def run(carry):
        t, y, modes, done, result, count, steps, stick_time = carry
        # Under vmap a batch member that has finished still runs this branch while others go on. Solving
        # from its end state (an empty interval, or one starting on an event) gave NaN gradients, so it
        # re-solves a tiny interval from the initial state instead, and its carry is kept unchanged below.
        t = jnp.where(done, 0.0, t)
        y = jnp.where(done, y0, y)
        modes = jax.tree.map(lambda a, b: jnp.where(done, a, b), modes0, modes)
        shift = jax.lax.stop_gradient(jnp.maximum(-_components(model, contacts, q0, y, modes, end), 0.0) + _ARM)
        sol = diffrax.diffeqsolve(
            term, solver, t, jnp.where(done, _IDLE, t_end), None, y, args=(model, contacts, q0, modes, shift),
            saveat=saveat, stepsize_controller=controller, event=event, max_steps=max_steps,
            adjoint=adjoint, throw=False,
        )
        t1, y1 = sol.ts[0][-1], sol.ys[0][-1]
        comps = _components(model, contacts, q0, y1, modes, end) + shift
        idx = jnp.argmin(comps)
        row, i = idx // k, idx % k
        hit = eye[i]
        _, _, _, delta, _, v_t, F_n, F_t, _ = _evaluate(model, contacts, q0, y1, modes)
        lam = jnp.stack([_stick_multiplier(model, contacts, q0, y1, modes, j) for j in range(k)])
        in_cone = jnp.abs(lam) <= mu_all * F_n
        new_sigma = jnp.select(
            [row == 0, row == 2, row == 3],
            [jnp.where(jnp.abs(v_t) <= _REST, -jnp.sign(lam), jnp.sign(v_t)), jnp.where(in_cone, modes.sigma, -jnp.sign(lam)),
             -jnp.sign(F_t)], modes.sigma)
        # A spring law always enters its elastic stick (its force starts on the cone and |F_t| then falls).
        becomes_stick = (row == 2) & (in_cone | elastic)
        new_modes = _Modes(
            active=jnp.where(hit & (row == 0), True, jnp.where(hit & (row == 1), False, modes.active)),
            stick=jnp.select([hit & ((row == 1) | (row == 3)), hit & (row == 0), hit & becomes_stick],
                             [False, elastic, exact | elastic], modes.stick),
            sigma=jnp.where(hit, new_sigma, modes.sigma),
        )
        # A spring law restarts from zero displacement at each contact onset and enters stick with the
        # displacement whose force equals the sliding force (F_t continuous).
        z_stick = jnp.stack([
            c.friction_law.stick_displacement(F_t[j], delta[j]) / _MM if c.friction_law is not None
            else jnp.zeros_like(F_t[j]) for j, c in enumerate(contacts)])
        z = jnp.where(hit & becomes_stick, z_stick, y1[2 * n + 4 * k:])
        y1 = y1.at[2 * n + 4 * k:].set(jnp.where(hit & (row == 0), 0.0, z))
        event_done = (row == 4) | ((end == "separation") & (row == 1) & (i == 0))
        phase_result = CompliantResults.where(
            sol.result == diffrax.RESULTS.event_occurred, CompliantResults.successful,
            CompliantResults.where(
                sol.result == diffrax.RESULTS.max_steps_reached, CompliantResults.max_steps_reached,
                CompliantResults.where(sol.result == diffrax.RESULTS.successful, CompliantResults.no_end,
                                       CompliantResults.solver_failed)))
        failed = phase_result != CompliantResults.successful
        stick_time = jnp.where(hit & becomes_stick & jnp.isinf(stick_time), t1, stick_time)
        new = (t1, y1, new_modes, event_done | failed, phase_result, count + 1,
               steps + sol.stats["num_accepted_steps"], stick_time)
        keep, blank = skip(carry)
        return jax.tree.map(lambda a, b: jnp.where(done, a, b), (keep, blank), (new, (sol.ts[1], *sol.ys[1])))

    def skip(carry):
        inf = jnp.full((max_steps,), jnp.inf)
        zeros = jnp.zeros((max_steps, k))
        return carry, (inf, zeros, zeros, zeros, zeros, zeros)

    def phase(carry, _):
        # A real branch (not a select) once every batch member has finished.
        return jax.lax.cond(eqxi.unvmap_all(carry[3]), skip, run, carry)

    t0 = jnp.zeros(())
    carry0 = (t0, y0, modes0, jnp.array(False), CompliantResults.successful, jnp.array(0),
              jnp.array(0), jnp.full(k, jnp.inf))
    (t1, y1, modes, done, result, count, steps, stick_time), records = jax.lax.scan(
        phase, carry0, None, length=max_phases)
    result = CompliantResults.where(done | (result != CompliantResults.successful), result, CompliantResults.max_phases_reached)
    ts, F_n, F_t, v_n, v_t, dF_n = (r.reshape((max_phases * max_steps,) + r.shape[2:]) for r in records)
    peak = jax.vmap(_peak, in_axes=(None, 1, 1))(ts, F_n, dF_n)
    dq, qdot, P_n, P_t, W_n, W_t, _ = _split(y1, n, k)
    out = CompliantResult(
        q=q0 + dq * _MM, qdot=qdot, duration=t1 * _MS, P_n=P_n, P_t=P_t, W_n=W_n, W_t=W_t,
        peak_Fn=jnp.maximum(peak, 0.0), stick_time=stick_time * _MS, final_stick=modes.stick & modes.active,
        n_phases=count, n_steps=steps, result=result,
        history=History(ts * _MS, F_n, F_t, v_n, v_t, dF_n) if history else None,
    )
    if throw:
        out = result.error_if(out, result != CompliantResults.successful)
    return out


def seed000_tip_contact(kn_factor: float = 1.0, chi_factor: float = 1.0, mu: float = 0.75) -> Contact:
    """The crutch tip ``Q`` of seed 000 (§5): Hunt–Crossley with Hertz stiffness of an elastomer sphere
    ``R_s = 0.05 m, E_s = 0.1 GPa, ν_s = 0.5`` on concrete ``E_p = 30 GPa, ν_p = 0.2`` (eqs. 36–37),
    ``χ = 10⁷ N s/m^2.5``, scaled by ``kn_factor`` and ``chi_factor`` (Table 3), and exact Coulomb
    friction ``mu``."""
    k_n = hertz_stiffness(0.05, 0.1e9, 0.5, 30e9, 0.2) * as_float("kn_factor", kn_factor)
    return Contact("Q", HuntCrossley(k_n, 1e7 * as_float("chi_factor", chi_factor)), Coulomb(mu))
