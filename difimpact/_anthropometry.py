"""Anthropometric tables and their scaling to a seven-link sagittal human (Ros et al. 2015, §2.1).

A table gives, for each body segment, its mass as a fraction of body mass, its length as a fraction of
stature, the position of its centre of mass and its sagittal radius of gyration as fractions of its length.
:func:`scale_segments` turns a table, a body mass ``m_B`` and a height ``H`` into the four distinct segments of
the seven-link model (Ros et al. 2015, Fig. 1): the Torso-Pelvis segment "HAT" (head, arms and trunk), the thigh, the
shank and the foot, each with

$$
m = f_m\\,m_B,\\qquad L = f_L\\,H,\\qquad c = (f_x, f_y)\\,L,\\qquad I = m\\,(r\\,L)^2 .
$$

Positions are sagittal ``(anterior, superior)`` vectors in the upright standing posture (segment axes as
in Dumas et al. 2007: ``X`` anterior, ``Y`` superior, origin at the segment's proximal joint, the foot
in its neutral position with respect to the shank).

**Lumping choices** (documented once, here):

- HAT (Ros et al. 2015's Torso-Pelvis): head & neck, torso, pelvis and both arms (upper arm, forearm, hand) as
  one rigid body, arms hanging along the torso axis with the elbows extended and the shoulder joint
  centres projected onto the cervical joint centre (CJC) in the sagittal plane (the paper neglects arm
  motion, Ros et al. 2015, §4.3). Its inertia about its centre of mass is the parallel-axis sum of the parts.
- The hip joint centre (HJC) lies on the HAT axis, the pelvis length below the lumbar joint centre (LJC);
  both hips coincide in the sagittal plane.
- Dumas's mass fractions add up to 100.2 % (male) and 99.9 % (female): the legs take the published
  fractions and the HAT the rest, so that the model's total mass is exactly ``body_mass``.
- Foot landmarks: the ankle joint centre (AJC) is at ``0.039 H`` above the sole (Winter 2009, Fig. 4.1);
  the midpoint of the metatarsal heads (MH) is on the sole, at the table's foot length from the AJC;
  the calcaneus (CAL) is on the sole, ``0.030 H`` behind the AJC (a modelling choice: neither table gives
  the heel; public foot models put it 50-55 mm behind the ankle for a 1.80 m subject).
"""

import dataclasses
import math
from typing import NamedTuple

import jax.numpy as jnp

from ._custom_types import Array, Float, Scalar, ScalarLike
from ._validation import finite_result, instance, positive
from ._linalg import full_precision


@dataclasses.dataclass(frozen=True)
class SegmentRow:
    """One row of an anthropometric table (all entries dimensionless).

    - `mass`: segment mass / body mass.
    - `length`: segment length / stature.
    - `com`: centre of mass ``(anterior, superior)`` / segment length, from the segment's origin joint.
    - `gyration`: sagittal radius of gyration about the centre of mass / segment length.
    """

    mass: float
    length: float
    com: tuple[float, float]
    gyration: float


@dataclasses.dataclass(frozen=True)
class HatPart:
    """A segment lumped into the HAT: `count` copies with their origin joint at `origin`
    ``(anterior, superior)`` / stature from the lumbar joint centre, upright posture."""

    segment: SegmentRow
    origin: tuple[float, float]
    count: int = 1


@dataclasses.dataclass(frozen=True)
class AnthropometricTable:
    """An anthropometric table reduced to what the seven-link model needs.

    - `name`, `source`: short name and full citation (with the table used).
    - `hat`: the parts lumped into the HAT (see the module docstring).
    - `hat_length`: LJC to the top joint of the HAT (CJC or shoulder) / stature, for reference only.
    - `pelvis`: LJC to HJC distance / stature.
    - `thigh`, `shank`: origin at the hip and knee joint centres, distal joint at ``(0, -length)``.
    - `foot`: origin at the AJC; its `length` is the AJC-MH distance.
    - `ankle_height`, `heel`: AJC height above the sole and CAL distance behind the AJC, / stature.
    """

    name: str
    source: str
    hat: tuple[HatPart, ...]
    hat_length: float
    pelvis: float
    thigh: SegmentRow
    shank: SegmentRow
    foot: SegmentRow
    ankle_height: float = 0.039
    heel: float = 0.030


def _dumas(stature_mm, length_mm, mass_pct, x_pct, y_pct, r_zz_pct) -> SegmentRow:
    return SegmentRow(mass_pct / 100, length_mm / stature_mm, (x_pct / 100, y_pct / 100), r_zz_pct / 100)


