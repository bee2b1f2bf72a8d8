import math
from typing import NamedTuple

import equinox as eqx
import jax.numpy as jnp

from .._anthropometry import DUMAS_2007_MALE, AnthropometricTable, scale_segments
from .._custom_types import Array, ArrayLike, Config, Float, Scalar, ScalarLike, Velocity
from .._linalg import full_precision, solve_lu
from .._tree import Body, PlanarTree, Point
from .._validation import as_float, check, positive
from .base import AbstractSteppingModel

_LEGS = ((3, "R"), (6, "L"))  # first coordinate of each leg's hip, knee, ankle


class HeelStrikePosture(NamedTuple):
    """Reference heel-strike posture of normal gait [rad] (Ros et al. 2015, §2.2 and Fig. 1).

    Ros et al. 2015 bases its posture on Murray et al. (1964), Part II, Figs. 5-6 (angles defined as in the
    paper), but prints no numbers and its Fig. 1 is lost; Murray's joint-angle curves were not available
    either. The defaults are built from what could be sourced, at the instant of leading heel strike (0 % of
    the leading leg's cycle, about 50 % of the trailing leg's):

    - **sourced** step length ``0.79 m`` (heel print to heel print, :meth:`SevenLinkHuman.step_length`):
      Murray, Drought & Kory (1964), men at free speed (step 79 cm, stride 158 cm, cadence 117 steps/min,
      1.54 m/s), as tabulated by D. Thompson, "Stride analysis", Univ. of Oklahoma HSC
      (moon.ouhsc.edu/dthompso/gait/knmatics/stride.htm); not rescaled to the model's 1.77 m (Murray's men
      were 61-74 in tall).
    - **sourced** (rounded, from secondary summaries of normal gait: podiapaedia.org "Angular kinematics of
      gait"; the Rancho Los Amigos gait syllabus at aaushi.info/A2759; sparkmotion.com "Terminal stance"):
      leading ankle neutral and leading knee nearly extended at initial contact; trailing ankle about 10°
      dorsiflexed at the end of terminal stance (heel off).
    - **assumed** knee flexions: leading 5°, trailing 10° (near its stance minimum, as Ros et al. 2015, §2.2 notes);
      torso upright.
    - **derived**: the two thigh angles, solved (numerically, once; rounded to 0.1°) so that with the angles
      above and both contacts on the ground the step is 0.79 m and the trailing ankle solves to 10° of
      dorsiflexion: leading thigh 23.7° ahead of the vertical (within the 20-30° of hip flexion quoted at
      initial contact), trailing thigh 23.5° behind it (beyond the 10-20° of hip extension quoted for
      terminal stance). With the step fixed, ξ barely depends on the trailing knee (±5°: < 0.5 point); the
      leading knee moves the ankle-only case (extended instead of 5° flexed: about +2.5 points at ω0 = −1).

    Unlike the model's coordinates, these angles are **counter-clockwise** (Ros et al. 2015's sense;
    :meth:`SevenLinkHuman.heel_strike_posture` negates them into ``q``), thighs measured from the downward
    vertical:

    - `torso`: the Torso-Pelvis angle θ_n, 0 (upright).
    - `thigh_R`: leading thigh, +23.7° (hip flexed, thigh ahead of the vertical).
    - `knee_R`: leading knee, −5° (5° of flexion).
    - `ankle_R`: leading ankle, 0° (neutral).
    - `thigh_L`: trailing thigh, −23.5° (behind the vertical).
    - `knee_L`: trailing knee, −10° (10° of flexion).

    The trailing ankle is not an input: :meth:`SevenLinkHuman.heel_strike_posture` solves it so that the
    trailing MH touches the ground. With the defaults (75 kg, 1.77 m, Dumas 2007 male) it comes out at 10.0°
    of dorsiflexion with the trailing heel 8.9 cm off the ground, and the step is 0.790 m.
    """

    torso: float = 0.0
    thigh_R: float = math.radians(23.7)
    knee_R: float = math.radians(-5.0)
    ankle_R: float = 0.0
    thigh_L: float = math.radians(-23.5)
    knee_L: float = math.radians(-10.0)


