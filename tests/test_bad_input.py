"""Bad input gives a clear error naming the argument, never a silent NaN (issue 8, item 2).

Each case calls a public entry point with one kind of bad input and checks the exception and its message.
Python-side checks raise ``ValueError``/``TypeError``; value checks on traced data (every ``filter_jit`` entry
point, and any function under ``jax.jit``/``vmap``) raise ``equinox.EquinoxRuntimeError`` with the same message.
The table of these cases is in the docs (robustness section).
"""

import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import difimpact as di
from difimpact.papers.font_llagunes_2012.crutch_tip import tip_contact
from _difimpact_cli import main

EAGER = (ValueError, TypeError)
TRACED = (eqx.EquinoxRuntimeError, jax.errors.JaxRuntimeError)
ANY = EAGER + TRACED

NAN, INF = float("nan"), float("inf")
CW = di.CrutchWalker()
CG = di.CompassGait()
BT = di.BipedWithTorso()
Q, QDOT = CW.pre_impact_state(math.radians(12.0), -0.2)
Q_AIR = Q.at[1].set(0.1)  # whole body lifted 10 cm: the tip Q is above the ground
QDOT_UP = -QDOT  # the tip separates
M = CW.mass_matrix(Q)
A = CW.contact_jacobian(Q, "Q")
TIP = tip_contact()
COULOMB = di.Coulomb(0.75)
LAWS = dict(normal=TIP.normal_law, friction=TIP.friction_law)  # the tip's laws, by keyword


def _nan_at(x, i=0):
    return jnp.asarray(x).at[i].set(NAN)


M_ASYMMETRIC = M.at[0, 1].add(1.0)
M_INDEFINITE = M.at[0, 0].set(-1.0)  # symmetric, one negative eigenvalue
BIG = 1e200  # finite, but its square overflows
TREE = dict(n=3, bodies=[di.Body("a", -1, 2, 1.0, 0.1, (0.5, 0.0))], points=[di.Point("p", 0, (1.0, 0.0))])


def _tree(**changes):
    return di.PlanarTree.build(**{**TREE, **changes})


def _minimise(**options):
    """``min Σ (p − 0.3)²`` from ``p = (1, 1)`` with 20 SGD steps, `options` overriding."""
    options = {"fn": lambda p: jnp.sum((p - 0.3) ** 2), "params": jnp.ones(2), "optimiser": optax.sgd(0.1),
               "steps": 20, **options}
    return di.minimise(options.pop("fn"), options.pop("params"), **options)


def _minimise_zero_steps():
    return _minimise(steps=0)


def _compliant(q, qdot_minus):
    """One compiled graph for the three run-time compliant checks (the nominal solve needs ~100 steps)."""
    return di.compliant_impact(CW, q, qdot_minus, "Q", **LAWS, max_steps=4)