def _dumas_table(sex, stature_mm, rows) -> AnthropometricTable:
    """Assemble a Dumas et al. (2007) table from its rows ``(length mm, mass %, X %, Y %, r_zz %)``."""
    seg = {k: _dumas(stature_mm, *v) for k, v in rows.items()}
    cjc = (0.0, seg["torso"].length)
    elbow = (0.0, cjc[1] - seg["arm"].length)
    wrist = (0.0, elbow[1] - seg["forearm"].length)
    return AnthropometricTable(
        name=f"dumas2007_{sex}",
        source=(
            "Dumas R., Chèze L., Verriest J.-P. (2007), Adjustments to McConville et al. and Young et al. "
            f"body segment inertial parameters, J. Biomech. 40:543-553, Table 2 ({sex}s): segment lengths, "
            "masses, centre-of-mass positions (X, Y) and radii of gyration r_zz (sagittal)."
        ),
        hat=(
            HatPart(seg["head"], cjc),
            HatPart(seg["torso"], cjc),
            HatPart(seg["pelvis"], (0.0, 0.0)),
            HatPart(seg["arm"], cjc, 2),
            HatPart(seg["forearm"], elbow, 2),
            HatPart(seg["hand"], wrist, 2),
        ),
        hat_length=seg["torso"].length,
        pelvis=seg["pelvis"].length,
        thigh=seg["thigh"],
        shank=seg["leg"],
        foot=seg["foot"],
    )


# Dumas et al. (2007), Table 2. Rows: length [mm] of the mean subject, mass [% body mass], centre of mass
# X (anterior) and Y (superior) [% length] from the segment's origin (head and torso: CJC; arm: shoulder;
# forearm: elbow; hand: wrist; pelvis: LJC; thigh: HJC; leg: KJC; foot: AJC), r_zz [% length].
# Cross-checked against public code: masses (HuMoD SubjectParameterEstimation.m; CusToM WholeBodySegMass.m
# and LegSegMass.m), centres of mass (HuMoD) and radii of gyration (CusToM, males; HuMoD, females), except
# the foot, whose centre of mass (and female radius) HuMoD takes from a later, differently defined foot frame.
# Not cross-checked against a second source: the segment lengths, the mean statures (1770 and 1610 mm) and
# the foot rows' centres of mass (and the female foot's radius).
DUMAS_2007_MALE = _dumas_table("male", 1770.0, {
    "head": (278.0, 6.7, -6.2, 55.5, 33.0),
    "torso": (477.0, 33.3, -3.6, -42.0, 28.0),
    "arm": (271.0, 2.4, 1.7, -45.2, 32.0),
    "forearm": (283.0, 1.7, 1.0, -41.7, 27.0),
    "hand": (80.0, 0.6, 3.5, -35.7, 24.0),
    "pelvis": (94.0, 14.2, 2.8, -28.0, 95.0),
    "thigh": (432.0, 12.3, -4.1, -42.9, 30.0),
    "leg": (433.0, 4.8, -4.8, -41.0, 28.0),
    "foot": (183.0, 1.2, 38.2, -30.9, 36.0),
})
DUMAS_2007_FEMALE = _dumas_table("female", 1610.0, {
    "head": (244.0, 6.7, -7.0, 59.7, 34.0),
    "torso": (429.0, 30.4, -1.6, -43.6, 29.0),
    "arm": (243.0, 2.2, -7.3, -45.4, 33.0),
    "forearm": (247.0, 1.3, 2.1, -41.1, 25.0),
    "hand": (71.0, 0.5, 3.3, -32.7, 25.0),
    "pelvis": (107.0, 14.6, -0.9, -23.2, 79.0),
    "thigh": (379.0, 14.6, -7.7, -37.7, 32.0),
    "leg": (388.0, 4.5, -4.9, -40.4, 28.0),
    "foot": (165.0, 1.0, 27.0, -21.8, 35.0),
})


