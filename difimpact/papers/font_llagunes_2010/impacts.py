"""Font-Llagunes, Kövecses, Pàmies-Vilà & Barjau (2010): impulsive and compliant impact models
compared on the compass-gait biped with circular feet (Figs. 2–3, :mod:`.fig2`, :mod:`.fig3`) and on the
crutch walker (Figs. 4–5, :mod:`.fig4`, :mod:`.fig5`): the models, solves and comparison helpers of both.

**Impulsive** (Font-Llagunes et al. 2010, eqs. 6–9): the colliding point Q sticks after the impact (``v⁺(Q) = 0``),
every other contact is released: the swing foot of the compass walker (the stance foot may lift off; its
``q̇2⁺`` is the trailing foot's separation velocity), the crutch tip (the feet are free). The energy loss is
``T⁻ − T⁺``.

**Compliant** (Font-Llagunes et al. 2010, §4): Hunt–Crossley normal force (eq. 13) with Hertz stiffness (eqs. 14–15) and
damping from restitution (Lankarani–Nikravesh, eq. 16), integrated with gravity to the end of compression
of Q (``v_n(Q) = 0``, Font-Llagunes et al. 2012's end); the energy loss is minus the work of the contact forces (§5.1).

Parameters Font-Llagunes et al. 2010 does not give, chosen here and used throughout: the materials of Font-Llagunes et
al. 2012 (§5, same authors: elastomer ``E = 0.1 GPa, ν = 0.5`` on concrete ``E = 30 GPa, ν = 0.2``), the sphere radius
the foot radius ``R`` (compass walker) or Font-Llagunes et al. 2012's ``0.05 m`` (crutch tip); restitution ``e = 0.8``
in eq. 16 (at the crutch walker's impact speeds ``χ ≈ 10⁷ N s/m^2.5``, Font-Llagunes et al. 2012's value); exact Coulomb
stick/slip (:class:`~difimpact.Coulomb`, ``μ = 1``) for the paper's non-sliding contacts (§1), leaving out the solves
where the impacting contact does not stick at the end. The compass walker's trailing foot keeps a compliant
contact (same law, §5.1); the crutch walker's feet are free (Font-Llagunes et al. 2012's model). Gravity acts during the
contact, and its impulse (``m g Δt``, a few percent of the contact impulse) is the main difference between
the methods: each experiment reruns its compliant sweep with ``g = 0`` during the contact and reports the gaps
(the documentation's design notes give the measurements, and why the paper's Mindlin tangential spring,
:class:`~difimpact.TangentialSpring`, is not used).
"""

import math

import jax
import jax.numpy as jnp
import numpy as np

from difimpact import (
    CompassGait,
    CompliantResults,
    Coulomb,
    CrutchWalker,
    HuntCrossley,
    checks_as_nan,
    compliant_impact,
    constrained_impact,
    damping_from_restitution,
    hertz_stiffness,
)

from ..curves import plotted_max, require_finite, table_rows
from ..experiment import check_that
from ..font_llagunes_2012.crutch_tip import ELASTOMER_ON_CONCRETE, TIP_RADIUS
from ..plotting import method_panels

_RESTITUTION = 0.8
_MU = 1.0
_METHODS = ("impulsive", "compliant")
# "Almost overlap" read off a figure: a difference below 2 % of the plotted quantity is within about two
# line widths on the paper's plots (a ~6 cm axis).
_OVERLAP = 0.02


def _hunt_crossley(radius, impact_speed):
    """Font-Llagunes et al. 2010 eqs. 13–16 with Font-Llagunes et al. 2012's materials (§5; Font-Llagunes et al. 2010
    gives none) and the restitution above."""
    k_n = hertz_stiffness(radius, *ELASTOMER_ON_CONCRETE)
    return HuntCrossley(k_n, damping_from_restitution(k_n, _RESTITUTION, impact_speed))


def _compliant_summary(model, q, qdot, points, **options):
    """Solve to the impacting contact's end of compression; ``ok``: solved, and that contact sticks at the
    end (the paper's non-sliding assumption)."""
    sol = compliant_impact(model, q, qdot, points, throw=False, **options)
    ok = (sol.result == CompliantResults.successful) & jnp.all(jnp.isfinite(sol.qdot_plus)) & sol.final_stick[0]
    loss = -(jnp.sum(sol.normal_work) + jnp.sum(sol.tangential_work))
    return sol, ok, loss


# --------------------------------------------------------------------------------------------------------
# Compass-gait biped, §5.1


def _compass_state(R, q3, g=9.81):
    model = CompassGait(R=R, g=g)
    q, qdot = model.pre_impact_state(q3)
    return model, q, qdot


