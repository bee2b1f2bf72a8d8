"""The stance phase's forward derivative (`difimpact._gait.stance_phase.stance`): the event time differentiated by
the implicit-function theorem written out, against closed forms of a ballistic flight ended by landing, and a
non-finite derivative (not an error) where the event's slope vanishes. Its program holds no host callback."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from difimpact._gait.stance_phase import stance
from difimpact._hybrid import EVENT_SHIFT, AbstractHybridSystem

from ._programs import host_callbacks


class Flight(AbstractHybridSystem):
    """A ball thrown up, ``ẏ = (v, −g)``, until it lands. The engine shifts a component by ``EVENT_SHIFT``: the
    component ``y`` ends the phase at ``y = −EVENT_SHIFT``; with weight ``a`` the component
    ``a (y − ½) + (1 − a)(y − ½)³ − EVENT_SHIFT`` ends it at ``y = ½``, with zero slope where ``a = 0``; an
    `opaque` component (``y`` behind ``stop_gradient``) has no derivative at all."""

    g: jax.Array
    a: jax.Array | None = None
    opaque: bool = eqx.field(static=True, default=False)

    def vector_field(self, t, y, mode):
        return jnp.stack([y[1], -self.g])

    def event_components(self, t, y, mode):
        if self.a is None:
            return jax.lax.stop_gradient(y[:1]) if self.opaque else y[:1]
        z = y[0] - 0.5
        return jnp.stack([self.a * z + (1 - self.a) * z**3 - EVENT_SHIFT])

    def transition(self, t, y, mode, event):
        return y, mode, jnp.array(True)

    def initial_mode(self, y):
        return jnp.array(0, jnp.int32)


def _landing(g, h, v):
    """Closed form: the time and state at landing (``y = −EVENT_SHIFT``) from height `h` with upward speed `v`."""
    t = (v + jnp.sqrt(v**2 + 2 * g * (h + EVENT_SHIFT))) / g
    return t, jnp.stack([0.0 * t - EVENT_SHIFT, v - g * t])


def _run(g, y0, a=None):
    t, y, _, event, failed = stance(Flight(g, a), y0, 1e-12, 1e-12, 100.0, max_steps=4096)
    return t, y, event, failed


def test_landing_time_and_state_derivatives_equal_the_closed_form():
    """``∂(t*, y(t*))/∂(h, v, g)`` by `jax.jacfwd` through the phase equals the closed form's to 1e-9."""
    g, y0 = jnp.asarray(9.81), jnp.array([1.5, 2.0])
    t, y, event, failed = _run(g, y0)
    t_ref, y_ref = _landing(g, *y0)
    assert int(event) == 0 and not bool(failed)
    np.testing.assert_allclose(t, t_ref, rtol=1e-10)
    np.testing.assert_allclose(y, y_ref, atol=1e-9)
    jac = jax.jacfwd(lambda g, y0: _run(g, y0)[:2], argnums=(0, 1))(g, y0)
    ref = jax.jacfwd(lambda g, y0: _landing(g, *y0), argnums=(0, 1))(g, y0)
    for got, want in zip(jax.tree.leaves(jac), jax.tree.leaves(ref)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_flat_crossing_in_a_batch_and_an_event_without_a_derivative():
    """In a `vmap` batch, a landing detected by a component with a nonzero slope and one whose component crosses
    zero with zero slope (``(y − ½)³``: the ratio of the implicit-function theorem still gives the crossing time's
    derivative) both equal the closed form. An event component whose derivative is zero (hidden from JAX) gives a
    non-finite tangent, and nothing raises."""
    g, y0 = jnp.asarray(9.81), jnp.array([1.5, 2.0])
    a = jnp.array([1.0, 0.0])
    t = jax.vmap(lambda a: _run(g, y0, a)[0])(a)
    np.testing.assert_allclose(t, _landing(g, y0[0] - 0.5 - EVENT_SHIFT, y0[1])[0], rtol=1e-4)
    jac = jax.vmap(lambda a: jax.jacfwd(lambda y0: _run(g, y0, a)[:2])(y0))(a)
    ref = jax.jacfwd(lambda y0: _landing(g, y0[0] - 0.5 - EVENT_SHIFT, y0[1]))(y0)
    for got, want in zip(jax.tree.leaves(jac), jax.tree.leaves(ref)):
        np.testing.assert_allclose(got, jnp.stack([want, want]), rtol=1e-6, atol=1e-6)
    opaque = jax.jacfwd(lambda y0: stance(Flight(g, opaque=True), y0, 1e-12, 1e-12, 100.0, max_steps=4096)[0])(y0)
    assert not np.any(np.isfinite(opaque))


def test_forward_derivative_program_holds_no_host_callback():
    """diffrax's differentiated event search calls lineax with ``throw=True`` (a host callback); this one none."""
    fn = jax.jit(jax.jacfwd(lambda y0: _run(jnp.asarray(9.81), y0)[:2]))
    assert host_callbacks(fn.lower(jnp.array([1.5, 2.0])).as_text()) == 0
