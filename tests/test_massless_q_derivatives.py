"""Derivatives with respect to the posture ``q`` exactly at a massless body (issue 49). ``massless="limit"``
holds a coordinate that no body with mass moves by ``Z_Uᵀ D Δq̇ = 0`` (the limit of vanishing masses),
``massless="keep"`` at its pre-impact value along ``U``, and a push-off's velocity takes the same limit; ``U``
and ``D`` turn with ``q``, and the derivatives held them fixed: the massless torso's post-impact rate was 45 % off
in its derivative in the stance angle, a push-off's velocity on massless legs 93 %. At a mass of exactly zero
the maps are smooth in ``q``, so central finite differences there check them independently; forward and
reverse mode agree. Bodies of tiny mass ``m`` (1e-10 kg) lost ``ε ‖M‖ / m`` of their rates' derivatives to the
heavy terms' rounding (2e-6 relative at 1e-8 kg); they are now as accurate."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import difimpact as di

# In CI's second stage (compiling its programs takes the README's command past its 7 minutes).
pytestmark = [pytest.mark.slow, pytest.mark.stage2]


def _outputs(angles, masses):
    """At ``(q3, q4) = angles`` of the biped with torso, legs of mass ``masses[0]`` each and a torso of
    ``masses[1]``: the heel strike's ``q̇⁺`` (``"limit"`` and ``"keep"``), impulses and ``ξ_I``, and a push-off's
    ``q̇`` and ``q̇⁺``."""
    model = di.BipedWithTorso(m=masses[0], m_H=10.0, m_T=masses[1])
    q, qd = model.pre_impact_state(angles[0], angles[1])
    s = di.impact(model, q, qd, stick=("P_L",), massless="limit")
    kept = di.impact(model, q, qd, stick=("P_L",), massless="keep")
    push = di.pushoff_impact(model, q, qd, jnp.asarray(2.0), stance="P_R", toward="H", stick=("P_L",),
                             massless="keep")
    return jnp.concatenate([s.qdot_plus, s.impulses.ravel(), jnp.atleast_1d(s.xi_I), kept.qdot_plus,
                            push.qdot_pushoff, push.qdot_plus])


@pytest.fixture(scope="module")
def programs():
    return (jax.jit(_outputs), jax.jit(jax.jacfwd(_outputs)), jax.jit(jax.jacrev(_outputs)))


@pytest.mark.parametrize("masses", [(5.0, 0.0), (0.0, 10.0), (0.0, 0.0), (5.0, 1e-10), (1e-10, 10.0)],
                         ids=["torso", "legs", "both", "tiny-torso", "tiny-legs"])
def test_posture_derivatives_at_massless_bodies(programs, masses):
    f, forward, reverse = programs
    angles, masses = jnp.deg2rad(jnp.array([25.0, -5.0])), jnp.array(masses)
    assert np.all(np.isfinite(f(angles, masses)))
    h = 1e-6
    fd = jnp.stack([(f(angles.at[i].add(h), masses) - f(angles.at[i].add(-h), masses)) / (2 * h) for i in range(2)],
                   axis=1)
    J = forward(angles, masses)
    np.testing.assert_allclose(J, fd, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(reverse(angles, masses), J, rtol=1e-12, atol=1e-12)
