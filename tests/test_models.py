"""Multibody core: closed-form mass matrix (seed 003, App. A), conservation of energy in free flight,
Jacobians against finite differences, transformations, and bad input."""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import difimpact as di

from .helpers import central_difference

MODELS = {
    "crutch": di.CrutchWalker,
    "compass": di.CompassGait,
    "biped": di.BipedWithTorso,
}


def appendix_a_mass_matrix(q, m, m_H, m_T, l, b, l_T):
    """Seed 003, Appendix A, eq. 26, written out independently (a = l - b)."""
    _, _, q3, q4, q5 = q
    a = l - b
    c3, s3 = np.cos(q3), np.sin(q3)
    c43, s43 = np.cos(q4 - q3), np.sin(q4 - q3)
    c53, s53 = np.cos(q5 - q3), np.sin(q5 - q3)
    mt = 2 * m + m_H + m_T
    M = np.zeros((5, 5))
    M[0, 0] = M[1, 1] = mt
    M[0, 2] = ((m + m_H + m_T) * l + m * a) * c3 - m * b * c43 + m_T * l_T * c53
    M[0, 3] = m * b * c43
    M[0, 4] = -m_T * l_T * c53
    M[1, 2] = -((m + m_H + m_T) * l + m * a) * s3 - m * b * s43 + m_T * l_T * s53
    M[1, 3] = m * b * s43
    M[1, 4] = -m_T * l_T * s53
    M[2, 2] = (m * (a**2 + b**2 + l**2) + m_H * l**2 + m_T * (l**2 + l_T**2)
               - 2 * m * b * l * np.cos(q4) + 2 * m_T * l_T * l * np.cos(q5))
    M[2, 3] = -m * b**2 + m * b * l * np.cos(q4)
    M[2, 4] = -m_T * l_T * (l_T + l * np.cos(q5))
    M[3, 3] = m * b**2
    M[4, 4] = m_T * l_T**2
    return np.triu(M) + np.triu(M, 1).T


def test_biped_mass_matrix_appendix_a(rng):
    mass_matrix = jax.jit(lambda model, q: model.mass_matrix(q))
    for _ in range(20):
        params = dict(m=rng.uniform(0.5, 10), m_H=rng.uniform(1, 20), m_T=rng.uniform(0.5, 20),
                      l=rng.uniform(0.5, 1.2), b=rng.uniform(0.1, 0.5), l_T=rng.uniform(0.2, 0.8))
        q = rng.uniform(-np.pi, np.pi, 5)
        got = mass_matrix(di.BipedWithTorso(**params), jnp.asarray(q))
        np.testing.assert_allclose(got, appendix_a_mass_matrix(q, **params), rtol=0, atol=1e-12)


def test_biped_jacobian_appendix_a(rng):
    """Seed 003, eq. 25: the left-foot Jacobian A_L."""
    model = di.BipedWithTorso()
    q = jnp.asarray(rng.uniform(-1, 1, 5))
    l, q3, q4 = 0.8, q[2], q[3]
    expected = np.array([
        [1, 0, l * np.cos(q3) - l * np.cos(q4 - q3), l * np.cos(q4 - q3), 0],
        [0, 1, -l * np.sin(q3) - l * np.sin(q4 - q3), l * np.sin(q4 - q3), 0],
    ])
    np.testing.assert_allclose(model.point_jacobian(q, "P_L"), expected, atol=1e-14)


def test_crutch_posture_seed000():
    """q6 solved by Newton equals the closed form arccos; Q is on the ground ahead of the feet."""
    model = di.CrutchWalker()
    q = model.place_crutch(math.radians(12.0))
    l1, l2, l3, l4 = 0.93, 0.51, 0.33, 1.25
    q3, q4, q5 = q[2], q[3], q[4]
    h = l1 * np.cos(q3) + l2 * np.cos(q3 + q4) + l3 * np.cos(q3 + q4 + q5)
    expected_q6 = np.arccos(-h / l4) - (q3 + q4 + q5)
    np.testing.assert_allclose(q[5], expected_q6, atol=1e-12)
    assert math.degrees(q[5]) == pytest.approx(-24.4, abs=0.05)
    Q = model.point(q, "Q")
    assert abs(Q[1]) < 1e-12 and Q[0] > 0.5