@jax.jit
@checks_as_nan()  # the program holds no host callback: JAX's compilation cache keeps it
def _compass_impulsive(R, q3):
    """Swing foot sticks, stance foot released (Font-Llagunes et al. 2010, eq. 8). The swing foot's pre-impact normal
    velocity vanishes at ``R = l`` (no collision), so the map is called through :func:`constrained_impact` with the
    sticking rows ``A = [A_n; A_t]`` of the swing foot (what ``impact(stick=("swing_foot",))`` builds, without
    its check that the point approaches the ground, which would reject ``R = l``)."""
    model, q, qdot = _compass_state(R, q3)
    sol = constrained_impact(model.mass_matrix(q), model.contact_jacobian(q, "swing_foot"), qdot)
    return dict(energy_loss=sol.loss, vy_trailing=sol.qdot_plus[1],
                v_hip=jnp.linalg.norm(model.point_velocity(q, sol.qdot_plus, "H")),
                v_hip_minus=jnp.linalg.norm(model.point_velocity(q, qdot, "H")),
                vn_minus=-model.point_velocity(q, qdot, "swing_foot")[1], T_minus=sol.T_minus)


@jax.jit
@checks_as_nan()
def _compass_compliant(R, q3, g):
    """Swing foot and trailing foot compliant (Font-Llagunes et al. 2010, §5.1), the phase ends at the swing foot's end
    of compression; gravity ``g`` during the contact."""
    model, q, qdot = _compass_state(R, q3, g)
    law = _hunt_crossley(R, -model.point_velocity(q, qdot, "swing_foot")[1])
    sol, ok, loss = _compliant_summary(model, q, qdot, ("swing_foot", "stance_foot"), normal=law, friction=Coulomb(_MU),
                                       max_phases=12)
    return dict(energy_loss=loss, vy_trailing=sol.qdot_plus[1],
                v_hip=jnp.linalg.norm(model.point_velocity(sol.q_plus, sol.qdot_plus, "H")), ok=ok,
                stick=sol.final_stick[0], duration=sol.duration)


# --------------------------------------------------------------------------------------------------------
# Crutch walker, §5.2


def _crutch_state(q3, q4, g=9.81):
    """Font-Llagunes et al. 2010, §5.2: feet at the origin, ``q5 = 150°``, ``q6`` placing the tip on the ground, and
    only ``q̇3⁻ = 1 rad/s`` non-zero."""
    model = CrutchWalker(g=g)
    q, qdot = model.pre_impact_state(q3, 0.0, q4=q4)
    return model, q, qdot


def _crutch_outputs(model, q, qdot_plus, loss):
    return dict(energy_loss=loss, vy_feet=model.point_velocity(q, qdot_plus, "P")[1],
                v_shoulder=jnp.linalg.norm(model.point_velocity(q, qdot_plus, "S")))


@jax.jit
@checks_as_nan()
def _crutch_impulsive(q3, q4):
    """Tip Q sticks, feet released (Font-Llagunes et al. 2010, eq. 8)."""
    model, q, qdot = _crutch_state(q3, q4)
    sol = constrained_impact(model.mass_matrix(q), model.contact_jacobian(q, "Q"), qdot)
    return dict(_crutch_outputs(model, q, sol.qdot_plus, sol.loss),
                v_shoulder_minus=jnp.linalg.norm(model.point_velocity(q, qdot, "S")))


@jax.jit
@checks_as_nan()
def _crutch_compliant(q3, q4, g):
    """Compliant tip (Font-Llagunes et al. 2010, §4), feet free, to the tip's end of compression; gravity ``g`` during
    the contact."""
    model, q, qdot = _crutch_state(q3, q4, g)
    vn = -model.point_velocity(q, qdot, "Q")[1]
    law = _hunt_crossley(TIP_RADIUS, vn)
    sol, ok, loss = _compliant_summary(model, q, qdot, "Q", normal=law, friction=Coulomb(_MU))
    return dict(_crutch_outputs(model, sol.q_plus, sol.qdot_plus, loss), ok=ok, stick=sol.final_stick[0],
                chi=law.damping)


# --------------------------------------------------------------------------------------------------------
# Sweeps, rows, figures


def _impulsive_sweep(fn, a, b):
    """`fn` over the grid ``(a, b)``, one compiled ``vmap``; a failed check (NaN, :func:`_compass_impulsive`) raises."""
    out = jax.jit(jax.vmap(fn))(jnp.asarray(a, float), jnp.asarray(b, float))
    out = {k: np.asarray(v) for k, v in out.items()}
    require_finite(fn.__name__, out)
    return out


def _compliant_sweep(fn, a, b, progress, desc, g=9.81):
    """One compiled scalar solve, looped (the solve is event-driven: under ``vmap`` every member would step
    until the slowest ends). Failed solves are NaN. ``g``: gravity during the contact."""
    runs = [{k: np.asarray(v) for k, v in fn(x, y, g).items()}
            for x, y in progress(list(zip(np.asarray(a, float), np.asarray(b, float))), desc=desc)]
    out = {k: np.array([r[k] for r in runs]) for k in runs[0]}
    bad = ~out["ok"].astype(bool)
    for k in ("energy_loss", "vy_trailing", "vy_feet", "v_hip", "v_shoulder"):
        if k in out:
            out[k] = np.where(bad, np.nan, out[k])
    return out


