"""The worked optimisation problem of Ros et al. 2015: the partial blocking of the leading ankle that dissipates a
given fraction of the kinetic energy (:func:`ankle_blocking`)."""

import jax
import jax.numpy as jnp
from jax.tree_util import Partial

from difimpact import Problem, SevenLinkHuman, energy_index, impact
from difimpact._validation import instance, tolerance

_ANKLE_CONTACT = dict(stick=("CAL_R",), unilateral=("MH_L",))  # eqs. 6–9


def ankle_blocking(target: float = 0.05, model: SevenLinkHuman | None = None, omega0: float = -1.0
                   ) -> tuple[Problem, jax.Array]:
    r"""Seven-link human (Ros et al. 2015, §4.3): the degree of partial blocking of the leading ankle that dissipates
    the fraction `target` of the kinetic energy, by least squares ``(ξ/ξ* − 1)²`` (Ros et al. 2015, eq. 23).

    Impact: the leading heel ``CAL_R`` sticks, the trailing ``MH_L`` is unilateral (Ros et al. 2015, eqs. 6–9) and the
    post-impact ankle rate is prescribed, $\dot\theta_A^R^+ = (1 - \beta) r_{free}$ (rheonomic constraint, eq. 10), with
    ``r_free`` the rate the unblocked ankle takes (coordinate rates, clockwise: :class:`SevenLinkHuman`; the
    constraint then carries no impulse: ``β = 0`` is the free ankle, ``β = 1`` full blocking). ``ξ`` is a
    parabola in the rate with its maximum at full blocking (Ros et al. 2015, eq. 24), so ``ξ(β)`` increases on
    ``[0, 1]`` and the root is unique when ``ξ(0) ≤ ξ* ≤ ξ(1)``. ``x = [β]`` within ``[0, 1]``; do not start
    at ``β = 1`` exactly, where the gradient vanishes (the parabola's vertex). Returns ``(problem, r_free)``.
    """
    model = SevenLinkHuman() if model is None else instance("model", model, SevenLinkHuman)
    target = tolerance("target", target, below=1.0)
    q, qdot = model.heel_strike_state(omega0)
    r_free = impact(model, q, qdot, **_ANKLE_CONTACT).qdot_plus[5]
    objective = Partial(_ankle_objective, model, q, qdot, r_free, jnp.asarray(target, float))
    return Problem(objective, None, jnp.zeros(1), jnp.ones(1), ("beta",)), r_free


def _ankle_objective(model, q, qdot, r_free, target, x):
    xi = energy_index(model, q, qdot, blocked={"theta_A_R": (1.0 - x[0]) * r_free}, **_ANKLE_CONTACT)
    return (xi / target - 1.0) ** 2
