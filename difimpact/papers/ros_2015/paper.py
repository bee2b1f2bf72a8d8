"""What Ros et al. (2015) fix for the heel strike of the seven-link human: the joint-blocking cases of §4, the
reference push-off, the published values of ξ, and what the pre-impact state rests on (:data:`SOURCES`). Read by
the experiments of :mod:`.fig3`, :mod:`.fig6`, :mod:`.fig8` and :mod:`.measured_heel_strikes`."""

from difimpact import SevenLinkHuman

OMEGA0_REF = -1.0  # rad/s, the push-off of §4.2–4.3 (points A, B, C)
OMEGA0_RANGE = (-1.0, 1.0)  # rad/s, see :mod:`.heel_strikes`
DTHETA_RANGE = (-20.0, 20.0)  # deg, see :mod:`.heel_strikes`
ANKLE, KNEE, HIP = "theta_A_R", "theta_K_R", "theta_H_R"
TRAILING = ("theta_H_L", "theta_K_L", "theta_A_L")
# Blocked joints of each case; the ankle takes the prescribed post-impact rate of Fig. 8.
CASES = {
    "none": (),
    "ankle": (ANKLE,),
    "ankle+knee": (ANKLE, KNEE),
    "ankle+knee+hip": (ANKLE, KNEE, HIP),
}
JOINTS = (ANKLE, KNEE, HIP) + TRAILING  # every joint a case may block
CASES_INDEX = {c: SevenLinkHuman.coordinate_names.index(c) for c in JOINTS}
# The paper's line styles (§4.1: red continuous, blue dashed, green dash-point); "none" is not in its figures.
STYLES = {"none": "k:", "ankle": "r-", "ankle+knee": "b--", "ankle+knee+hip": "g-."}
OUTCOMES = ("stays", "lifts", "no consistent set", "failed")
# Seed 002's values for the blocked cases: maxima over the push-off range (§4.1 conclusions 1-3, given to 5 %)
# and the values at ω0 = −1 rad/s (§4.3 conclusions 1-3, to the percent).
PAPER_MAX_PCT = {"ankle": 20, "ankle+knee": 30, "ankle+knee+hip": 35}
PAPER_AT_REF_PCT = {"ankle": 12, "ankle+knee": 17, "ankle+knee+hip": 19}
SOURCES = """**What the pre-impact state rests on.** Ros et al. 2015's Fig. 1 (its posture) is lost and Murray et al.'s
(1964) joint-angle curves, on which it is based, were not available.

- *From Ros et al. 2015*: 75 kg; Dumas et al. (2007) segments; v0 = 1.61 m/s and the nine kinematic conditions of
  eq. 3; ω0 = −1 rad/s as the strongest push-off (points A, B, C); the leading CAL sticks (eqs. 6-7), the
  trailing MH does not slide and may lift off (eqs. 8-9, footnote 4); blocking by eqs. 10-12; ξ = (T⁻ − T⁺)/T⁻
  of the whole body (eq. 23).
- *Sourced elsewhere*: the step, 0.79 m heel print to heel print (Murray, Drought & Kory 1964, men at free
  speed, as tabulated in D. Thompson's "Stride analysis", Univ. of Oklahoma HSC); the leading ankle neutral and
  the leading knee nearly extended at heel strike, the trailing ankle about 10° dorsiflexed at heel off
  (secondary summaries of normal gait; `HeelStrikePosture` cites them).
- *Derived*: the thighs, 23.7° ahead of and 23.5° behind the vertical, solved so that the posture has that step
  and that trailing ankle.
- *Assumed*: stature 1.77 m (Dumas's mean male); 5° of flexion at the leading knee and 10° at the trailing knee;
  an upright torso (θ_n = 0); the foot landmarks (CAL 0.030 H behind the ankle on the sole, ankle 0.039 H above
  it, `difimpact._anthropometry`); arms lumped into the Torso-Pelvis; the upper end of the push-off range
  (+1 rad/s).

With the step fixed, ξ hardly depends on the assumed knee angles (trailing knee ± 5°: < 0.5 point), except
the ankle-only case on the leading knee (extended instead of 5° flexed: about +2.5 points at ω0 = −1). The
heel's distance behind the ankle is held by the paper's ≈ 2 % with nothing blocked: 35 mm instead of 53 mm
raises the blocked cases by 0.4-2.6 points but the nothing-blocked case to 4.3 % at ω0 = 1 rad/s."""