def test_crutch_posture_gradient_implicit():
    """d q6 / d q3 through the root find equals the derivative of the closed form."""
    model = di.CrutchWalker()
    grad = jax.grad(lambda q3: model.place_crutch(q3)[5])(0.2)

    def closed(q3):
        q4, q5 = math.radians(10), math.radians(150)
        h = 0.93 * jnp.cos(q3) + 0.51 * jnp.cos(q3 + q4) + 0.33 * jnp.cos(q3 + q4 + q5)
        return jnp.arccos(-h / 1.25) - (q3 + q4 + q5)

    np.testing.assert_allclose(grad, jax.grad(closed)(0.2), rtol=1e-10)


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request):
    return MODELS[request.param]()


def random_state(model, rng, scale=1.0):
    q = rng.uniform(-1.0, 1.0, model.n)
    qdot = scale * rng.uniform(-1.0, 1.0, model.n)
    return jnp.asarray(q), jnp.asarray(qdot)


def test_mass_matrix_spd(model, rng):
    batch = jnp.asarray(rng.uniform(-np.pi, np.pi, (32, model.n)))
    Ms = jax.jit(jax.vmap(model.mass_matrix))(batch)
    np.testing.assert_allclose(Ms, jnp.swapaxes(Ms, 1, 2), atol=1e-13)
    assert np.all(np.linalg.eigvalsh(np.asarray(Ms)) > 0)


def test_point_velocity_matches_finite_differences(model, rng):
    q, qdot = random_state(model, rng)
    tree = model.tree()
    for name in model.point_names:
        k = tree.point_index(name)
        if float(tree.point_radius[k]) > 0:
            continue  # the lowest point of an arc is not a material point: checked below
        fd = central_difference(lambda x: model.point(x, name), q) @ np.asarray(qdot)
        np.testing.assert_allclose(model.point_velocity(q, qdot, name), fd, rtol=1e-7, atol=1e-9)


def test_arc_contact_point_velocity():
    """Material point under an arc foot: rolling (q̇1 = R q̇3) gives zero velocity; the Jacobian is the
    velocity of the body point frozen at the contact location (finite differences of that point)."""
    model = di.CompassGait(R=0.3)
    q, qdot = model.pre_impact_state(0.25, 1.3)
    np.testing.assert_allclose(model.point_velocity(q, qdot, "stance_foot"), 0.0, atol=1e-14)
    tree = model.tree()
    _, angles = tree.frames(q)
    th = angles[2]
    local = np.array([1.0 - 0.3 - 0.3 * np.cos(th), 0.3 * np.sin(th)])
    fd = central_difference(lambda x: tree.body_point(x, 2, jnp.asarray(local)), q)
    np.testing.assert_allclose(model.point_jacobian(q, "swing_foot"), fd, rtol=1e-7, atol=1e-9)


def test_free_flight_conserves_energy(model, rng):
    """Integrate M q̈ + c = 0 for 1 s with scipy (DOP853, tight): T + V constant to 1e-8 relative."""
    q0, qdot0 = random_state(model, rng, scale=2.0)
    rhs_j = jax.jit(lambda y: jnp.concatenate([y[model.n:], model.accelerations(y[:model.n], y[model.n:])]))
    energy = jax.jit(lambda y: model.energy(y[:model.n], y[model.n:]))
    y0 = np.concatenate([q0, qdot0])
    sol = solve_ivp(lambda t, y: np.asarray(rhs_j(jnp.asarray(y))), (0.0, 1.0), y0, method="DOP853",
                    rtol=1e-12, atol=1e-12)
    assert sol.success
    e0 = float(energy(jnp.asarray(y0)))
    e1 = float(energy(jnp.asarray(sol.y[:, -1])))
    ke = float(model.kinetic_energy(q0, qdot0))
    assert abs(e1 - e0) <= 1e-8 * max(abs(e0), ke)


