import math

import equinox as eqx
import jax.numpy as jnp

from .._custom_types import Array, ArrayLike, Config, Float, Scalar, ScalarLike, Velocity
from .._exported import PROGRAM_OPTIONS, stored
from .._tree import Body, PlanarTree, Point
from .._validation import as_float, check, positive
from .base import AbstractPlanarModel, _solve_coordinate, root_tolerance


class CrutchWalker(AbstractPlanarModel):
    """Four-segment model of swing-through crutch gait (Font-Llagunes et al. 2012, §2 and Table 1; Font-Llagunes et al.
    2010, §4).

    Coordinates ``q = [q1, q2, q3, q4, q5, q6]``: ``(q1, q2)`` the feet P, ``q3`` the absolute angle of the
    legs (from the upward vertical, positive forward), ``q4`` torso relative to legs, ``q5`` upper arms
    relative to torso, ``q6`` forearms + crutches relative to upper arms (see the documentation's conventions page).
    Chain P → hip H (legs, ``l1``) → shoulder S (torso, ``l2``) → elbow E (upper arms, ``l3``) → tip Q
    (forearms + crutches, ``l4``). Named points: ``P, H, S, E, Q``.

    **Arguments** (defaults: Font-Llagunes et al. 2012, Table 1; both legs, both arms lumped):

    - `masses`: ``(4,)`` segment masses [kg], default ``(22.54, 40.46, 3.92, 4.28)``.
    - `inertias`: ``(4,)`` centroidal inertias [kg m²], default ``(2.07, 2.66, 0.044, 0.433)``.
    - `lengths`: ``(4,)`` segment lengths [m], default ``(0.93, 0.51, 0.33, 1.25)``.
    - `com`: ``(4,)`` centre of mass distance from each segment's proximal joint (feet, hip, shoulder,
      elbow) [m], default ``(0.51, 0.34, 0.14, 0.33)``.
    - `g`: gravity [m/s²].
    """

    masses: Float[Array, " 4"]
    inertias: Float[Array, " 4"]
    lengths: Float[Array, " 4"]
    com: Float[Array, " 4"]
    g: Scalar
    coordinate_names = ("q1", "q2", "q3", "q4", "q5", "q6")

    def __init__(
        self,
        masses: Float[ArrayLike, " 4"] = (22.54, 40.46, 3.92, 4.28),
        inertias: Float[ArrayLike, " 4"] = (2.07, 2.66, 0.044, 0.433),
        lengths: Float[ArrayLike, " 4"] = (0.93, 0.51, 0.33, 1.25),
        com: Float[ArrayLike, " 4"] = (0.51, 0.34, 0.14, 0.33),
        g: ScalarLike = 9.81,
    ):
        self.masses = positive("masses", as_float("masses", masses, shape=(4,)))
        self.inertias = positive("inertias", as_float("inertias", inertias, shape=(4,)))
        self.lengths = positive("lengths", as_float("lengths", lengths, shape=(4,)))
        self.com = positive("com", as_float("com", com, shape=(4,)), allow_zero=True)
        self.g = positive("g", g, allow_zero=True, shape=())

    def tree(self) -> PlanarTree:
        m, inertia, l, c = self.masses, self.inertias, self.lengths, self.com
        bodies = [
            Body("legs", -1, 2, m[0], inertia[0], (c[0], 0.0)),
            Body("torso", 0, 3, m[1], inertia[1], (c[1], 0.0), (l[0], 0.0)),
            Body("upper_arms", 1, 4, m[2], inertia[2], (c[2], 0.0), (l[1], 0.0)),
            Body("forearms", 2, 5, m[3], inertia[3], (c[3], 0.0), (l[2], 0.0)),
        ]
        points = [
            Point("P", 0),
            Point("H", 0, (l[0], 0.0)),
            Point("S", 1, (l[1], 0.0)),
            Point("E", 2, (l[2], 0.0)),
            Point("Q", 3, (l[3], 0.0)),
        ]
        return PlanarTree._assemble(6, bodies, points, self.g, checked=False)

    def place_crutch(self, q3: ScalarLike, q4: ScalarLike = math.radians(10.0),
                     q5: ScalarLike = math.radians(150.0)) -> Config:
        """Posture ``[0, 0, q3, q4, q5, q6]`` with ``q6`` solved so that the crutch tip Q touches the
        ground ahead of the feet (Font-Llagunes et al. 2012, §5: ``q6 ≈ −24.4°`` at ``q3 = 12°``).

        ``q6`` comes from a Newton root find (:meth:`solve_coordinate`) started with the forearm horizontal
        and pointing forward, which selects the root ahead of the feet; gradients with respect to
        ``q3, q4, q5`` and the segment lengths follow from the implicit function theorem.
        """
        return self._checked(*_place_crutch(self, *_angles(q3, q4, q5)))

    def _checked(self, q: Config, reaches, found, ahead) -> Config:
        """``q``, raising where :func:`_place_crutch`'s flags say the crutch could not be placed."""
        q = check(q, ~reaches,
                  "the crutch cannot reach the ground: elbow height exceeds the forearm+crutch length.")
        q = check(q, ~found, self._unplaced("Q", 5, 0.0))
        return check(q, ~ahead, "the crutch tip lands behind the feet for this posture.")

    def pre_impact_state(self, q3: ScalarLike, q5dot: ScalarLike = -0.2, *, q3dot: ScalarLike = 1.0,
                         q4: ScalarLike = math.radians(10.0),
                         q5: ScalarLike = math.radians(150.0)) -> tuple[Config, Velocity]:
        """Font-Llagunes et al. 2012's pre-impact state (§5): posture from :meth:`place_crutch`, feet at rest,
        ``q̇ = [0, 0, q̇3, 0, q̇5, 0]`` with ``q̇3 = 1 rad/s`` by default. Angles in radians."""
        q5dot, q3dot = as_float("q5dot", q5dot, shape=()), as_float("q3dot", q3dot, shape=())
        q, qdot, flags = _pre_impact_state(self, *_angles(q3, q4, q5), q3dot, q5dot)
        return self._checked(q, *flags), qdot


