"""The papers' own compiled programs hold no host callback, so that JAX's persistent compilation cache keeps them
for the next `difimpact reproduce` (the library's checks traced as NaN, `difimpact.checks_as_nan`), and a failed
check is raised by the experiment all the same (`papers.curves.require_finite`). Lowered, not compiled."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

from difimpact.papers.curves import require_finite
from difimpact.papers.font_kovecses_2008 import impacts as fk_impacts
from difimpact.papers.font_kovecses_2008 import powered_gait
from difimpact.papers.font_llagunes_2010 import impacts as fl10
from difimpact.papers.font_llagunes_2012 import impacts as fl12
from difimpact.papers.gait_classics import kuo_2002

from ._programs import host_callbacks


def _vector(*values):
    return [jnp.asarray(v, float) for v in values]


PROGRAMS = {
    "font_kovecses_2008._lower_body": (fk_impacts._lower_body, _vector(1.0, 0.5)),
    "font_kovecses_2008._upper_body": (fk_impacts._upper_body, _vector(1.0, 0.1)),
    "font_kovecses_2008._impulsive_only": (powered_gait._impulsive_only, _vector([1.0], [0.5], [0.2])),
    "font_llagunes_2010._compass_impulsive": (fl10._compass_impulsive, _vector(0.2, 0.3)),
    "font_llagunes_2010._crutch_impulsive": (fl10._crutch_impulsive, _vector(0.2, 0.3)),
    "font_llagunes_2012._impulsive_batch": (fl12._impulsive_batch, _vector([0.75], [0.2], [-0.2])),
    "kuo_2002._heel_strike_speed": (kuo_2002._heel_strike_speed, _vector(0.6, np.arcsin(0.3))),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_papers_programs_hold_no_host_callback(name):
    fn, args = PROGRAMS[name]
    assert host_callbacks(fn.lower(*args).as_text()) == 0


def test_the_checks_are_there_as_nan():
    """A negative foot radius, refused by the model (``ValueError`` from Python), gives NaN in the program rather
    than a number, and the experiment's guard raises, naming the program, a quantity and the point."""
    import difimpact as di

    with pytest.raises(ValueError, match="R"):
        di.CompassGait(R=-0.1)
    good = fl10._compass_impulsive(*_vector(0.2, 0.3))
    assert all(np.isfinite(np.asarray(v)) for v in good.values())
    bad = fl10._compass_impulsive(*_vector(-0.1, 0.3))
    assert all(np.isnan(np.asarray(v)) for v in bad.values())
    with pytest.raises(RuntimeError, match=r"_compass_impulsive: \w+ is not finite at point \(1,\) of \(2,\)"):
        fl10._impulsive_sweep(fl10._compass_impulsive, [0.2, -0.1], [0.3, 0.3])


def test_require_finite_names_the_quantity_and_the_point():
    require_finite("sweep", {"a": np.ones((2, 3)), "name": np.array(["x"])})
    a = np.ones((2, 3))
    a[1, 2] = np.inf
    with pytest.raises(RuntimeError, match=r"sweep: a is not finite at point \(1, 2\) of \(2, 3\)"):
        require_finite("sweep", {"a": a})
    with pytest.raises(RuntimeError, match=r"one: b is not finite at point \(\) of \(\)"):
        require_finite("one", {"b": jax.numpy.asarray(np.nan)})


def test_ros_states_around_a_base_hold_no_host_callback():
    """The states around a heel strike of Ros et al. 2015 (eq. 3 moved by ω0 and the torso angle), a program of
    the model's checks: lowered, no callback; called, the base itself at the base's push-off."""
    from difimpact.papers.ros_2015 import heel_strikes, statements

    q0, qd0 = heel_strikes.paper_human().heel_strike_state(-1.0)
    omega0, dtheta = jnp.full(4, float(-qd0[8])), jnp.zeros(4)
    assert host_callbacks(statements._around().lower(omega0, dtheta, q0, qd0).as_text()) == 0
    q, qdot = statements.around(q0, qd0)(omega0, dtheta)
    np.testing.assert_allclose(q[0], q0, atol=1e-12)
    np.testing.assert_allclose(qdot[0], qd0, atol=1e-12)