class SevenLinkHuman(AbstractSteppingModel):
    """Seven-link sagittal human model of Ros et al. 2015 (§2.1, Figs. 1-2): Torso-Pelvis (HAT), two thighs, two
    shanks and two feet joined by revolute hips, knees and ankles.

    Coordinates (Ros et al. 2015, eq. 1)
    $q = [x, y, \\theta, \\theta_H^R, \\theta_K^R, \\theta_A^R, \\theta_H^L, \\theta_K^L, \\theta_A^L]$: ``(x, y)`` the
    lumbar joint centre (LJC), ``θ`` the absolute Torso-Pelvis angle (0 upright), then the hip, knee and ankle angles of
    the right (leading) and left (trailing) legs, each relative to the preceding segment.
    **All angles are clockwise** (positive toward +x, x forward, y up), the project's convention
    (CONVENTIONS.md), so each is **minus** Ros et al. 2015's counter-clockwise angle: a torso leaning forward has
    ``q[2] > 0``, and hip flexion, knee extension and ankle dorsiflexion are negative (knee flexion positive).
    Zero joint angles are upright standing (thighs and shanks along the torso axis, foot neutral).

    Ros et al. 2015's counter-clockwise sense is kept only for the paper's inputs: the fields of
    :class:`HeelStrikePosture`, the `torso` angle θ ("negative values of θ indicate that the torso is leaning
    forward", §4.2) and the push-off rate `omega0` ("negative values push the body upwards", §4.1) of
    :meth:`heel_strike_posture` and :meth:`heel_strike_state`, which convert them (``q[2] = −θ``,
    ``q̇[8]⁻ = −ω0``).

    Named points: ``LJC``; per side ``s ∈ {R, L}``: hip ``H_s`` (both hips coincide in the sagittal plane),
    knee ``K_s``, ankle ``A_s``, heel ``CAL_s`` and metatarsal heads ``MH_s``.

    **Arguments:**

    - `body_mass` [kg] (75, Ros et al. 2015, §2.1), `height` [m] (1.77: the mean stature of Dumas et al. 2007's male
      sample, so that the default reproduces its mean subject's segment lengths).
    - `table`: an :class:`~difimpact.AnthropometricTable`, default ``DUMAS_2007_MALE`` (Ros et al. 2015 uses Dumas
      et al. 2007); ``WINTER_2009`` is the alternative. See :func:`~difimpact.scale_segments`.
    - Overrides (keyword-only, taking precedence over the table), order HAT, thigh, shank, foot:
      `masses` ``(4,)`` [kg], `inertias` ``(4,)`` centroidal [kg m²], `com` ``(4, 2)`` centres of mass
      ``(anterior, superior)`` from the proximal joint (HAT: from the LJC) in upright standing [m];
      `lengths` ``(2,)`` thigh and shank [m]; `hip` ``(2,)`` HJC from the LJC; `heel`, `mh` ``(2,)`` CAL and
      MH from the ankle, foot neutral [m].
    - `g`: gravity [m/s²].
    """

    masses: Float[Array, " 4"]
    inertias: Float[Array, " 4"]
    com: Float[Array, "4 2"]
    lengths: Float[Array, " 2"]
    hip: Float[Array, " 2"]
    heel: Float[Array, " 2"]
    mh: Float[Array, " 2"]
    g: Scalar
    coordinate_names = ("x", "y", "theta", "theta_H_R", "theta_K_R", "theta_A_R", "theta_H_L", "theta_K_L",
                        "theta_A_L")

    def __init__(self, body_mass: ScalarLike = 75.0, height: ScalarLike = 1.77,
                 table: AnthropometricTable = DUMAS_2007_MALE, *,
                 masses: Float[ArrayLike, " 4"] | None = None, inertias: Float[ArrayLike, " 4"] | None = None,
                 com: Float[ArrayLike, "4 2"] | None = None, lengths: Float[ArrayLike, " 2"] | None = None,
                 hip: Float[ArrayLike, " 2"] | None = None, heel: Float[ArrayLike, " 2"] | None = None,
                 mh: Float[ArrayLike, " 2"] | None = None, g: ScalarLike = 9.81):
        s = scale_segments(table, body_mass, height)
        segs = (s.hat, s.thigh, s.shank, s.foot)

        def pick(name, value, default, shape):
            return as_float(name, default if value is None else value, shape=shape)

        self.masses = positive("masses", pick("masses", masses, jnp.stack([x.mass for x in segs]), (4,)))
        self.inertias = positive("inertias", pick("inertias", inertias, jnp.stack([x.inertia for x in segs]),
                                                  (4,)))
        self.com = pick("com", com, jnp.stack([x.com for x in segs]), (4, 2))
        self.lengths = positive("lengths", pick("lengths", lengths, jnp.stack([s.thigh.length, s.shank.length]),
                                                (2,)))
        self.hip = pick("hip", hip, s.hip, (2,))
        self.heel = pick("heel", heel, s.heel, (2,))
        self.mh = pick("mh", mh, s.mh, (2,))
        self.g = positive("g", g, allow_zero=True, shape=())

    def tree(self) -> PlanarTree:
        m, inertia, c = self.masses, self.inertias, self.com
        # Body coordinates are (along, across) with "along" pointing from the joint to the distal end: the
        # HAT points up, (along, across) = (superior, anterior); leg segments point down, = (−sup., −ant.).
        up = lambda v: (v[1], v[0])  # noqa: E731
        down = lambda v: (-v[1], -v[0])  # noqa: E731
        bodies = [Body("hat", -1, 2, m[0], inertia[0], up(c[0]))]
        points = [Point("LJC", 0)]
        for k, side in _LEGS:
            b = len(bodies)
            bodies += [
                Body(f"thigh_{side}", 0, k, m[1], inertia[1], down(c[1]), up(self.hip), 1.0, math.pi),
                Body(f"shank_{side}", b, k + 1, m[2], inertia[2], down(c[2]), (self.lengths[0], 0.0)),
                Body(f"foot_{side}", b + 1, k + 2, m[3], inertia[3], down(c[3]), (self.lengths[1], 0.0)),
            ]
            points += [
                Point(f"H_{side}", b),
                Point(f"K_{side}", b + 1),
                Point(f"A_{side}", b + 2),
                Point(f"CAL_{side}", b + 2, down(self.heel)),
                Point(f"MH_{side}", b + 2, down(self.mh)),
            ]
        return PlanarTree._assemble(9, bodies, points, self.g, checked=False)

    def heel_strike_posture(self, torso: ScalarLike | None = None,
                            posture: HeelStrikePosture = HeelStrikePosture()) -> Config:
        """Heel-strike configuration with the leading heel ``CAL_R`` and the trailing ``MH_L`` on the ground.

        `torso` θ (default ``posture.torso``) and the `posture` angles are counter-clockwise, as in Ros et al. 2015
        (negative θ: leaning forward, §4.2); the returned ``q`` is clockwise (class docstring), ``q[2] = −θ``.
        The thighs keep their absolute angles from `posture` whatever θ, so ``θ_H = thigh − θ`` (paper's
        sense): varying θ moves the torso only, as in Ros et al. 2015's simulation group II (§4.2). ``x = 0``; ``y``
        puts ``CAL_R`` on the ground; the trailing ankle angle $\\theta_A^L$ puts ``MH_L`` on the ground, in closed
        form: with the foot rotated by β (counter-clockwise) from neutral, ``MH_y = A_y + ρ sin(β + γ)`` with
        ``(ρ, γ)`` the polar form of ``mh``, so ``β = asin(−A_y/ρ) − γ`` (the branch through the neutral foot).
        """
        theta = _torso(torso, posture)
        q, reachable = _posture(self, theta, posture)
        return _reachable(q, reachable)

    def step_length(self, q: Config) -> Scalar:
        """Step length as gait laboratories measure it (Murray et al. 1964): the distance from the trailing
        foot's heel print to the leading heel ``CAL_R``. The trailing foot is taken to have rolled about its
        MH without slipping, so its heel print lies ``|mh − heel|`` behind ``MH_L`` (the CAL-MH distance:
        both on the ground when the foot was flat).
        """
        tree, q = self.tree(), self._q(q)
        heel_print = tree.point_position(q, "MH_L")[0] - jnp.linalg.norm(self.mh - self.heel)
        return tree.point_position(q, "CAL_R")[0] - heel_print

    def heel_strike_state(self, omega0: ScalarLike = -1.0, torso: ScalarLike | None = None, *,
                          v0: ScalarLike = 1.61,
                          posture: HeelStrikePosture = HeelStrikePosture()) -> tuple[Config, Velocity]:
        """Pre-impact state of Ros et al. 2015 (§2.2, eq. 3): configuration from :meth:`heel_strike_posture`, and
        ``q̇⁻`` the solution of the nine linear kinematic conditions

        $$
        \\dot\\theta_H^R = 0,\\; v_x(LJC) = v_0,\\; v_x(CAL^R) = 0,\\; \\dot\\theta_K^R = \\dot\\theta_A^R = 0,
        \\; \\mathbf v(MH^L) = 0,\\; \\dot\\theta_K^L = 0,\\; \\dot\\theta_A^L = \\omega_0,
        $$

        with ``v0 = 1.61 m/s`` (Ros et al. 2015, §2.2) and the push-off rate `omega0` (−1 rad/s in Ros et al. 2015,
        §4.2-4.3), counter-clockwise as in the paper (negative pushes the body up, §4.1): in the model's clockwise
        coordinates the last condition is ``q̇[8] = −ω0``. Differentiable in `omega0`, `torso`, `v0` and the model
        parameters.
        """
        theta = _torso(torso, posture)
        omega0 = as_float("omega0", omega0, shape=())
        v0 = as_float("v0", v0, shape=())
        q, qdot, reachable, pivot = _heel_strike_state(self, theta, omega0, v0, posture)
        qdot = check(qdot, ~(pivot > 9 * jnp.finfo(pivot.dtype).eps),
                     "the heel-strike conditions are singular to working precision (zero LU pivot).")
        return _reachable(q, reachable), qdot