def _angles(q3, q4, q5):
    """The posture's three given angles as checked scalar arrays."""
    return tuple(as_float(k, v, shape=()) for k, v in (("q3", q3), ("q4", q4), ("q5", q5)))


@stored("crutch_posture", PROGRAM_OPTIONS)  # called from Python: its program kept across processes
@eqx.filter_jit
def _place_crutch(model: CrutchWalker, q3, q4, q5):
    """:meth:`CrutchWalker.place_crutch` as a compiled function of arrays (eager calls reuse its program), with
    the flags its caller checks: the crutch reaches the ground, the root was found, the tip lands ahead of the feet."""
    guess = math.pi / 2 - (q3 + q4 + q5)
    q = jnp.stack([jnp.zeros_like(q3), jnp.zeros_like(q3), q3, q4, q5, guess])
    tree = model.tree()
    reaches = tree.point_position(q, "E")[1] < model.lengths[3]
    tol = root_tolerance(q.dtype)
    q, found = _solve_coordinate(model, q, "Q", 5, guess, jnp.zeros_like(q3), tol, tol)
    return q, reaches, found, tree.point_position(q, "Q")[0] > 0.0


@stored("crutch_pre_impact_state", PROGRAM_OPTIONS)
@eqx.filter_jit
def _pre_impact_state(model: CrutchWalker, q3, q4, q5, q3dot, q5dot):
    """:meth:`CrutchWalker.pre_impact_state` in one program: ``(q, q̇)`` and :func:`_place_crutch`'s flags."""
    q, *flags = _place_crutch(model, q3, q4, q5)
    zero = jnp.zeros_like(q[0])
    return q, jnp.stack([zero, zero, zero + q3dot, zero, zero + q5dot, zero]), tuple(flags)
