"""Paper cases evaluated in the default precision of the running process, printed as JSON.

Run as a script by ``tests/test_precision.py`` in a subprocess that does **not** enable x64 (float32), and
imported by the test itself (float64), so both precisions run the very same code.
"""

import json
import math
import sys

import jax
import jax.numpy as jnp
import numpy as np

import difimpact as di
from difimpact.papers.font_llagunes_2012.crutch_tip import tip_contact


def cases(compliant: bool, rtol: float) -> dict:
    """seed 000 impulsive check values, seed 003 ξ_I, and (optionally) seed 000 Table 3's nominal row."""
    walker = di.CrutchWalker()
    # The state also solved in float64 first, as the benchmarks draw theirs (benchmarks/_common.py,
    # seed000_states). Tracing the model with and without x64 in one process once mixed int64 and int32 in the
    # gathers of the tree's topology indices (NumPy, cached per topology): "lax.add requires arguments to have
    # the same dtypes, got int64, int32"; they are int32 since 25132de.
    with jax.enable_x64(True):
        q64, qdot64 = walker.pre_impact_state(math.radians(12.0), -0.2)
    q, qdot = walker.pre_impact_state(math.radians(12.0), -0.2)
    fric = di.frictional_impact(walker, q, qdot, "Q", friction=di.Coulomb(0.75))
    biped = di.BipedWithTorso()
    qb, qdotb = biped.pre_impact_state(math.radians(30.0))
    stick = di.impact(biped, qb, qdotb, stick=("P_L",))
    # The same impact under jit + vmap (batched gathers and products), two members, one from the state solved
    # in float64 (above) and cast.
    q64, qdot64 = (jnp.asarray(np.asarray(x), q.dtype) for x in (q64, qdot64))
    batched = jax.jit(jax.vmap(lambda a, b, mu: di.frictional_impact(walker, a, b, "Q", friction=di.Coulomb(mu))))(
        jnp.stack([q64, q]), jnp.stack([qdot64, qdot]), jnp.array([0.5, 0.75]))
    out = {"dtype": str(q.dtype), "P_n": fric.normal_impulse, "P_t": fric.tangential_impulse,
           "mu_c": fric.mu_c, "xi_I": stick.xi_I, "batched_P_n": batched.normal_impulse[1]}
    if compliant:
        tip = tip_contact()
        sol = di.compliant_impact(walker, q, qdot, "Q", normal=tip.normal_law, friction=tip.friction_law, rtol=rtol,
                                  atol=rtol * 1e-2, throw=False)
        out |= {"compliant_P_n": sol.normal_impulse[0], "compliant_P_t": sol.tangential_impulse[0], "compliant_ok":
                bool(sol.result == di.CompliantResults.successful), "compliant_steps": sol.n_steps}
    return {k: (float(v) if not isinstance(v, (str, bool)) else v) for k, v in out.items()}


if __name__ == "__main__":
    print(json.dumps(cases(sys.argv[1] == "compliant", float(sys.argv[2]))))