# (id, thunk, exception types, message regex)
CASES = [
    # -- model constructors: NaN/inf, non-positive, shape, dtype
    ("CrutchWalker-masses-nan", lambda: di.CrutchWalker(masses=(NAN, 40.46, 3.92, 4.28)), EAGER,
     "`masses` contains NaN"),
    ("CrutchWalker-lengths-inf", lambda: di.CrutchWalker(lengths=(0.93, INF, 0.33, 1.25)), EAGER,
     "`lengths` contains NaN or infinite"),
    ("CrutchWalker-masses-negative", lambda: di.CrutchWalker(masses=(-1.0, 40.46, 3.92, 4.28)), EAGER,
     "`masses` must be positive"),
    ("CrutchWalker-lengths-zero", lambda: di.CrutchWalker(lengths=(0.0, 0.51, 0.33, 1.25)), EAGER,
     "`lengths` must be positive"),
    ("CrutchWalker-masses-shape", lambda: di.CrutchWalker(masses=(1.0, 2.0, 3.0)), EAGER,
     r"`masses` must have shape \(4,\)"),
    ("CrutchWalker-masses-str", lambda: di.CrutchWalker(masses="heavy"), EAGER, "`masses` must be a number"),
    ("CrutchWalker-masses-complex", lambda: di.CrutchWalker(masses=np.ones(4) * 1j), EAGER,
     "`masses` must have a real dtype"),
    ("CompassGait-R-negative", lambda: di.CompassGait(R=-0.1), EAGER, "`R` must be non-negative"),
    ("CompassGait-R-above-l", lambda: di.CompassGait(R=1.5), EAGER, "`R` must not exceed"),
    ("CompassGait-m-inf", lambda: di.CompassGait(m=INF), EAGER, "`m` contains NaN or infinite"),
    ("CompassGait-l-vector", lambda: di.CompassGait(l=jnp.ones(2)), EAGER, r"`l` must have shape \(\)"),
    ("BipedWithTorso-mH-zero", lambda: di.BipedWithTorso(m_H=0.0), EAGER, "`m_H` must be positive"),
    ("BipedWithTorso-l-nan", lambda: di.BipedWithTorso(l=NAN), EAGER, "`l` contains NaN"),
    ("BipedWithTorso.from_ratios-mu-negative", lambda: di.BipedWithTorso.from_ratios(mu=-1.0), EAGER, "`m`"),
    ("SevenLinkHuman-body_mass-negative", lambda: di.SevenLinkHuman(body_mass=-75.0), EAGER,
     "`body_mass` must be positive"),
    ("SevenLinkHuman-height-nan", lambda: di.SevenLinkHuman(height=NAN), EAGER, "`height` contains NaN"),
    ("scale_segments-height-zero", lambda: di.scale_segments(di.DUMAS_2007_MALE, 75.0, 0.0), EAGER,
     "`height` must be positive"),
    ("scale_segments-body_mass-vector", lambda: di.scale_segments(di.DUMAS_2007_MALE, jnp.ones(2)), EAGER,
     r"`body_mass` must have shape \(\)"),
    ("scale_segments-body_mass-str", lambda: di.scale_segments(di.DUMAS_2007_MALE, "75"), EAGER,
     "`body_mass` must be a number"),
    ("PlanarTree.build-mass-negative", lambda: di.TreeModel(di.PlanarTree.build(
        3, [di.Body("a", -1, 2, -1.0)], [di.Point("p", 0)])), EAGER, "`Body.mass` must be non-negative"),
    ("PlanarTree.build-inertia-nan", lambda: di.PlanarTree.build(
        3, [di.Body("a", -1, 2, 1.0, NAN)], [di.Point("p", 0)]), EAGER, "`Body.inertia` contains NaN"),
    ("PlanarTree.build-radius-negative", lambda: di.PlanarTree.build(
        3, [di.Body("a", -1, 2, 1.0)], [di.Point("p", 0, (0.0, 0.0), -0.1)]), EAGER,
     "`Point.radius` must be non-negative"),
    ("PlanarTree.build-point-body", lambda: di.PlanarTree.build(3, [di.Body("a", -1, 2, 1.0)], [di.Point("p", 1)]),
     EAGER, "point 'p': body 1 outside"),
    ("PlanarTree.build-parent", lambda: di.PlanarTree.build(3, [di.Body("a", 0, 2, 1.0)], [di.Point("p", 0)]),
     EAGER, "body 'a': parent must precede it"),
    # -- model methods: q/qdot shape, dtype, NaN; unknown names; unreachable placements
    ("mass_matrix-q-shape", lambda: CW.mass_matrix(jnp.zeros(5)), EAGER, r"`q` must have shape \(6,\)"),
    ("mass_matrix-q-nan", lambda: CW.mass_matrix(_nan_at(Q)), EAGER, "`q` contains NaN"),
    ("mass_matrix-q-str", lambda: CW.mass_matrix("q"), EAGER, "`q` must be a number"),
    ("mass_matrix-q-list-of-str", lambda: CW.mass_matrix(["0"] * 6), EAGER, "`q` must be a number"),
    ("mass_matrix-q-complex", lambda: CW.mass_matrix(Q * 1j), EAGER, "`q` must have a real dtype"),
    ("bias-qdot-inf", lambda: CW.bias(Q, QDOT.at[2].set(INF)), EAGER, "`qdot` contains NaN or infinite"),
    ("bias-qdot-shape", lambda: CW.bias(Q, QDOT[:4]), EAGER, r"`qdot` must have shape \(6,\)"),
    ("kinetic_energy-qdot-nan", lambda: CG.kinetic_energy(jnp.zeros(4), _nan_at(jnp.zeros(4))), EAGER,
     "`qdot` contains NaN"),
    ("accelerations-tau-shape", lambda: CG.accelerations(jnp.zeros(4), jnp.zeros(4), jnp.zeros(3)), EAGER,
     r"`tau` must have shape \(4,\)"),
    ("accelerations-tau-nan", lambda: CG.accelerations(jnp.zeros(4), jnp.zeros(4), jnp.full(4, NAN)), EAGER,
     "`tau` contains NaN"),
    ("heel_strike_posture-q4-nan", lambda: BT.heel_strike_posture(NAN), EAGER, "`q4` contains NaN"),
    ("BipedWithTorso.step_length-q-shape", lambda: BT.step_length(jnp.zeros(3)), EAGER,
     r"`q` must have shape \(5,\)"),
    ("CompassGait.step_length-q-nan", lambda: CG.step_length(jnp.full(4, NAN)), EAGER, "`q` contains NaN"),
    ("point-unknown", lambda: CW.point(Q, "Z"), EAGER, "unknown point 'Z'"),
    ("contact_jacobian-unknown", lambda: CW.contact_jacobian(Q, "Z"), EAGER, "unknown point 'Z'"),
    ("contact_jacobian-q-nan", lambda: CW.contact_jacobian(_nan_at(Q), "Q"), EAGER, "`q` contains NaN"),
    ("solve_coordinate-unreachable", lambda: CW.solve_coordinate(Q, "Q", 5, 0.0, height=5.0), EAGER,
     "could not place point 'Q'"),
    ("place_crutch-q3-nan", lambda: CW.place_crutch(NAN), EAGER, "`q3` contains NaN"),
    ("place_crutch-unreachable", lambda: CW.place_crutch(0.2, q5=0.0), EAGER, "the crutch cannot reach"),
    ("CrutchWalker.pre_impact_state-q5dot-nan", lambda: CW.pre_impact_state(0.2, NAN), EAGER,
     "`q5dot` contains NaN"),
    ("CrutchWalker.pre_impact_state-q3dot-str", lambda: CW.pre_impact_state(0.2, q3dot="1"), EAGER,
     "`q3dot` must be a number"),
    ("CompassGait.pre_impact_state-q3-inf", lambda: CG.pre_impact_state(INF), EAGER, "`q3` contains NaN"),
    ("BipedWithTorso.pre_impact_state-q4-nan", lambda: BT.pre_impact_state(NAN), EAGER, "`q4` contains NaN"),
    ("SevenLinkHuman.heel_strike_state-omega0-nan", lambda: di.SevenLinkHuman().heel_strike_state(NAN),
     EAGER, "`omega0` contains NaN"),
    ("SevenLinkHuman.heel_strike_state-posture-unreachable", lambda: di.SevenLinkHuman().heel_strike_state(
        posture=di.HeelStrikePosture(thigh_L=-0.8)), ValueError, "trailing foot cannot reach the ground"),
    ("SevenLinkHuman.heel_strike_posture-posture-unreachable", lambda: di.SevenLinkHuman().heel_strike_posture(
        posture=di.HeelStrikePosture(knee_L=1.5)), ValueError, "trailing foot cannot reach the ground"),
    # -- impact (filter_jit: value checks are traced)
    ("impact-q-nan", lambda: di.impact(CW, _nan_at(Q), QDOT, stick=("Q",)), TRACED, "`q` contains NaN"),
    ("impact-qdot-shape", lambda: di.impact(CW, Q, QDOT[:5], stick=("Q",)), EAGER,
     r"`qdot_minus` must have shape \(6,\)"),
    ("impact-above-ground", lambda: di.impact(CW, Q_AIR, QDOT, stick=("Q",)), TRACED,
     "contact point 'Q' is not on the ground"),
    ("impact-separating", lambda: di.impact(CW, Q, QDOT_UP, stick=("Q",)), TRACED,
     "`stick` point 'Q' is not approaching"),
    ("impact-unknown-point", lambda: di.impact(CW, Q, QDOT, stick=("Z",)), EAGER, "unknown point 'Z'"),
    ("impact-unknown-coordinate", lambda: di.impact(CW, Q, QDOT, stick=("Q",), blocked=("q9",)), EAGER,
     "`blocked`: unknown coordinate 'q9'"),
    ("impact-redundant", lambda: di.impact(CW, Q, QDOT, stick=("Q",), blocked=("q1", "q2", "q3", "q4", "q5")),
     TRACED, "redundant"),
    ("impact-redundant-active", lambda: di.impact(CW, Q, QDOT, stick=("Q",), blocked=("q1", "q2", "q3", "q4", "q5"),
                                                  blocked_active={"q5": jnp.asarray(True)}), TRACED, "redundant"),
    ("impact-blocked-active-unknown", lambda: di.impact(CW, Q, QDOT, stick=("Q",), blocked=("q3",),
                                                        blocked_active={"q4": jnp.asarray(False)}), EAGER,
     "`blocked_active` names 'q4', which is not in `blocked`"),
    ("impact-restitution-above-1", lambda: di.impact(CW, Q, QDOT, stick=("Q",), restitution={"Q": 1.5}),
     TRACED, r"`restitution\['Q'\]` must lie in \[0, 1\]"),
    ("impact-point-twice", lambda: di.impact(CW, Q, QDOT, stick=("Q",), unilateral=("Q",)), EAGER,
     "a point may appear once"),
    ("constrained_impact-M-nan", lambda: di.constrained_impact(M.at[0, 0].set(NAN), A, QDOT), TRACED,
     "`M` contains NaN"),
    ("constrained_impact-M-not-square", lambda: di.constrained_impact(M[:5], A, QDOT), EAGER,
     "`M` must be a square matrix"),
    ("constrained_impact-A-shape", lambda: di.constrained_impact(M, A[:, :5], QDOT), EAGER,
     r"`A` must have shape \(m, 6\)"),
    ("constrained_impact-redundant", lambda: di.constrained_impact(M, jnp.concatenate([A, A[:1]]), QDOT), TRACED,
     "redundant"),
    ("constrained_impact-b_plus-shape", lambda: di.constrained_impact(M, A, QDOT, jnp.zeros(3)), EAGER,
     r"`b_plus` must have shape \(2,\)"),
    ("constrained_impact-massless", lambda: di.constrained_impact(M, A, QDOT, massless="drop"), EAGER,
     "`massless` must be 'error' or 'keep'"),
    # -- frictional impact
    ("frictional_impact-mu-negative", lambda: di.frictional_impact(CW, Q, QDOT, "Q", friction=di.Coulomb(-0.1)), EAGER,
     "`mu` must be non-negative"),
    ("frictional_impact-mu-nan", lambda: di.frictional_impact(CW, Q, QDOT, "Q", friction=di.Coulomb(NAN)), EAGER, "`mu` contains NaN"),
    ("frictional_impact-no-coulomb", lambda: di.frictional_impact(CW, Q, QDOT, "Q", friction=None), EAGER,
     "`friction` must be a `Coulomb` law"),
    ("frictional_impact-above-ground", lambda: di.frictional_impact(CW, Q_AIR, QDOT, "Q", friction=COULOMB), TRACED,
     "point 'Q' is not on the ground"),
    ("frictional_impact-separating", lambda: di.frictional_impact(CW, Q, QDOT_UP, "Q", friction=COULOMB), TRACED,
     "the contact point must approach the ground"),
    ("frictional_impact-qdot-complex", lambda: di.frictional_impact(CW, Q, QDOT * 1j, "Q", friction=COULOMB), EAGER,
     "`qdot_minus` must have a real dtype"),
    ("frictional_impact-unknown-point", lambda: di.frictional_impact(CW, Q, QDOT, "Z", friction=COULOMB), EAGER,
     "unknown point 'Z'"),
    ("frictional_impact_map-M-not-square", lambda: di.frictional_impact_map(M[:5], A[0], A[1], QDOT, 0.5), EAGER,
     "`M` must be a square matrix"),
    ("frictional_impact_map-a_t-zero", lambda: di.frictional_impact_map(M, A[0], 0 * A[1], QDOT, 0.5), EAGER,
     "`a_t` gives A_t M⁻¹ A_tᵀ <= 0"),
    ("frictional_impact_map-a_n-nan", lambda: di.frictional_impact_map(M, _nan_at(A[0]), A[1], QDOT, 0.5), EAGER,
     "`a_n` contains NaN"),
    ("frictional_impact_map-mu-negative", lambda: di.frictional_impact_map(M, A[0], A[1], QDOT, -1.0), EAGER,
     "`mu` must be non-negative"),
    ("impulse_space_path-num", lambda: di.impulse_space_path(di.frictional_impact(CW, Q, QDOT, "Q", friction=COULOMB), num=1), EAGER,
     "`num` must be at least 2"),
    # -- contact laws and stiffness helpers
    ("HuntCrossley-stiffness-negative", lambda: di.HuntCrossley(-1.0), EAGER, "`stiffness` must be positive"),
    ("HuntCrossley-damping-negative", lambda: di.HuntCrossley(1e6, -1.0), EAGER, "`damping` must be non-negative"),
    ("HuntCrossley-stiffness-nan", lambda: di.HuntCrossley(NAN), EAGER, "`stiffness` contains NaN"),
    ("KelvinVoigt-stiffness-zero", lambda: di.KelvinVoigt(0.0), EAGER, "`stiffness` must be positive"),
    ("Coulomb-mu-negative", lambda: di.Coulomb(-0.1), EAGER, "`mu` must be non-negative"),
    ("RegularisedCoulomb-velocity_scale-zero", lambda: di.RegularisedCoulomb(0.5, 0.0), EAGER,
     "`velocity_scale` must be positive"),
    ("TangentialSpring-stiffness-inf", lambda: di.TangentialSpring(INF, 0.5), EAGER, "`stiffness` contains NaN"),
    ("hertz_stiffness-radius-zero", lambda: di.hertz_stiffness(0.0, 1e8, 0.5, 3e10, 0.2), EAGER,
     "`radius` must be positive"),
    ("hertz_stiffness-poisson", lambda: di.hertz_stiffness(0.05, 1e8, 1.0, 3e10, 0.2), EAGER,
     "`nu1` must be a Poisson ratio"),
    ("mindlin_stiffness-E2-negative", lambda: di.mindlin_stiffness(0.05, 1e8, 0.5, -3e10, 0.2), EAGER,
     "`E2` must be positive"),
    ("damping_from_restitution-e", lambda: di.damping_from_restitution(1e6, 1.5, 1.0), EAGER,
     "`restitution` must be in"),
    ("damping_from_restitution-rule", lambda: di.damping_from_restitution(1e6, 0.5, 1.0, rule="x"), EAGER,
     "`rule` must be"),
    # -- compliant impact
    ("compliant_impact-q-nan", lambda: _compliant(_nan_at(Q), QDOT), TRACED,
     "`q` contains NaN"),
    ("compliant_impact-qdot_minus-shape", lambda: di.compliant_impact(CW, Q, QDOT[:5], "Q", **LAWS), EAGER,
     r"`qdot_minus` must have shape \(6,\)"),
    ("compliant_impact-rigid", lambda: di.compliant_impact(CW, Q, QDOT, "Q", normal=None, friction=COULOMB), EAGER, "no normal law"),
    ("compliant_impact-no-contacts", lambda: di.compliant_impact(CW, Q, QDOT, (), **LAWS), EAGER,
     "`points` must name at least one contact point"),
    ("compliant_impact-unknown-point", lambda: di.compliant_impact(CW, Q, QDOT, "Z", **LAWS),
     EAGER, "`points` names points"),
    ("compliant_impact-end", lambda: di.compliant_impact(CW, Q, QDOT, "Q", **LAWS, end="never"), EAGER, "`end` must be"),
    ("compliant_impact-separating", lambda: _compliant(Q, QDOT_UP), TRACED,
     "already separating"),
    ("compliant_impact-max_steps", lambda: _compliant(Q, QDOT), TRACED,
     "max_steps"),
    ("tip_contact-kn_factor-nan", lambda: tip_contact(kn_factor=NAN), EAGER,
     "`kn_factor` contains NaN"),
    # -- sweeps and grids
    ("sweep-fn", lambda: di.sweep(3, jnp.ones(2)), EAGER, "`fn` must be callable"),
    ("sweep-chunk_size", lambda: di.sweep(jnp.sin, jnp.ones(2), chunk_size=0), EAGER, "`chunk_size` must be"),
    ("sweep-params-empty", lambda: di.sweep(jnp.sin, {}), EAGER, "`params` must be a pytree"),
    ("sweep-params-ragged", lambda: di.sweep(lambda p: p["a"] + p["b"], {"a": jnp.ones(2), "b": jnp.ones(3)}),
     EAGER, "`params`"),
    ("sweep-bad-value-in-batch", lambda: di.sweep(lambda l: di.CompassGait(l=l).mass_matrix(jnp.zeros(4)),
                                                  jnp.array([1.0, -1.0])), TRACED, "`l` must be positive"),
    ("grid-no-axes", lambda: di.grid(), EAGER, "`grid` needs at least one keyword axis"),
    ("grid-empty-axis", lambda: di.grid(q3=[]), EAGER, "grid axis `q3` must be a non-empty 1-D array"),
    ("grid-nan-axis", lambda: di.grid(q3=[0.1, NAN]), EAGER, "grid axis `q3` contains NaN"),
    # -- objectives and optimisation
    ("energy_loss-separating", lambda: di.energy_loss(CW, Q, QDOT_UP, stick=("Q",)), TRACED,
     "`stick` point 'Q' is not approaching"),
    ("sliding_margin-mu-negative", lambda: di.sliding_margin(CW, Q, QDOT, "Q", friction=di.Coulomb(-0.5)), EAGER,
     "`mu` must be non-negative"),
    ("loss_per_distance-no-step-length", lambda: di.loss_per_distance(CW, Q, di.constrained_impact(M, A, QDOT)),
     EAGER, "CrutchWalker defines no `step_length`"),
    ("minimise-steps", _minimise_zero_steps, EAGER, "`steps` must be at least 1"),
    # -- a class instead of an instance, wherever a model (or a tree, a table) is taken
    ("impact-model-class", lambda: di.impact(di.CrutchWalker, Q, QDOT, stick=("Q",)), EAGER,
     "`model` must be an instance of AbstractPlanarModel, got the class CrutchWalker itself"),
    ("frictional_impact-model-class", lambda: di.frictional_impact(di.CrutchWalker, Q, QDOT, "Q", friction=COULOMB), EAGER,
     "got the class CrutchWalker itself"),
    ("compliant_impact-model-class", lambda: di.compliant_impact(di.CrutchWalker, Q, QDOT, "Q", **LAWS), EAGER,
     "got the class CrutchWalker itself"),
    ("post_impact_velocity-model-class", lambda: di.post_impact_velocity(di.CrutchWalker, Q, QDOT, "Q",
                                                                         stick=("Q",)), EAGER, "`model` must be"),
    ("loss_per_distance-model-class", lambda: di.loss_per_distance(di.CompassGait, jnp.zeros(4), None), EAGER,
     "got the class CompassGait itself"),
    ("TreeModel-tree-class", lambda: di.TreeModel(di.PlanarTree), EAGER, "`planar_tree` must be an instance"),
    ("scale_segments-table-str", lambda: di.scale_segments("dumas"), EAGER, "`table` must be an instance"),
    ("Contact-normal_law-str", lambda: di.Contact("Q", "hunt"), EAGER, "`normal_law` must be an instance"),
    ("Contact-point-int", lambda: di.Contact(3, TIP.normal_law), EAGER, "`point` must be a point name"),
    # -- malformed tree descriptions
    ("PlanarTree.build-body-tuple", lambda: _tree(bodies=[("a", -1, 2, 1.0)]), EAGER, r"`bodies\[0\]` must be a Body"),
    ("PlanarTree.build-no-bodies", lambda: _tree(bodies=[]), EAGER, r"`bodies` must be a sequence of Body \(one or more\)"),
    ("PlanarTree.build-points-str", lambda: _tree(points="p"), EAGER, "`points` must be a sequence of Point, got 'p'"),
    ("PlanarTree.build-n-float", lambda: _tree(n=3.0), EAGER, "`n` must be an integer"),
    ("PlanarTree.build-n-1", lambda: _tree(n=1, bodies=[di.Body("a", -1, -1, 1.0)]), EAGER, "`n` must be at least 2"),
    ("PlanarTree.build-name-int", lambda: _tree(bodies=[di.Body(7, -1, 2, 1.0)]), EAGER,
     r"`bodies\[0\]` must be a Body\(...\) with a string name, got Body\(name=7"),
    ("PlanarTree.build-com-shape", lambda: _tree(bodies=[di.Body("a", -1, 2, 1.0, 0.0, (0.5,))]), EAGER,
     r"`Body.com` must have shape \(2,\)"),
    ("PlanarTree.build-mass-str", lambda: _tree(bodies=[di.Body("a", -1, 2, "1")]), EAGER,
     "`Body.mass` must be a number"),
    ("PlanarTree.build-sign-str", lambda: _tree(bodies=[di.Body("a", -1, 2, 1.0, sign="x")]), EAGER,
     r"`bodies\[0\].sign` must be a finite Python number, got 'x'"),
    # -- names: one string is one point; no constraint at all; wrongly typed options
    ("impact-no-constraint", lambda: di.impact(CW, Q, QDOT), EAGER, "needs at least one post-impact constraint"),
    ("impact-restitution-number", lambda: di.impact(CW, Q, QDOT, stick="Q", restitution=0.5), EAGER,
     "`restitution` must be a mapping"),
    ("impact-throw-str", lambda: di.impact(CW, Q, QDOT, stick="Q", throw="no"), EAGER, "`throw` must be True or"),
    ("frictional_impact-no-friction", lambda: di.frictional_impact(CW, Q, QDOT, "Q"), EAGER,
     "friction"),
    ("frictional_impact-point-int", lambda: di.frictional_impact(CW, Q, QDOT, 3, friction=COULOMB), EAGER,
     "`point` must be a point name"),
    ("impulse_space_path-num-float", lambda: di.impulse_space_path(di.frictional_impact(CW, Q, QDOT, "Q", friction=COULOMB), num=10.5),
     EAGER, "`num` must be an integer"),
    ("solve_coordinate-coord", lambda: CW.solve_coordinate(Q, "Q", 9, Q[5]), EAGER,
     r"`coord` must be a coordinate index in 0..5"),
    ("sweep-progress-str", lambda: di.sweep(jnp.sin, jnp.ones(2), progress="no"), EAGER,
     "`progress` must be True or False"),
    ("HuntCrossley-stiffness-vector", lambda: di.HuntCrossley(jnp.ones(3)), EAGER, r"`stiffness` must have shape \(\)"),
    # -- tolerances and limits
    ("impact-ground_tol-negative", lambda: di.impact(CW, Q, QDOT, stick="Q", ground_tol=-1.0), EAGER,
     "`ground_tol` must be non-negative"),
    ("frictional_impact-ground_tol-inf", lambda: di.frictional_impact(CW, Q_AIR, QDOT, "Q", friction=COULOMB, ground_tol=INF), EAGER,
     "`ground_tol` contains NaN or infinite"),
    ("frictional_impact_map-rest_tol-large", lambda: di.frictional_impact_map(M, A[0], A[1], QDOT, 0.3, rest_tol=10.0),
     EAGER, "`rest_tol` must be below 0.001"),
    ("frictional_impact-rest_tol-nan", lambda: di.frictional_impact(CW, Q, QDOT, "Q", friction=COULOMB, rest_tol=NAN), EAGER,
     "`rest_tol` contains NaN"),
    ("solve_coordinate-rtol-negative", lambda: CW.solve_coordinate(Q, "Q", 5, Q[5], rtol=-1.0), EAGER,
     "`rtol` must be positive"),
    *[(f"compliant_impact-{name}", (lambda options: lambda: di.compliant_impact(CW, Q, QDOT, "Q", **LAWS, **options))(
        options), EAGER, match) for name, options, match in [
        ("max_steps-zero", dict(max_steps=0), "`max_steps` must be at least 1"),
        ("max_phases-zero", dict(max_phases=0), "`max_phases` must be at least 1"),
        ("max_steps-float", dict(max_steps=100.0), "`max_steps` must be an integer"),
        ("rtol-negative", dict(rtol=-1e-8), "`rtol` must be positive"),
        ("rtol-one", dict(rtol=1.0), "`rtol` must be below 1"),
        ("atol-zero", dict(atol=0.0), "`atol` must be positive"),
        ("t_max-zero", dict(t_max=0.0), "`t_max` must be positive"),
        ("solver-str", dict(solver="Tsit5"), "`solver` must be an instance of AbstractSolver"),
    ]],
    ("compliant_impact-contact-twice", lambda: di.compliant_impact(CW, Q, QDOT, ("Q", "Q"), **LAWS), EAGER,
     r"a point may appear once in `points`, got \['Q', 'Q'\]"),
    ("compliant_impact-normal-str", lambda: di.compliant_impact(CW, Q, QDOT, "Q", normal="hunt"), EAGER,
     "`normal` must be a law"),
    ("compliant_impact-friction-unknown-point", lambda: di.compliant_impact(CW, Q, QDOT, "Q", normal=TIP.normal_law,
                                                                            friction={"Z": COULOMB}), EAGER,
     r"`friction` names \['Z'\], which are not contact points"),
    ("impact-blocked-rate-nan", lambda: di.impact(CW, Q, QDOT, stick="Q", blocked={"q5": NAN}), EAGER,
     r"`blocked\['q5'\]` contains NaN"),
    # -- maps that take M: symmetric, positive (semi-)definite; also under vmap
    ("constrained_impact-M-asymmetric", lambda: di.constrained_impact(M_ASYMMETRIC, A, QDOT), TRACED,
     "`M` must be symmetric"),
    ("constrained_impact-M-indefinite", lambda: di.constrained_impact(M_INDEFINITE, A, QDOT), TRACED,
     "`M` must be positive semi-definite"),
    ("frictional_impact_map-M-asymmetric", lambda: di.frictional_impact_map(M_ASYMMETRIC, A[0], A[1], QDOT, 0.5),
     EAGER, "`M` must be symmetric"),
    ("frictional_impact_map-M-indefinite", lambda: di.frictional_impact_map(M_INDEFINITE, A[0], A[1], QDOT, 0.5),
     EAGER, "`M` must be positive definite"),
    # -- finite input that overflows: an error, never inf/NaN results
    ("impact-overflow", lambda: di.impact(CW, Q, QDOT * BIG, stick="Q"), TRACED, "non-finite velocities, impulses"),
    ("constrained_impact-overflow", lambda: di.constrained_impact(M, A, QDOT * BIG), TRACED, "overflow"),
    ("compliant_impact-overflow", lambda: _compliant(Q, QDOT * BIG), TRACED,
     "the initial kinetic energy is not finite although the inputs are finite"),
    ("frictional_impact-overflow", lambda: di.frictional_impact(CW, Q, QDOT * BIG, "Q", friction=COULOMB), TRACED,
     "non-finite velocities, impulses or works"),
    ("kinetic_energy-overflow", lambda: CG.kinetic_energy(jnp.zeros(4), jnp.full(4, BIG)), EAGER,
     "CompassGait.kinetic_energy is not finite although the inputs are finite"),
    ("bias-overflow", lambda: CW.bias(Q, QDOT * BIG), EAGER, "CrutchWalker.bias is not finite"),
    ("SevenLinkHuman-body_mass-overflow", lambda: di.SevenLinkHuman(body_mass=1e300), EAGER,
     "scale_segments is not finite although the inputs are finite: `body_mass` or `height`"),
    # -- minimise: what it is given, and what becomes non-finite while it runs
    ("minimise-params-nan", lambda: _minimise(params=jnp.array([NAN, 1.0])), EAGER, r"`params` contains NaN"),
    ("minimise-params-str", lambda: _minimise(params="x"), EAGER, "`params` must be a number"),
    ("minimise-bounds-shape", lambda: _minimise(bounds=(jnp.zeros(3), jnp.ones(3))), EAGER,
     r"`bounds\[0\]` has a leaf of shape \(3,\) for a parameter of shape \(2,\)"),
    ("minimise-bounds-one", lambda: _minimise(bounds=(jnp.zeros(2),)), EAGER, r"`bounds` must be a pair"),
    ("minimise-bounds-nan", lambda: _minimise(bounds=(jnp.array([NAN, 0.0]), 1.0)), EAGER, r"`bounds\[0\]` contains NaN"),
    ("minimise-optimiser-str", lambda: _minimise(optimiser="adam"), EAGER,
     "`optimiser` must be an optax.GradientTransformation"),
    ("minimise-optimiser-factory", lambda: _minimise(optimiser=optax.adam), EAGER, r"call it, e.g. `optax.adam"),
    ("minimise-fn-vector", lambda: _minimise(fn=lambda p: p**2), EAGER, "`fn` must return a real scalar"),
    ("minimise-fn-not-callable", lambda: _minimise(fn=3.0), EAGER, "`fn` must be a function"),
    ("minimise-steps-bool", lambda: _minimise(steps=True), EAGER, "`steps` must be an integer"),
    ("minimise-objective-nan", lambda: _minimise(fn=lambda p: jnp.sum(jnp.log(p)), optimiser=optax.sgd(2.0)), TRACED,
     "The objective `fn`, the `constraints` or their gradient returned NaN or inf"),
    ("minimise-constraints-nan", lambda: _minimise(constraints=lambda p: jnp.sqrt(p[:1] - 0.5), rounds=2), TRACED,
     "The objective `fn`, the `constraints` or their gradient returned NaN or inf"),
    ("minimise-step-overflow", lambda: _minimise(fn=lambda p: jnp.sum(p**4), optimiser=optax.sgd(1e308)), TRACED,
     "The `optimiser` step gave NaN or inf"),
    # -- the worked examples
    ("Problem.solve-start-shape", lambda: di.biped_torso().solve(jnp.zeros(3)), EAGER, r"`start` must have shape \(2,\)"),
    ("Problem.solve_from-starts-shape", lambda: di.biped_torso().solve_from(jnp.zeros(2)), EAGER,
     r"`starts` must have shape \(k, 2\), got \(2,\)"),
    ("Problem.solve_from-starts-nan", lambda: di.biped_torso().solve_from(jnp.full((1, 2), NAN)), EAGER,
     "`starts` contains NaN"),
    ("compass_foot_radius-foot_length", lambda: di.compass_foot_radius(foot_length=-0.25), EAGER,
     "`foot_length` must be positive"),
    ("crutch_peak_force-rtol", lambda: di.crutch_peak_force(rtol=-1.0), EAGER, "`rtol` must be positive"),
    ("biped_torso-lift_off-nan", lambda: di.biped_torso(lift_off=NAN), EAGER, "`lift_off` contains NaN"),
    ("ankle_blocking-target", lambda: di.ankle_blocking(target=1.5), EAGER, "`target` must be below 1"),
    ("impulse_space_path-not-an-impact", lambda: di.impulse_space_path(None), EAGER,
     "`impact` must be an instance of FrictionalImpact"),
    ("sweep-chunk_size-float", lambda: di.sweep(jnp.sin, jnp.ones(2), chunk_size=2.5), EAGER,
     "`chunk_size` must be an integer"),
]


