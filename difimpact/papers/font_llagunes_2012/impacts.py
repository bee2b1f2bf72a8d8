"""Font-Llagunes, Barjau, Pàmies-Vilà & Kövecses (2012): the crutch tip's impact at the pre-impact states of §5,
by the impulsive map with Coulomb friction (eqs. 8–34) and by the compliant Hunt–Crossley contact (eqs. 35–38),
shared by the figures (:mod:`.fig3`, :mod:`.figs4_12`, :mod:`.figs13_17`, :mod:`.table3`).

Compile time is the cost here: the impulsive map is one ``jit(vmap)`` per grid; every compliant solve goes
through one jitted single-case function (:func:`_compliant`) shared by the three compliant experiments and
called in a loop (a second, vmapped compilation of the compliant solver costs more than the loop saves).
Time samples of a compliant solve (``q̇(t)``, ``P_n(t)`` …) are exact: the same solve stopped at ``t_max``.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np

from difimpact import CompliantResults, Coulomb, CrutchWalker, checks_as_nan, compliant_impact, frictional_impact

from ..curves import require_finite
from .crutch_tip import tip_contact

MUS = (0.5, 0.75, 1.0)  # §5
Q3_DEG = tuple(range(3, 22, 3))  # §5: 3°…21° step 3°
Q5DOTS = (-0.2, 0.0, 0.2, 0.4)  # §5: q̇5⁻ from −0.2 to 0.4 rad/s
REST_TOL = 1e-9  # |v_t⁻| ≤ REST_TOL |v_n⁻| counts as rest, as in `frictional_impact_map`
T_END = 0.5  # [s] generous bound on the contact duration (≈ 4 ms at the nominal parameters)
WALKER = CrutchWalker()
"""The crutch walker of Font-Llagunes et al. 2012, Table 1 (:class:`~difimpact.CrutchWalker` at its defaults); its
pre-impact postures are :meth:`~difimpact.CrutchWalker.pre_impact_state` at the leg angles :data:`Q3_DEG`."""


def _impulsive(mu, q3_deg, q5dot):
    """Impulsive frictional map (Font-Llagunes et al. 2012, eqs. 8–34) at the pre-impact states of §5, one per entry of
    the equal-length sequences ``mu, q3_deg, q5dot``. Batches are padded to the full grid's size so that every
    experiment reuses one compilation."""
    size = len(MUS) * len(Q3_DEG) * len(Q5DOTS)
    args = [np.resize(np.asarray(a, float), size) for a in (mu, np.radians(q3_deg), q5dot)]
    out = _impulsive_batch(*map(jnp.asarray, args))
    out = jax.tree.map(lambda x: x[:len(mu)], out)
    if not np.all(out.pop("ok")):
        raise RuntimeError("impulsive map: friction could not stop the approach (FrictionalImpactResults)")
    require_finite("impulsive map", {k: v for k, v in out.items() if k in ("Pn", "Pt", "Wn", "Wt", "vnP", "vtQ")})
    return out


@jax.jit
@checks_as_nan()  # no host callback in the program: JAX's compilation cache keeps it (a failure is NaN, then raised)
def _impulsive_batch(mu, q3, q5dot):
    def one(mu, q3, q5dot):
        q, qdot = WALKER.pre_impact_state(q3, q5dot)
        r = frictional_impact(WALKER, q, qdot, "Q", friction=Coulomb(mu))
        v_minus = r.jacobian @ qdot
        return dict(Pn=r.normal_impulse, Pt=r.tangential_impulse, Wn=r.normal_work, Wt=r.tangential_work,
                    vnP=r.qdot_plus[1], vtQ=(r.jacobian @ r.qdot_plus)[1], vtQ_minus=v_minus[1],
                    vnQ_minus=v_minus[0], regime=r.regime, mu_c=r.mu_c, ok=r.result._value == 0,
                    impact=r)
    return jax.vmap(one)(mu, q3, q5dot)


@jax.jit
@checks_as_nan()
def _compliant(kn_factor, chi_factor, mu, q3, q5dot, t_max):
    """Compliant contact phase of Font-Llagunes et al. 2012 (eqs. 35–38) from the pre-impact state of §5, stopped at its
    end of compression or at ``t_max`` [s] (whichever comes first); ``v_n(P) = q̇2``, ``v_t(Q) = A_t q̇``."""
    q, qdot = WALKER.pre_impact_state(q3, q5dot)
    tip = tip_contact(kn_factor, chi_factor, mu)
    r = compliant_impact(WALKER, q, qdot, tip.point, normal=tip.normal_law, friction=tip.friction_law, t_max=t_max,
                         max_steps=1024, max_phases=8, history=True, throw=False)
    v_minus = WALKER.contact_jacobian(q, "Q") @ qdot
    return dict(Pn=r.normal_impulse[0], Pt=r.tangential_impulse[0], Wn=r.normal_work[0], Wt=r.tangential_work[0],
                vnP=r.qdot_plus[1], vtQ=WALKER.contact_jacobian(r.q_plus, "Q")[1] @ r.qdot_plus,
                vtQ_minus=v_minus[1], vnQ_minus=v_minus[0], qdot=r.qdot_plus, qdot_minus=qdot,
                duration=r.duration, peak_Fn=r.peak_normal_force[0], stick_time=r.stick_time[0],
                final_stick=r.final_stick[0], result=r.result._value, t=r.history.t,
                Fn=r.history.normal_force[:, 0], Ft=r.history.tangential_force[:, 0])


def _run_compliant(kn_factor=1.0, chi_factor=1.0, mu=0.75, q3_deg=12.0, q5dot=-0.2, t_max=T_END):
    """One compliant solve (numpy outputs); a solve that does not reach its end event before ``T_END`` is
    an error, a shorter ``t_max`` is a time sample."""
    out = _compliant(*(jnp.asarray(float(v)) for v in (kn_factor, chi_factor, mu, math.radians(q3_deg), q5dot,
                                                         t_max)))
    out = {k: np.asarray(v) for k, v in out.items()}
    require_finite(f"compliant solve (μ = {mu}, q3 = {q3_deg}°, q̇5 = {q5dot})",
                   {k: out[k] for k in ("Pn", "Pt", "Wn", "Wt", "qdot", "qdot_minus")})
    if t_max == T_END and int(out["result"]) != 0:
        raise RuntimeError(f"compliant solve failed (μ = {mu}, q3 = {q3_deg}°, q̇5 = {q5dot}, k_n × {kn_factor}, "
                           f"χ × {chi_factor}): {CompliantResults[int(out['result'])]}")
    return out


def _compliant_regime(out) -> str:
    """Regime name of a compliant solve (names of Font-Llagunes et al. 2012, Table 2), from its start and end."""
    rest = abs(out["vtQ_minus"]) <= REST_TOL * abs(out["vnQ_minus"])
    if out["final_stick"]:
        return "stick" if rest else "slide-stick"
    if rest:
        return "slide-from-rest"
    return "slide-reversal" if np.sign(out["vtQ"]) != np.sign(out["vtQ_minus"]) else "slide"


_METHOD_STYLE = {"impulsive": dict(ls="-", marker="o", ms=3), "compliant": dict(ls="--", marker="x", ms=4)}

_END_NOTE = "the compliant model ends at the tip's end of compression (v_n(Q) = 0), as the paper's does"
_FIGURE_RESOLUTION = 0.02  # two line widths on a paper panel, as a fraction of its plotted range