# The two states above are compiled functions of arrays, one program per model structure whatever the values, so
# that eager calls reuse it. Their checks are applied by the callers, on the returned flags, so that concrete
# values still raise ``ValueError``.
@eqx.filter_jit
@full_precision
def _posture(model: SevenLinkHuman, theta, posture: HeelStrikePosture):
    """:meth:`SevenLinkHuman.heel_strike_posture` and whether the trailing foot reaches the ground."""
    zero = jnp.zeros_like(theta)
    p = posture
    paper = jnp.stack([theta, p.thigh_R - theta, zero + p.knee_R, zero + p.ankle_R, p.thigh_L - theta,
                       zero + p.knee_L, zero])
    q = jnp.concatenate([jnp.stack([zero, zero]), -paper])  # clockwise coordinates
    tree = model.tree()
    q = q.at[1].set(-tree.point_position(q, "CAL_R")[1])
    ankle = tree.point_position(q, "A_L")
    rho = jnp.linalg.norm(model.mh)
    reachable = jnp.abs(ankle[1]) <= rho
    beta = jnp.arcsin(jnp.where(reachable, -ankle[1] / rho, 0.0)) - jnp.arctan2(model.mh[1], model.mh[0])
    return q.at[8].set(-beta - (q[2] + q[6] + q[7])), reachable  # clockwise foot angle −β


def _torso(torso, posture: HeelStrikePosture):
    """The torso angle: `torso` if given, else the posture's."""
    return as_float("torso", posture.torso if torso is None else torso, shape=())


def _reachable(q, reachable):
    return check(q, ~reachable, "the trailing foot cannot reach the ground in this posture (ankle higher than "
                 "|mh|).")


@eqx.filter_jit
@full_precision
def _heel_strike_state(model: SevenLinkHuman, theta, omega0, v0, posture: HeelStrikePosture):
    """:meth:`SevenLinkHuman.heel_strike_state`, the reachability flag and the smallest relative LU pivot."""
    q, reachable = _posture(model, theta, posture)
    tree = model.tree()
    unit = jnp.eye(9, dtype=q.dtype)
    cal = tree.point_jacobian(q, "CAL_R")
    mh = tree.point_jacobian(q, "MH_L")
    a = jnp.stack([unit[3], unit[0], cal[0], unit[4], unit[5], mh[0], mh[1], unit[7], unit[8]])
    zero = jnp.zeros_like(v0)
    b = jnp.stack([zero, v0, zero, zero, zero, zero, zero, zero, -omega0])
    qdot, pivot = solve_lu(a, b)
    return q, qdot, reachable, pivot
