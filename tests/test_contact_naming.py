"""One way to name a contact: by its point's name, with its laws by keyword, in the impulsive, frictional and
compliant maps (a `Contact` in their place and ``mass_matrix=``, deprecated in 0.1, are removed in 0.2.0); the values of `blocked`, `restitution` and `blocked_active` are traced (a new value runs
the same compiled program)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di
from difimpact._contact.naming import contacts_of, laws_by_name
from difimpact.papers.font_llagunes_2012.crutch_tip import tip_contact
from difimpact._impact import ground

WALKER = di.CrutchWalker()
Q, QDOT = WALKER.pre_impact_state(q3=math.radians(12.0), q5dot=-0.2)
TIP = tip_contact()  # Hunt–Crossley with Hertz stiffness, Coulomb μ = 0.75 at the point "Q"


def _same(a, b):
    """Every array leaf of `a` equals that of `b` exactly (same structure)."""
    leaves_a, leaves_b = jax.tree.leaves(a), jax.tree.leaves(b)
    assert jax.tree.structure(a) == jax.tree.structure(b)
    for x, y in zip(leaves_a, leaves_b):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


# -- frictional: a point name with friction= -----------------------------------------------------------------------

def test_frictional_impact_by_name_and_by_mapping_agree():
    coulomb = di.Coulomb(0.75)
    named = di.frictional_impact(WALKER, Q, QDOT, "Q", friction=coulomb)
    by_mapping = di.frictional_impact(WALKER, Q, QDOT, "Q", friction={"Q": coulomb})
    _same(named, by_mapping)
    assert named.regime == di.FrictionalRegime.slide_stick
    np.testing.assert_allclose([named.normal_impulse, named.tangential_impulse], [14.155, -9.769], atol=1e-3)


def test_the_contact_forms_of_0_1_are_removed():
    contact = di.Contact("Q", friction_law=di.Coulomb(0.75))
    with pytest.raises(TypeError, match="`point` must be a point name"):
        di.frictional_impact(WALKER, Q, QDOT, contact, friction=contact.friction_law)
    with pytest.raises(TypeError):
        di.frictional_impact(WALKER, Q, QDOT, contact=contact)
    with pytest.raises(TypeError):
        di.sliding_margin(WALKER, Q, QDOT, contact)
    with pytest.raises(TypeError):
        di.compliant_impact(WALKER, Q, QDOT, (TIP,))


def test_frictional_impact_checks_its_names():
    with pytest.raises(TypeError, match="`point` must be a point name"):
        di.frictional_impact(WALKER, Q, QDOT, ("Q",), friction=di.Coulomb(0.75))
    with pytest.raises(TypeError, match="`friction` must be a `Coulomb` law"):
        di.frictional_impact(WALKER, Q, QDOT, "Q", friction=di.RegularisedCoulomb(0.75, 1e-3))
    with pytest.raises(ValueError, match=r"`friction` names \['P'\], which are not contact points"):
        di.frictional_impact(WALKER, Q, QDOT, "Q", friction={"P": di.Coulomb(0.75)})


def test_the_mass_matrix_is_M():
    M, A = WALKER.mass_matrix(Q), WALKER.contact_jacobian(Q, "Q")
    new = di.frictional_impact_map(M, A[0], A[1], QDOT, 0.75)
    keyword = di.frictional_impact_map(M=M, a_n=A[0], a_t=A[1], qdot_minus=QDOT, mu=0.75)
    _same(new, keyword)
    with pytest.raises(TypeError, match="mass_matrix"):  # its name in 0.1
        di.frictional_impact_map(mass_matrix=M, a_n=A[0], a_t=A[1], qdot_minus=QDOT, mu=0.75)
    with pytest.raises(ValueError, match="`M` must be symmetric"):
        di.frictional_impact_map(M.at[0, 1].add(1.0), A[0], A[1], QDOT, 0.75)


# -- compliant: point names with normal= and friction= -------------------------------------------------------------

def test_laws_by_name():
    """One law for every point and the same laws by point are the same contacts, and one pytree structure (one
    compiled program)."""
    hc, coulomb = TIP.normal_law, TIP.friction_law
    one = laws_by_name(("Q", "P"), hc, coulomb)
    by_point = laws_by_name(("Q", "P"), {"Q": hc, "P": hc}, {"Q": coulomb, "P": coulomb})
    assert jax.tree.structure(one) == jax.tree.structure(by_point)
    assert laws_by_name("Q", hc, None)["friction"] == {"Q": None}
    assert laws_by_name(("Q", "P"), hc, {"Q": coulomb})["friction"] == {"Q": coulomb, "P": None}  # P frictionless
    assert contacts_of(("Q",), hc, coulomb) == (di.Contact("Q", hc, coulomb),)
    with pytest.raises(ValueError, match=r"`normal`: no normal law for \['P'\]"):
        laws_by_name(("Q", "P"), {"Q": hc}, None)
    with pytest.raises(TypeError, match=r"`friction\['Q'\]` must be a AbstractFrictionLaw"):
        laws_by_name("Q", hc, {"Q": hc})
    assert laws_by_name(3, hc, None) == {}  # not names: the map reports it


@pytest.mark.slow
def test_compliant_impact_by_name_and_by_mapping_agree():
    options = {"rtol": 1e-6, "max_steps": 2048}
    named = di.compliant_impact(WALKER, Q, QDOT, "Q", normal=TIP.normal_law, friction=TIP.friction_law, **options)
    _same(named, di.compliant_impact(WALKER, Q, QDOT, ("Q",), normal={"Q": TIP.normal_law},
                                     friction={"Q": TIP.friction_law}, **options))
    np.testing.assert_allclose(named.normal_impulse, [14.41], atol=0.01)
    np.testing.assert_allclose(di.peak_contact_force(WALKER, Q, QDOT, "Q", normal=TIP.normal_law,
                                                    friction=TIP.friction_law, **options), named.peak_normal_force[0])


# -- impulsive: blocked, restitution and blocked_active values are traced ------------------------------------------

@pytest.fixture
def traces(monkeypatch):
    """A counter of the traces of :func:`~difimpact.impact`: its constraint rows are built once per trace."""
    count = [0]
    build = ground._fixed_rows

    def counted(*args, **kwargs):
        count[0] += 1
        return build(*args, **kwargs)

    monkeypatch.setattr(ground, "_fixed_rows", counted)
    return count


def _hit(ground_tol=1e-6, **options):
    return di.impact(WALKER, Q, QDOT, stick="Q", ground_tol=ground_tol, **options)


def test_two_blocked_rates_compile_one_program(traces):
    tol = 1.2345e-6  # static: a program no other test compiles
    slow, fast = _hit(tol, blocked={"q5": 0.1}), _hit(tol, blocked={"q5": 0.3})
    assert traces[0] == 1
    np.testing.assert_allclose([slow.qdot_plus[4], fast.qdot_plus[4]], [0.1, 0.3], rtol=1e-6)
    _same(slow, _hit(tol, blocked={"q5": jnp.asarray(0.1)}))  # a Python number and an array: one program
    assert traces[0] == 1


def test_restitution_and_blocking_flags_compile_one_program(traces):
    def hit(**options):  # a program no other test compiles
        return _hit(1.2346e-6, **options)

    a, b = hit(restitution={"Q": 0.2}), hit(restitution={"Q": 0.5})
    assert traces[0] == 1
    v_n = WALKER.contact_jacobian(Q, "Q")[0]
    np.testing.assert_allclose([v_n @ a.qdot_plus, v_n @ b.qdot_plus], -np.array([0.2, 0.5]) * float(v_n @ QDOT),
                               rtol=1e-5)
    held, free = hit(blocked=("q5",), blocked_active={"q5": True}), hit(blocked=("q5",), blocked_active={"q5": False})
    assert traces[0] == 2
    assert float(held.qdot_plus[4]) == 0.0 and float(free.impulses[2]) == 0.0
    _same(free, hit(blocked=("q5",), blocked_active={"q5": jnp.asarray(False)}))
    assert traces[0] == 2


def test_a_blocked_rate_matches_the_matrix_map_and_its_derivative_finite_differences():
    """``q̇5⁺ = r`` by the matrix-level map (rows ``[A_n; A_t; e_5]``, ``b⁺ = (0, 0, r)``), and ``∂q̇⁺/∂r`` by
    automatic differentiation against central differences of Python numbers (the map is affine in ``r``)."""
    A = jnp.concatenate([WALKER.contact_jacobian(Q, "Q"), jnp.eye(6)[4][None]])
    direct = di.constrained_impact(WALKER.mass_matrix(Q), A, QDOT, jnp.array([0.0, 0.0, 0.25]))
    np.testing.assert_allclose(_hit(blocked={"q5": 0.25}).qdot_plus, direct.qdot_plus, rtol=1e-5, atol=1e-6)
    derivative = jax.jacfwd(lambda r: _hit(blocked={"q5": r}).qdot_plus)(0.25)
    h = 0.05
    central = (_hit(blocked={"q5": 0.25 + h}).qdot_plus - _hit(blocked={"q5": 0.25 - h}).qdot_plus) / (2 * h)
    np.testing.assert_allclose(derivative, central, rtol=1e-3, atol=1e-4)
    assert abs(float(derivative[4]) - 1.0) < 1e-5


def test_a_nan_blocked_rate_is_reported_at_the_call():
    with pytest.raises(ValueError, match=r"`blocked\['q5'\]` contains NaN"):
        _hit(blocked={"q5": float("nan")})