# The compliant run-time checks share one compiled solve (~30 s of compiling on 2 cores): marked slow.
SLOW = {"compliant_impact-q-nan", "compliant_impact-separating", "compliant_impact-max_steps",
        "compliant_impact-overflow"}


@pytest.mark.parametrize("thunk, errors, match", [
    pytest.param(*c[1:], id=c[0], marks=[pytest.mark.slow] if c[0] in SLOW else []) for c in CASES])
def test_bad_input_raises(thunk, errors, match):
    with pytest.raises(errors, match=match):
        jax.block_until_ready(thunk())


@pytest.fixture(scope="module")
def jitted():
    """Functions compiled once, fed good and bad values: the check runs at run time (``eqx.error_if``)."""
    return dict(
        walker=eqx.filter_jit(lambda m: di.CrutchWalker(masses=m).mass_matrix(Q)),
        mass_matrix=eqx.filter_jit(lambda q: CW.mass_matrix(q)),
        hunt_crossley=eqx.filter_jit(lambda k: di.HuntCrossley(k).force(1e-4, 0.0)),
        coulomb=eqx.filter_jit(lambda mu: di.Coulomb(mu).mu),
        place=eqx.filter_jit(lambda q3: CW.place_crutch(q3)),
        pre_impact=eqx.filter_jit(lambda q3, q5dot: CW.pre_impact_state(q3, q5dot)),
    )