def test_jit_vmap_grad():
    model = di.CrutchWalker()
    qs = jnp.asarray(np.random.default_rng(1).uniform(-1, 1, (5, 6)))
    batched = jax.jit(jax.vmap(model.mass_matrix))(qs)
    for q, M in zip(qs, batched):
        np.testing.assert_allclose(model.mass_matrix(q), M, rtol=1e-13)
    qdot = jnp.ones(6)

    def kinetic(masses, lengths):
        return di.CrutchWalker(masses=masses, lengths=lengths).kinetic_energy(qs[0], qdot)

    gm, gl = jax.grad(kinetic, argnums=(0, 1))(model.masses, model.lengths)
    fd_m = central_difference(lambda m: kinetic(m, model.lengths), model.masses)
    fd_l = central_difference(lambda l: kinetic(model.masses, l), model.lengths)
    np.testing.assert_allclose(gm, fd_m, rtol=1e-7)
    np.testing.assert_allclose(gl, fd_l, rtol=1e-7)
    # gradients through the model as a pytree (what optax sees)
    params, static = eqx.partition(model, eqx.is_inexact_array)
    g = jax.grad(lambda p: eqx.combine(p, static).kinetic_energy(qs[0], qdot))(params)
    np.testing.assert_allclose(g.masses, gm, rtol=1e-12)


def test_vmap_over_parameters():
    masses = jnp.linspace(3.0, 7.0, 4)
    q = jnp.array([0.0, 0.0, 0.2, 0.4, 0.1])
    Ms = jax.vmap(lambda m: di.BipedWithTorso(m=m).mass_matrix(q))(masses)
    np.testing.assert_allclose(Ms[2], di.BipedWithTorso(m=masses[2]).mass_matrix(q), rtol=1e-13)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: di.CrutchWalker(masses=(22.54, -1.0, 3.92, 4.28)), "masses"),
        (lambda: di.CrutchWalker(lengths=(0.93, 0.0, 0.33, 1.25)), "lengths"),
        (lambda: di.CrutchWalker(masses=(1.0, 2.0)), "masses"),
        (lambda: di.CompassGait(l=-1.0), "`l`"),
        (lambda: di.CompassGait(R=1.5), "`R`"),
        (lambda: di.CompassGait(m=0.0), "`m`"),
        (lambda: di.BipedWithTorso(m_H=0.0), "m_H"),
        (lambda: di.BipedWithTorso(l_T=float("nan")), "l_T"),
    ],
)
def test_bad_parameters(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_bad_parameters_under_jit():
    with pytest.raises(Exception, match="masses"):
        jax.jit(lambda m: di.CrutchWalker(masses=m).mass_matrix(jnp.zeros(6)))(
            jnp.array([1.0, -2.0, 3.0, 4.0]))


def test_bad_configuration():
    model = di.CrutchWalker()
    with pytest.raises(ValueError, match="`q` must have shape"):
        model.mass_matrix(jnp.zeros(5))
    with pytest.raises(ValueError, match="NaN"):
        model.mass_matrix(jnp.full(6, jnp.nan))
    with pytest.raises(TypeError, match="`q`"):
        model.mass_matrix("abcdef")
    with pytest.raises(ValueError, match="unknown point 'Z'"):
        model.point(jnp.zeros(6), "Z")


def test_crutch_cannot_reach():
    with pytest.raises(ValueError, match="cannot reach"):
        di.CrutchWalker(lengths=(0.93, 0.51, 0.33, 0.5)).place_crutch(0.2)
