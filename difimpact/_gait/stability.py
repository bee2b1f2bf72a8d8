"""Orbital stability of a periodic gait: the Floquet multipliers, eigenvalues of $\\partial P^p/\\partial x$ at the
fixed point."""

import jax
import jax.numpy as jnp

from .._custom_types import Array, Complex, Float, Scalar
from .._linalg import eigvals
from .._models.walker import AbstractWalker
from .fixed_point import PeriodicGait, stride_power
from .stride import StanceTolerances


def stride_jacobian(walker: AbstractWalker, gait: PeriodicGait, *,
                    options: StanceTolerances | None = None) -> Float[Array, "k k"]:
    """$\\partial P^p/\\partial x$ at the gait's fixed point, by forward-mode differentiation through the steps: the
    event time enters through the implicit-function theorem, so this is the saltation-corrected linearisation (monodromy
    of each stance phase, event-time correction, impact Jacobian, leg swap).

    The gait carries this matrix at the tolerances it was solved with (its `jacobian`); this function
    integrates the steps again, with `options` (default: the gait's `options`). The tangents of an adaptive
    solve are not error-controlled, so tighter tolerances than the gait's give more accurate multipliers."""
    options = gait.options if options is None else options
    return jax.jacfwd(lambda x: stride_power(walker, x, gait.period, options=options))(gait.x)


def _polish(coeffs, roots, iterations=3):
    """Newton steps on the monic polynomial with `coeffs` (highest first, leading 1 omitted) at each root."""
    for _ in range(iterations):
        p = jnp.ones_like(roots)
        dp = jnp.zeros_like(roots)
        for c in coeffs:
            dp = dp * roots + p
            p = p * roots + c
        roots = roots - jnp.where(dp != 0, p / jnp.where(dp != 0, dp, 1.0), 0.0)
    return roots


def eigenvalues(a: Float[Array, "k k"]) -> Complex[Array, " k"]:
    r"""Eigenvalues of a real ``1×1``, ``2×2`` or ``3×3`` matrix in closed form — the roots of its
    characteristic polynomial ``λ³ − tr(a) λ² + m₂ λ − det(a)`` by Cardano's formula (``m₂`` the sum of the
    principal ``2×2`` minors), polished by three Newton steps — differentiable and free of LAPACK under
    ``vmap``. Simple eigenvalues have the derivative of the polynomial roots; repeated ones do not.

    The matrix is first divided by the power of two nearest its largest entry (exact; ``λ(a) = s λ(a/s)``), so
    that the cubic's coefficients (up to ``det a``, of degree 3) neither overflow nor underflow."""
    a = jnp.asarray(a)
    k = a.shape[0] if a.ndim else 0
    if a.shape != (k, k) or not 1 <= k <= 3:
        raise ValueError(f"`eigenvalues` takes a 1×1, 2×2 or 3×3 matrix, got shape {a.shape}.")
    big = jax.lax.stop_gradient(jnp.max(jnp.abs(a)))
    scale = jnp.where(jnp.isfinite(big) & (big > 0), jnp.exp2(jnp.round(jnp.log2(jnp.where(big > 0, big, 1.0)))), 1.0)
    return scale * _eigenvalues(a / scale)


def _eigenvalues(a):
    """:func:`eigenvalues` of a matrix with entries of order one."""
    k = a.shape[0]
    a = a.astype(jnp.result_type(a.dtype, jnp.complex64))
    if k == 1:
        return a[0]
    tr = jnp.trace(a)
    if k == 2:
        det = a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]
        s = jnp.sqrt(tr**2 / 4 - det)
        return jnp.stack([tr / 2 + s, tr / 2 - s])
    m2 = (a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0] + a[0, 0] * a[2, 2] - a[0, 2] * a[2, 0]
          + a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1])
    det = (a[0, 0] * (a[1, 1] * a[2, 2] - a[1, 2] * a[2, 1]) - a[0, 1] * (a[1, 0] * a[2, 2] - a[1, 2] * a[2, 0])
           + a[0, 2] * (a[1, 0] * a[2, 1] - a[1, 1] * a[2, 0]))
    b, c, d = -tr, m2, -det  # λ³ + b λ² + c λ + d
    p = c - b**2 / 3
    q = 2 * b**3 / 27 - b * c / 3 + d
    root = jnp.sqrt(q**2 / 4 + p**3 / 27)
    big = jnp.where(jnp.abs(-q / 2 + root) >= jnp.abs(-q / 2 - root), -q / 2 + root, -q / 2 - root)
    u = jnp.where(big == 0, 0.0, jnp.exp(jnp.log(jnp.where(big == 0, 1.0, big)) / 3))
    w = jnp.exp(2j * jnp.pi / 3 * jnp.arange(3))
    uk = u * w
    t = uk - jnp.where(uk == 0, 0.0, p / (3 * jnp.where(uk == 0, 1.0, uk)))
    return _polish((b, c, d), t - b / 3)


def spectral_radius(a: Float[Array, "k k"]) -> Scalar:
    """Largest eigenvalue modulus of a ``k ≤ 3`` square matrix (:func:`eigenvalues`): the gait is locally
    stable when it is below 1."""
    moduli = jnp.abs(eigenvalues(a))
    # The largest modulus as the entry it selects (a conjugate pair's moduli are equal, and so are their
    # derivatives): the derivative rule of `jnp.max` matches by equality, which fails where XLA computes the
    # moduli twice with different rounding.
    return moduli[jnp.argmax(moduli)]


def multipliers(jacobian: Float[Array, "k k"]) -> Complex[Array, " k"]:
    """The Floquet multipliers of a stride map's Jacobian $\\partial P^p/\\partial x$: :func:`eigenvalues` in
    closed form for ``k ≤ 3`` (differentiable, no LAPACK under ``vmap``), LAPACK's ``geev`` beyond. The one
    function of :func:`floquet_multipliers` and of :func:`~difimpact.continue_gait`'s branch points."""
    return eigenvalues(jacobian) if jacobian.shape[0] <= 3 else eigvals(jacobian)


def _jacobian(gait) -> Float[Array, "k k"]:
    """The stride map's Jacobian that `gait` carries (a :class:`PeriodicGait`'s `jacobian`)."""
    if not hasattr(gait, "jacobian"):
        raise TypeError(f"`gait` must be a PeriodicGait (from `periodic_gait`), which carries its stride map's "
                        f"Jacobian; got {type(gait).__name__}. A powered gait (an OptimalGait of `optimal_gait` or "
                        "`kelly_gait`) has no passive stride map: its stability is that of the closed loop that "
                        "tracks it, `tracking_floquet(gait, kp=..., kd=...)`.")
    return gait.jacobian


def floquet_multipliers(gait: PeriodicGait) -> Complex[Array, " k"]:
    """Floquet multipliers of a periodic gait: the :func:`multipliers` of the Jacobian
    $\\partial P^p/\\partial x$ that :func:`~difimpact.periodic_gait` leaves in the gait (``gait.jacobian``),
    without differentiating the stride map again; :func:`stride_jacobian` gives the Jacobian at other
    tolerances."""
    return multipliers(_jacobian(gait))