@pytest.mark.parametrize("name, good, bad, match", [
    ("walker", jnp.array([22.54, 40.46, 3.92, 4.28]), jnp.array([22.54, -1.0, 3.92, 4.28]),
     "`masses` must be positive"),
    ("mass_matrix", Q, _nan_at(Q, 3), "`q` contains NaN"),
    ("hunt_crossley", jnp.asarray(1e6), jnp.asarray(-1e6), "`stiffness` must be positive"),
    ("coulomb", jnp.asarray(0.5), jnp.asarray(-0.5), "`mu` must be non-negative"),
    ("place", jnp.asarray(0.2), jnp.asarray(NAN), "`q3` contains NaN"),
    ("pre_impact", (jnp.asarray(0.2), jnp.asarray(-0.2)), (jnp.asarray(0.2), jnp.asarray(NAN)), "`q5dot` contains NaN"),
])
def test_same_message_under_jit(jitted, name, good, bad, match):
    """The eager message also comes out of a compiled function, and the good value still runs."""
    fn = jitted[name]
    args = good if isinstance(good, tuple) else (good,)
    assert all(jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(fn(*args)))
    with pytest.raises(TRACED, match=match):
        jax.block_until_ready(fn(*(bad if isinstance(bad, tuple) else (bad,))))


def test_error_under_vmap():
    """One bad element of a batch raises with the message (``eqx.error_if`` under ``vmap``)."""
    fn = jax.vmap(lambda q3: di.frictional_impact(CW, Q.at[2].add(0 * q3), QDOT, "Q", friction=di.Coulomb(q3)).normal_impulse)
    assert np.all(np.isfinite(fn(jnp.array([0.5, 0.9]))))
    with pytest.raises(TRACED, match="`mu` must be non-negative"):
        jax.block_until_ready(fn(jnp.array([0.5, -0.9])))


