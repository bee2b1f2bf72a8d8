"""Impacts accurate to the last digits as a segment's mass goes to zero (1e-12 … 1e2 kg, and 0).

Reference: the same impulse–momentum KKT system (seed 002, eqs. 4–5) built and solved in 80-digit arithmetic
(mpmath) from the tree's parameters — its own forward kinematics, Jacobians and mass matrix, the library's
float64 inputs taken as exact. At mass 0 the reference is the limit (the mass 1e-30), the library's
``massless="limit"``; bodies swept with an inertia take it as ``m k²``, and the limit of vanishing masses treats
a massless body as a point mass at its centre, so their limit reference sets the inertia to zero.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np

import difimpact as di
from difimpact import Body, PlanarTree, Point

MASSES = np.array([0.0, 1e-12, 1e-10, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0])
RTOL = 1e-8


def _mp_kinematics(tree: PlanarTree, q, mass, inertia):
    """Mass matrix and a point Jacobian function of `tree` at `q`, in mpmath (independent of the library's
    kinematics: angles along the chains, joints from the parents' frames, Jacobian columns ``s_j ⊥(p − r_j)``)."""
    n, nb = tree.n, len(tree.parent)
    mpf = lambda x: mp.mpf(float(x))
    q = [mpf(v) for v in q]
    rot = lambda th, a, p: (a * mp.sin(th) + p * mp.cos(th), a * mp.cos(th) - p * mp.sin(th))
    theta, joint, chain = [], [], []
    for i in range(nb):
        par, k = tree.parent[i], tree.coord[i]
        th = (theta[par] if par >= 0 else 0) + (tree.sign[i] * q[k] if k >= 0 else 0) + mpf(tree.offset[i])
        if par < 0:
            r = (q[0], q[1])
        else:
            ax, ay = rot(theta[par], mpf(tree.attach[i, 0]), mpf(tree.attach[i, 1]))
            r = (joint[par][0] + ax, joint[par][1] + ay)
        theta.append(th)
        joint.append(r)
        chain.append([i] + (chain[par] if par >= 0 else []))

    def jacobian(body, p):
        J = mp.zeros(2, n)
        J[0, 0] = J[1, 1] = 1
        for j in chain[body]:
            if tree.coord[j] >= 0:
                dx, dy = p[0] - joint[j][0], p[1] - joint[j][1]
                J[0, tree.coord[j]] += tree.sign[j] * dy
                J[1, tree.coord[j]] -= tree.sign[j] * dx
        return J

    def at(body, local):
        ax, ay = rot(theta[body], mpf(local[0]), mpf(local[1]))
        return joint[body][0] + ax, joint[body][1] + ay

    M = mp.zeros(n, n)
    for i in range(nb):
        J = jacobian(i, at(i, tree.com[i]))
        J_theta = mp.zeros(1, n)
        for j in chain[i]:
            if tree.coord[j] >= 0:
                J_theta[0, tree.coord[j]] += tree.sign[j]
        M += mass[i] * (J.T * J) + inertia[i] * (J_theta.T * J_theta)

    def contact(name):
        k = tree.point_names.index(name)
        assert float(tree.point_radius[k]) == 0.0
        J = jacobian(tree.point_body[k], at(tree.point_body[k], tree.point_local[k]))
        return mp.matrix([[J[1, c] for c in range(n)], [J[0, c] for c in range(n)]])  # [normal; tangential]

    return M, contact


def _mp_impact(tree, q, qdot, stick, mass, inertia):
    """``q̇⁺`` and ``λ̄`` of ``M Δq̇ = Aᵀλ̄``, ``A q̇⁺ = 0`` in 80 digits."""
    with mp.workdps(80):
        M, contact = _mp_kinematics(tree, q, mass, inertia)
        rows = [contact(p) for p in stick]
        n, m = tree.n, 2 * len(rows)
        K = mp.zeros(n + m, n + m)
        for a in range(n):
            for b in range(n):
                K[a, b] = M[a, b]
        for r, J in enumerate(rows):
            for i in range(2):
                for c in range(n):
                    K[n + 2 * r + i, c] = J[i, c]
                    K[c, n + 2 * r + i] = -J[i, c]
        rhs = mp.zeros(n + m, 1)
        v = mp.matrix([mp.mpf(float(x)) for x in qdot])
        for r, J in enumerate(rows):
            for i in range(2):
                rhs[n + 2 * r + i] = -sum(J[i, c] * v[c] for c in range(n))
        x = mp.lu_solve(K, rhs)
        return (np.array([float(v[c] + x[c]) for c in range(n)]), np.array([float(x[n + i]) for i in range(m)]))


def _sweep(make, q_of, stick, swept, k2=0.0):
    """The library's ``impact(massless="limit")`` over `MASSES` (one compiled program, ``vmap``) against the
    80-digit reference; `swept` the bodies whose mass is the sweep variable (inertia ``m k²``)."""
    @jax.jit
    @jax.vmap
    def run(m):
        model = make(m)
        q, qdot = q_of(model)
        sol = di.impact(model, q, qdot, stick=stick, massless="limit", throw=False)
        return sol.qdot_plus, sol.impulses, sol.result._value, q, qdot

    qdot_plus, impulses, result, q, qdot = jax.tree.map(np.asarray, run(jnp.asarray(MASSES)))
    errors = []
    for i, m in enumerate(MASSES):
        tree = make(jnp.asarray(m)).tree()
        mass, inertia = [mp.mpf(float(x)) for x in tree.mass], [mp.mpf(float(x)) for x in tree.inertia]
        for b in swept:  # the limit: a point mass 1e-30 at the centre
            mass[b] = mp.mpf(float(m)) if m > 0 else mp.mpf("1e-30")
            inertia[b] = mp.mpf(float(m)) * mp.mpf(k2) if m > 0 else mp.mpf(0)
        ref_q, ref_l = _mp_impact(tree, q[i], qdot[i], stick, mass, inertia)
        assert result[i] == 0, (m, result[i])
        errors.append(max(np.max(np.abs(qdot_plus[i] - ref_q)) / np.max(np.abs(ref_q)),
                          np.max(np.abs(impulses[i] - ref_l)) / np.max(np.abs(ref_l))))
    return np.array(errors)


def test_biped_legs_mass_sweep():
    """Seed 003's biped, legs of mass m (μ = 2m/m_H → 0), 45° step, P_L sticks: ``q̇⁺`` and ``λ̄`` to 1e-8,
    the limit at m = 0 included (v_Sn⁺ → 0.1303938826, seed 003 §4.1)."""
    errors = _sweep(lambda m: di.BipedWithTorso(m=m, m_H=20.0, m_T=10.0),
                    lambda model: model.pre_impact_state(jnp.radians(45.0)), ("P_L",), swept=(0, 2))
    assert np.all(errors < RTOL), dict(zip(MASSES, errors))


def test_seven_link_human_foot_mass_sweep():
    """Seed 002's seven-link human, both feet of mass m (inertia m k², k = 0.05 m; the tree of
    :class:`~difimpact.SevenLinkHuman` as a :class:`~difimpact.TreeModel`, which takes a massless foot) at heel
    strike, the right heel sticking: the trailing foot turns freely, its rate set by its own mass alone."""
    human = di.SevenLinkHuman()
    state = human.heel_strike_state()  # kinematic conditions only: the same for every foot mass
    feet = (3, 6)

    def make(m):
        tree = human.tree()
        mass, inertia = tree.mass.at[feet,].set(m), tree.inertia.at[feet,].set(m * 0.0025)
        return di.TreeModel(eqx.tree_at(lambda t: (t.mass, t.inertia), tree, (mass, inertia)))

    errors = _sweep(make, lambda model: state, ("CAL_R",), swept=feet, k2=0.0025)
    assert np.all(errors < RTOL), dict(zip(MASSES, errors))


def test_random_tree_mass_sweep():
    """A random branched tree (seed 0), one leaf of mass m, a point of another branch sticking."""
    rng = np.random.default_rng(0)
    parents = [-1, 0, 1, 0, 3, 1]
    bodies = []
    for i, par in enumerate(parents):
        bodies.append(Body(f"b{i}", par, 2 + i, float(rng.uniform(1.0, 10.0)), float(rng.uniform(0.05, 0.5)),
                           (float(rng.uniform(0.1, 0.5)), float(rng.uniform(-0.1, 0.1))),
                           (float(rng.uniform(0.3, 0.6)), float(rng.uniform(-0.1, 0.1))),
                           float(rng.choice([1.0, -1.0])), float(rng.uniform(-3.0, 3.0))))
    q0 = jnp.asarray(rng.uniform(-1.0, 1.0, 2 + len(parents)))
    qd0 = jnp.asarray(rng.uniform(-1.0, 1.0, 2 + len(parents)))
    leaf = 5

    def make(m):
        bs = [b._replace(mass=m, inertia=m * 0.01) if i == leaf else b for i, b in enumerate(bodies)]
        return di.TreeModel(PlanarTree.build(2 + len(parents), bs, [Point("tip", 4, (0.5, 0.0))]))

    def state(model):
        q = q0.at[1].add(-model.point(q0, "tip")[1])  # the tip on the ground
        J = model.contact_jacobian(q, "tip")
        return q, qd0.at[1].add(-(J[0] @ qd0) - 0.5)  # approaching it

    errors = _sweep(make, state, ("tip",), swept=(leaf,), k2=0.01)
    assert np.all(errors < RTOL), dict(zip(MASSES, errors))