def _rows(keys, x_cols, results, quantities):
    """Flat rows with columns `keys`: one per method and grid point with a result (a failed compliant solve, or
    no collision, is left out), ``x_cols`` the grid columns (name → values)."""
    rows = []
    for method, res in results.items():
        if res is not None:
            n = len(res[quantities[0]])
            cols = {"method": [method] * n, **x_cols[method], **{k: res[k] for k in quantities}}
            rows += table_rows({k: cols[k] for k in keys}, keep=np.isfinite(res["energy_loss"]))
    return rows


def _fmt(a, digits=3):
    return np.round(np.asarray(a, float), digits).tolist()


def _skipped_note(quick):
    return ("_`--quick`: the compliant side is skipped (compiling its event-driven solve alone exceeds the "
            "quick budget); run without `--quick` for both methods._" if quick else "")


# "Very similar", "similar", "very close" (energies, Fig. 5a kinematics): within 5 % of the plotted maximum,
# a visible but small gap on the paper's plots.
_CLOSE = 0.05


def _diff(a, b, mask=None):
    """Largest ``|a − b|`` over ``mask`` relative to the largest ``|a|`` plotted (NaN ignored)."""
    d = np.abs(np.asarray(a) - np.asarray(b))
    d = d if mask is None else d[mask]
    return float(np.nanmax(d) / plotted_max(a)) if np.any(np.isfinite(d)) else math.nan


def _overlap_check(statement, paper, x, name, imp, comp, key, tol=_OVERLAP, mask=None):
    d = _diff(imp[key], comp[key], mask)
    return check_that(statement, paper, f"largest gap in {name}: {d:.2%} of its plotted maximum "
                      f"(tolerance {tol:.0%})", d <= tol)


def _split_check(statement, paper, gaps, ranges, tol, reading):
    """Curves within `tol` of the plotted maximum over the first range and further apart over the second:
    `gaps` and `ranges` (labels) in that order; `reading` names the tolerance ("overlap", "close")."""
    (g_in, g_out), (r_in, r_out) = gaps, ranges
    return check_that(statement, paper, f"largest gap {g_in:.2%} ({r_in}) vs {g_out:.2%} ({r_out}) of the plotted "
                      f"maximum ({reading}: ≤ {tol:.0%})", g_in <= tol and g_out > g_in)


def _majority_check(statement, paper, more, what, where):
    """`more` (booleans over the grid) holds at most points."""
    return check_that(statement, paper, f"{what} at {more.sum()} of {more.size} {where}", more.mean() > 0.5)


def _gravity_note(imp, free, quantities):
    """The diagnostic of the module docstring: the comparison rerun with gravity switched off during the
    compliant contact only (same pre-impact states)."""
    if free is None:
        return ""
    gaps = ", ".join(f"{name} {_diff(imp[key], free[key]):.2%}" for key, name in quantities)
    solved = np.isfinite(free["energy_loss"])
    more = free["energy_loss"][solved] > imp["energy_loss"][solved]
    return (f"**Diagnostic: gravity switched off during the compliant contact** (g = 0 in that solve only): largest "
            f"gaps to the impulsive map {gaps} of the plotted maxima; compliant loss > impulsive at {more.sum()} of "
            f"{more.size} points. With gravity on (the results above) the gaps are the impulse "
            "of gravity over the finite contact: the paper's statements that the curves overlap hold without "
            "it, those that the compliant loss is the larger (Figs. 3b, 5b) need it.")


def _corr(a, b):
    ok = np.isfinite(a) & np.isfinite(b)
    return float(np.corrcoef(a[ok], b[ok])[0, 1])


_END_NOTE = ("compliant: Hunt–Crossley + Coulomb (μ = 1), integrated to the impacting contact's end of compression "
             "(v_n = 0); impulsive: the contact sticks, the others are released")


def _figure(x, xlabel, imp, comp, velocities, title, symbols):
    """Paper layout: (a) post-impact velocities, (b) energy loss, both methods; `symbols` defines the
    quantities under the legend."""
    pick = lambda key: {"impulsive": imp[key], "compliant": None if comp is None else comp[key]}  # noqa: E731
    skipped = "; --quick: compliant side not computed" if comp is None else ""
    return method_panels(
        x, [{label: pick(key) for key, label in velocities}, {"energy loss": pick("energy_loss")}], xlabel,
        ["(a) post-impact velocity [m/s]", "(b) energy lost at impact [J]"], title,
        note=f"{symbols}; {_END_NOTE}{skipped}")


def _padded(res, n):
    """Compliant results for the first ``len`` grid points, NaN beyond (no collision there)."""
    return None if res is None else {k: np.concatenate([v, np.full(n - len(v), np.nan)]) for k, v in res.items()}


def _compliant_notes(comp, what):
    if comp is None:
        return []
    fails, slips = int(np.sum(~comp["ok"].astype(bool))), int(np.sum(~comp["stick"].astype(bool)))
    return [f"Compliant solves: {len(comp['ok'])} ({what}), {fails} left out (NaN in the plots, no CSV row): "
            f"failed, or ({slips} of them) the impacting contact not sticking at the end of compression."]