def _winter_table() -> AnthropometricTable:
    """Winter (2009), Table 4.1 (mass fraction, centre of mass / length from the proximal end, radius of
    gyration about the centre of mass / length) with lengths from Fig. 4.1 (fractions of H).

    Winter's HAT runs from the greater trochanter (taken at the hip, so the LJC coincides with the HJC) to
    the glenohumeral joint (0.818 H - 0.530 H); thigh 0.530 H - 0.285 H; leg 0.285 H - 0.039 H. Winter gives
    no ankle-to-MH length: the foot uses Dumas's male ratio (183/1770), its centre of mass half-way along
    the ankle-MH line (Winter: lateral malleolus to head of metatarsal II, 0.50).
    """
    foot_length = 183.0 / 1770.0
    h = 0.039
    mh = (math.sqrt(foot_length**2 - h**2) / foot_length, -h / foot_length)
    hat = SegmentRow(0.678, 0.818 - 0.530, (0.0, 0.626), 0.496)
    return AnthropometricTable(
        name="winter2009",
        source=(
            "Winter D.A. (2009), Biomechanics and Motor Control of Human Movement, 4th ed., Wiley, "
            "Table 4.1 (segment mass, centre of mass and radius of gyration) and Fig. 4.1 (lengths)."
        ),
        hat=(HatPart(hat, (0.0, 0.0)),),
        hat_length=hat.length,
        pelvis=0.0,
        thigh=SegmentRow(0.100, 0.530 - 0.285, (0.0, -0.433), 0.323),
        shank=SegmentRow(0.0465, 0.285 - 0.039, (0.0, -0.433), 0.302),
        foot=SegmentRow(0.0145, foot_length, (0.5 * mh[0], 0.5 * mh[1]), 0.475),
    )


WINTER_2009 = _winter_table()


class ScaledSegment(NamedTuple):
    """A segment scaled to a subject: `mass` [kg], `length` [m], `com` ``(anterior, superior)`` from its
    proximal joint [m] (upright posture), `inertia` about the centre of mass, sagittal [kg m²]."""

    mass: Scalar
    length: Scalar
    com: Float[Array, " 2"]
    inertia: Scalar


class HumanSegments(NamedTuple):
    """The segments of the seven-link model for one subject; `hip` is the HJC from the LJC, `heel` (CAL)
    and `mh` (MH) are the foot landmarks from the AJC, all ``(anterior, superior)`` [m]."""

    hat: ScaledSegment
    thigh: ScaledSegment
    shank: ScaledSegment
    foot: ScaledSegment
    hip: Float[Array, " 2"]
    heel: Float[Array, " 2"]
    mh: Float[Array, " 2"]


def _scale(seg: SegmentRow, body_mass, height) -> ScaledSegment:
    mass = seg.mass * body_mass
    length = seg.length * height
    return ScaledSegment(mass, length, jnp.stack([seg.com[0] * length, seg.com[1] * length]),
                         mass * (seg.gyration * length) ** 2)


@full_precision
def scale_segments(table: AnthropometricTable, body_mass: ScalarLike = 75.0, height: ScalarLike = 1.77
                   ) -> HumanSegments:
    """Scale `table` to a subject of `body_mass` [kg] and `height` [m] (differentiable in both).

    ``m = f_m m_B``, ``L = f_L H``, ``c = f_c L``, ``I = m (r L)²``; the HAT is the parallel-axis sum of
    its parts, ``I = Σ m_i (r_i L_i)² + m_i |c_i − c|²``, with mass ``m_B − 2 (m_thigh + m_shank + m_foot)``
    (see the module docstring for every lumping choice).
    """
    instance("table", table, AnthropometricTable, "DUMAS_2007_MALE")
    body_mass = positive("body_mass", body_mass, shape=())
    height = positive("height", height, shape=())
    thigh, shank, foot = (_scale(s, body_mass, height) for s in (table.thigh, table.shank, table.foot))
    parts = [(p, _scale(p.segment, body_mass, height)) for p in table.hat]
    masses = jnp.stack([p.count * s.mass for p, s in parts])
    coms = jnp.stack([jnp.stack([p.origin[0] * height, p.origin[1] * height]) + s.com for p, s in parts])
    own = jnp.stack([p.count * s.inertia for p, s in parts])
    hat_mass = body_mass - 2 * (thigh.mass + shank.mass + foot.mass)
    # Centre of mass and inertia of the published parts, the inertia rescaled by the mass the HAT takes
    # (a uniform rescaling of the parts' masses moves the centre of mass nowhere).
    hat_com = masses @ coms / jnp.sum(masses)
    spread = jnp.sum(masses * jnp.sum((coms - hat_com[None, :]) ** 2, axis=-1))
    hat_inertia = (jnp.sum(own) + spread) * hat_mass / jnp.sum(masses)
    hat = ScaledSegment(hat_mass, table.hat_length * height, hat_com, hat_inertia)
    h, heel = table.ankle_height * height, table.heel * height
    mh = jnp.stack([jnp.sqrt(foot.length**2 - h**2), -h])
    zero = jnp.zeros_like(h)
    segments = HumanSegments(hat, thigh, shank, foot, jnp.stack([zero, -table.pelvis * height]),
                             jnp.stack([-heel, -h]), mh)
    return finite_result("scale_segments", segments, "`body_mass` or `height`")