def test_throw_false_returns_result_not_nan():
    """With ``throw=False`` a failure is a result flag; the returned numbers stay finite (no silent NaN)."""
    bad = di.constrained_impact(M, jnp.concatenate([A, A[:1]]), QDOT, throw=False)
    assert bad.result == di.ImpactResults.redundant_constraints
    assert np.all(np.isfinite(bad.qdot_plus))


def test_cli_unknown_experiment(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["reproduce", "no-such-experiment"])
    assert exit_info.value.code == 2
    assert "no-such-experiment" in capsys.readouterr().err


def test_single_name_is_one_point():
    """``stick="Q"`` is the point ``Q``, as ``stick=("Q",)`` (not the letters of the name)."""
    one, many = di.impact(CW, Q, QDOT, stick="Q"), di.impact(CW, Q, QDOT, stick=("Q",))
    np.testing.assert_array_equal(one.qdot_plus, many.qdot_plus)
    np.testing.assert_array_equal(one.impulses, many.impulses)


def test_bad_member_of_a_batch_of_mass_matrices():
    """The symmetry check of ``M`` runs under ``vmap`` (no LAPACK call): one bad member raises, a good batch runs."""
    fn = jax.vmap(lambda MM: di.constrained_impact(MM, A, QDOT).qdot_plus)
    assert np.all(np.isfinite(fn(jnp.stack([M, 2 * M]))))
    with pytest.raises(TRACED, match="`M` must be symmetric"):
        jax.block_until_ready(fn(jnp.stack([M, M_ASYMMETRIC])))


