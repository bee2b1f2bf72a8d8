"""Font & Kövecses, IMECE (2008): the heel strike of the biped with torso at the pre-impact states of §4, its
energy decomposition into constrained and admissible spaces, and the grids and checks shared by the figures
(:mod:`.figs2_4`: step length and lower-body mass distribution; :mod:`.figs5_7`: torso angle and upper-body mass
distribution)."""

import jax
import jax.numpy as jnp
import numpy as np

from difimpact import BipedWithTorso, checks_as_nan, impact

from ..curves import plotted_range, require_finite, table_rows

M_B = 30.0  # Font & Kövecses 2008, Table 1
# μ = 0 (massless legs) and μ_T = 0 (massless torso) are the limit μ → 0⁺ (massless="limit"): at exactly zero
# mass the massless segment's post-impact rate is otherwise undetermined, and with it v_Sn⁺.


def _heel_strike(model: BipedWithTorso, q4, q5):
    """One heel strike, Font & Kövecses 2008, §4: left foot P_L sticks (A_I, eq. 25), the stance foot is released and
    its post-impact normal velocity ``v_Sn⁺ = B_S q̇⁺`` is reported (eq. 4)."""
    q, qdot = model.pre_impact_state(q4, q5)
    sol = impact(model, q, qdot, stick=("P_L",), massless="limit")
    vsn = model.contact_jacobian(q, "P_R")[0] @ sol.qdot_plus
    return dict(xi_I=sol.xi_I, xi_L=sol.Tc_minus / model.step_length(q), vSn=vsn, Tc=sol.Tc_minus,
                Ta=sol.Ta_minus, T=sol.T_minus)


@jax.jit
@checks_as_nan()  # the program holds no host callback: JAX's compilation cache keeps it
def _lower_body(mu, q4):
    """μ = 2m/m_H with m_T = 10 kg and m_B = 30 kg (§4.1); upright torso q5 = q3."""
    m_H = (M_B - 10.0) / (1.0 + mu)
    return _heel_strike(BipedWithTorso(m=0.5 * mu * m_H, m_H=m_H, m_T=10.0), q4, None)


@jax.jit
@checks_as_nan()
def _upper_body(mu_T, q5):
    """μ_T = m_T/m_H with m = 5 kg and m_B = 30 kg (§4.2), q4 = 30°."""
    m_H = (M_B - 10.0) / (1.0 + mu_T)
    return _heel_strike(BipedWithTorso(m=5.0, m_H=m_H, m_T=mu_T * m_H), jnp.radians(30.0), q5)


def _grid(fn, outer, inner_deg):
    a, b = np.meshgrid(np.asarray(outer, float), np.radians(inner_deg), indexing="ij")
    out = jax.vmap(fn)(jnp.asarray(a.ravel()), jnp.asarray(b.ravel()))
    out = {k: np.asarray(v).reshape(a.shape) for k, v in out.items()}
    require_finite(fn.__name__, out)
    return out


def _rows(key, outer, inner_key, inner_deg, res):
    a, b = np.meshgrid(np.asarray(outer, float), np.asarray(inner_deg, float), indexing="ij")
    return table_rows({key: a.ravel(), inner_key: b.ravel(),
                       **{k: res[k].ravel() for k in ("xi_I", "xi_L", "vSn", "Tc", "Ta")}})


_TOL = 1e-12  # monotone up to rounding


def _visual(a):
    """Figure resolution: 1 % of the plotted range (statements read from curves cannot be finer)."""
    return 0.01 * plotted_range(a)


def _reversal(a, axis, increasing):
    """Largest step against the stated direction (0 when monotone)."""
    d = np.diff(a, axis=axis) * (1 if increasing else -1)
    return float(max(0.0, -np.nanmin(d)))
