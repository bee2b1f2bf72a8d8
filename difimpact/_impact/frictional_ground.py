"""The frictional impact of a model point on flat ground: :func:`~difimpact.frictional_impact_map` of the
model's mass matrix and the point's contact rows."""

from collections.abc import Mapping

import jax.numpy as jnp

from .._contact import Coulomb
from .._check import program
from .._contact.naming import laws_by_point
from .._custom_types import Config, Velocity
from .._models.base import AbstractPlanarModel
from .._validation import as_float, check, instance, tolerance
from .frictional import FrictionalImpactSolution, _map


@program
def frictional_impact(
    model: AbstractPlanarModel,
    q: Config,
    qdot_minus: Velocity,
    point: str,
    *,
    friction: Coulomb | Mapping[str, Coulomb],
    ground_tol: float | None = None,
    rest_tol: float = 1e-9,
    throw: bool = True,
) -> FrictionalImpactSolution:
    """Frictional impact of a model point with the ground ``y = 0`` (Font-Llagunes et al. 2012, §3).

    Builds ``M(q)`` and ``[A_n; A_t]`` of the point and calls :func:`~difimpact.frictional_impact_map`.
    Checks that the point is on the ground (``|y| ≤ ground_tol``, metres, ``0 ≤ ground_tol < 1``; by default
    ``max(1e-8, 256 ε)`` of ``q``'s dtype: ``1e-8`` in float64, ``3e-5`` in float32, whose placement residual exceeds
    ``1e-8``) and approaching it, and that the inputs are finite. The law's ``μ`` is traced: build it inside the
    function you ``vmap`` or differentiate (``lambda mu: frictional_impact(…, friction=Coulomb(mu))``).

    **Arguments:**

    - `model`, `q`, `qdot_minus`: the model and its pre-impact state.
    - `point`: the name of the model point that strikes the ground (a contact is named by its point, as in
      :func:`~difimpact.impact`).
    - `friction`: the point's :class:`~difimpact.Coulomb` law, or ``{point: law}``. The impact is rigid: no
      normal law.
    - `ground_tol`, `rest_tol`, `throw`: as in :func:`~difimpact.frictional_impact_map`.

    **Returns:** a :class:`~difimpact.FrictionalImpactSolution`.

    **Example:**

    ```python
    import math
    import difimpact as di

    walker = di.CrutchWalker()
    q, qdot = walker.pre_impact_state(q3=math.radians(12), q5dot=-0.2)
    hit = di.frictional_impact(walker, q, qdot, "Q", friction=di.Coulomb(0.75))
    print(hit.regime_name, hit.normal_impulse, hit.tangential_impulse, hit.mu_c)
    # slide-stick 14.155 -9.769 0.675: impulses in N s, and the critical friction coefficient
    ```
    """
    instance("model", model, AbstractPlanarModel)
    if not isinstance(point, str):
        raise TypeError(f"`point` must be a point name (a string), got {point!r}.")
    law = laws_by_point("friction", friction, (point,), required=False)[point]
    if not isinstance(law, Coulomb):
        raise TypeError(f"`friction` must be a `Coulomb` law for {point!r} (the rigid impact's friction), got {law!r}.")
    q = as_float("q", q, shape=(model.n,))
    qdot_minus = as_float("qdot_minus", qdot_minus, shape=(model.n,))
    height = model.point(q, point)[1]
    if ground_tol is None:
        ground_tol = max(1e-8, 256 * float(jnp.finfo(q.dtype).eps))
    ground_tol = tolerance("ground_tol", ground_tol, below=1.0, allow_zero=True)
    qdot_minus = check(qdot_minus, jnp.abs(height) > ground_tol,
                       f"point {point!r} is not on the ground: |y| > {ground_tol} m for this `q`.")
    A = model.contact_jacobian(q, point)
    # M of a model is symmetric positive semi-definite by construction: no check (the solve flags a singular one).
    return _map(model.mass_matrix(q), A[0], A[1], qdot_minus, law.mu, rest_tol, throw)