def test_psd_check_against_eigenvalues(rng):
    """``psd_matrix`` accepts every positive semi-definite matrix, singular ones included (a massless segment),
    and rejects a smallest eigenvalue below −√ε · max M_ii, as NumPy's ``eigvalsh`` says (sizes 1..9)."""
    from difimpact._validation import psd_matrix

    for n in range(1, 10):
        V, _ = np.linalg.qr(rng.normal(size=(n, n)))
        w = rng.uniform(0.1, 10.0, n)
        for smallest, ok in ((0.0, True), (1e-3, True), (-1e-3, False), (-1.0, False)):
            w[0] = smallest
            a = (V * w) @ V.T
            a = 0.5 * (a + a.T)
            assert (np.linalg.eigvalsh(a)[0] >= -1e-12) == ok
            if ok:
                psd_matrix("M", a)
                if smallest > 0:
                    psd_matrix("M", a, definite=True)
            else:
                with pytest.raises(ValueError, match="`M` must be positive semi-definite"):
                    psd_matrix("M", a)
    psd_matrix("M", np.zeros((3, 3)))  # the zero matrix is semi-definite
    with pytest.raises(ValueError, match="positive definite"):
        psd_matrix("M", np.diag([1.0, 0.0]), definite=True)


def test_minimise_stops_at_the_last_finite_iterate():
    """SGD with step 2 on ``Σ log p`` from ``p = 1`` jumps to ``p = −1`` where ``log`` is NaN: with ``throw=False``
    the result says so and keeps ``p = 1`` (value ``log 1 = 0``), never NaN parameters."""
    res = _minimise(fn=lambda p: jnp.sum(jnp.log(p)), optimiser=optax.sgd(2.0), throw=False)
    assert res.result == di.OptimiseResults.nonfinite
    np.testing.assert_array_equal(res.params, [1.0, 1.0])
    assert res.value == 0.0 and np.isnan(res.history_value[1])
