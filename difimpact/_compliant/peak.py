"""The peak normal force of a contact from its per-step samples."""

import jax
import jax.numpy as jnp

from .._custom_types import Array, Float, Scalar
from .state import MS


def peak_force(t: Float[Array, " s"], F: Float[Array, " s"], rate: Float[Array, " s"]) -> Scalar:
    r"""Maximum of one contact's normal force from its per-step samples ``t`` [ms] (``inf`` = padding), ``F``
    [N] and ``rate = dF/dt`` [N/s]: the maximum of the cubic Hermite interpolant on the step that brackets
    the largest sample (the rate changes sign from + to − across it),

    $$
    p(s) = F_a + c_1 s + c_2 s^2 + c_3 s^3,\quad s ∈ [0, 1],\quad p'(s^*) = 0,
    $$

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
    d_a, d_b = rate[a] * MS, rate[b] * MS  # per ms
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
