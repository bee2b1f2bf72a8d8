"""The hybrid-phase engine on a bouncing ball, against its closed form: event times, the state after the
chain, the implicit-function gradient of the event times, and vmap over members that finish after different
numbers of phases (the finished ones idle while the others go on)."""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import difimpact as di

G = 9.81


class Ball(di.AbstractHybridSystem):
    """A ball dropped from rest at height ``h0`` bounces with restitution ``e``; the chain ends at the
    ``bounces``-th impact. Mode: the number of impacts so far."""

    e: jax.Array
    bounces: jax.Array

    def vector_field(self, t, y, mode):
        return jnp.stack([y[1], -G * jnp.ones_like(y[1])])

    def event_components(self, t, y, mode):
        return jnp.stack([y[0], 1e3 * jnp.ones_like(y[0])])  # the second is never active

    def transition(self, t, y, mode, event):
        return y.at[1].multiply(-self.e), mode + 1, mode + 1 >= self.bounces

    def record(self, t, y, mode):
        return y[0]


def closed_form(h0, e, bounces):
    """Time of the last impact and the velocity after it."""
    t1 = np.sqrt(2 * h0 / G)
    t = t1 * (1 + 2 * sum(e**j for j in range(1, bounces)))
    return t, e**bounces * G * t1


@eqx.filter_jit
def drop(h0, e, bounces):
    return di.solve_hybrid(Ball(e, bounces), jnp.zeros(()), jnp.stack([h0, jnp.zeros(())]), jnp.array(0),
                           t_max=10.0, solver=diffrax.Tsit5(),
                           stepsize_controller=diffrax.PIDController(rtol=1e-10, atol=1e-12), max_steps=64,
                           max_phases=4, record=True)


def test_bouncing_ball_against_closed_form_under_vmap():
    # The last member asks for more impacts than max_phases allows: a result, not an error.
    h0, e, bounces = jnp.array([1.0, 0.5, 2.0, 1.0]), jnp.array([0.8, 0.5, 0.9, 0.8]), jnp.array([3, 1, 2, 9])
    sol = jax.vmap(drop)(h0, e, bounces)
    np.testing.assert_array_equal(sol.result._value[:3], di.HybridResults.successful._value)
    assert sol.result._value[3] == di.HybridResults.max_phases_reached._value
    np.testing.assert_array_equal(sol.n_phases, [3, 1, 2, 4])  # the batch mixes chains of different lengths
    for j in range(3):
        t, v = closed_form(float(h0[j]), float(e[j]), int(bounces[j]))
        # Each phase starts armed at +1e-9 m, so an impact is found ~1e-9 m below the ground.
        np.testing.assert_allclose(sol.t[j], t, rtol=1e-8)
        np.testing.assert_allclose(sol.y[j, 1], v, rtol=1e-7)
        assert int(sol.event[j]) == 0 and int(sol.mode[j]) == int(bounces[j])
        saved = np.isfinite(sol.ts[j])
        assert np.all(np.asarray(sol.records[j])[saved] > -1e-8)  # never through the ground
    # The last impact time's gradient: t ∝ √h0 and ∂t/∂e = 2 t1 Σ j e^(j-1).
    grad = jax.vmap(jax.grad(lambda h, r, b: drop(h, r, b).t, argnums=(0, 1)))(h0, e, bounces)
    assert np.all(np.isfinite(np.asarray(grad)))
    for j in range(3):
        t, _ = closed_form(float(h0[j]), float(e[j]), int(bounces[j]))
        t1 = np.sqrt(2 * float(h0[j]) / G)
        dt_de = 2 * t1 * sum(k * float(e[j]) ** (k - 1) for k in range(1, int(bounces[j])))
        np.testing.assert_allclose(grad[0][j], t / (2 * float(h0[j])), rtol=1e-7)
        np.testing.assert_allclose(grad[1][j], dt_de, rtol=1e-7, atol=1e-12)
