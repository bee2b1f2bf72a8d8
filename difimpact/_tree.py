"""Planar rigid-body trees: kinematics and dynamics derived from one description.

A tree has a floating base -- the planar position ``(q[0], q[1])`` of the origin of its root bodies --
and revolute joints. Body ``i`` has an absolute angle measured from the upward vertical, positive toward
``+x`` (the package's convention, see the documentation's conventions page),

.. math:: \\theta_i = \\theta_{p(i)} + s_i q_{k(i)} + o_i,

(``θ_{p} = 0`` for a root, ``s_i = ±1`` and the constant ``o_i`` are static; ``k(i) = -1`` welds the body to
its parent). A point fixed in body ``i`` at body coordinates ``(a, p)`` (``a`` along the segment axis
``e = (sin θ, cos θ)``, ``p`` along ``n = (cos θ, -sin θ)``) is at ``r_i + a e + p n`` where ``r_i`` is the
body's joint. Everything else follows from the Lagrangian ``T = ½ q̇ᵀ M q̇`` and
``V = g Σ m_i (y_i cos γ − x_i sin γ)``: on a ground sloping down toward ``+x`` at the angle ``γ`` the model frame
is the ground's (``x`` along it, ``y`` normal to it) and gravity is tilted, ``g (sin γ, −cos γ)`` (``γ = 0``: level
ground):

.. math:: M(q) = \\sum_i m_i J_i^T J_i + I_i J_{θ,i}^T J_{θ,i},\\qquad
          c(q, \\dot q) = \\dot M \\dot q - \\partial T / \\partial q + \\partial V / \\partial q,

so that the equations of motion read ``M q̈ + c = τ + Jᵀ F`` (seed 000, eq. 1).
"""

from typing import NamedTuple, Sequence

import equinox as eqx
import jax
import jax.numpy as jnp

from ._custom_types import Array, Config, Float, Jacobian, MassMatrix, Scalar, ScalarLike, Velocity
from ._validation import as_float, count, number, positive, stacked
from ._linalg import full_precision


class Body(NamedTuple):
    """Description of one body, consumed by :class:`PlanarTree` (parameters may be JAX arrays). Best
    written with keywords: ``Body(name="shank", parent="thigh", coord=3, mass=3.0, com=(-0.2, 0.0))``.

    **Arguments:**

    - `name`: the body's name.
    - `parent`: the parent body, by name or by index in the list of bodies; ``None`` (or ``-1``) for a root
      attached to the floating base. A parent precedes its children in the list.
    - `coord`: index of the joint coordinate in ``q`` (``2 ≤ coord < n``), ``None`` (or ``-1``) for a body
      welded to its parent.
    - `mass` [kg], `inertia` [kg m²]: mass and centroidal moment of inertia.
    - `com`: centre of mass in body coordinates ``(along, across)`` [m]: ``along`` the segment axis
      ``e = (sin θ, cos θ)``, so a segment hanging below its joint has a negative ``along``.
    - `attach`: joint position in the parent's body coordinates [m] (ignored for roots).
    - `sign`, `offset`: ``θ = θ_parent + sign q[coord] + offset`` [rad].
    """

    name: str
    parent: int | str | None
    coord: int | None
    mass: ScalarLike
    inertia: ScalarLike = 0.0
    com: tuple[ScalarLike, ScalarLike] = (0.0, 0.0)
    attach: tuple[ScalarLike, ScalarLike] = (0.0, 0.0)
    sign: float = 1.0
    offset: float = 0.0


class Point(NamedTuple):
    """A named point of a body: fixed at body coordinates ``local`` [m], or, with ``radius > 0`` [m], the
    lowest point of a circular arc (a rolling foot) of that radius centred at ``local``. `body` is the body's
    name or its index in the list of bodies."""

    name: str
    body: int | str
    local: tuple[ScalarLike, ScalarLike] = (0.0, 0.0)
    radius: ScalarLike = 0.0


def _index(names: list[str], ref, what: str):
    """Index of a body given by name (``None`` → ``-1``); anything else is returned as given."""
    if ref is None:
        return -1
    if isinstance(ref, str):
        if ref not in names:
            raise ValueError(f"{what}: unknown body {ref!r}; the bodies before it are {names}.")
        return names.index(ref)
    return ref


def _by_index(bodies, points):
    """The description with parents and point bodies given by name (or ``None``) replaced by indices."""
    if not isinstance(bodies, Sequence) or not isinstance(points, Sequence):
        return bodies, points
    names = [b.name if isinstance(b, Body) else None for b in bodies]
    bodies = [b._replace(parent=_index(names[:i], b.parent, f"body {b.name!r}: parent"),
                         coord=-1 if b.coord is None else b.coord) if isinstance(b, Body) else b
              for i, b in enumerate(bodies)]
    points = [p._replace(body=_index(names, p.body, f"point {p.name!r}")) if isinstance(p, Point) else p
              for p in points]
    return bodies, points


def _check_types(n, bodies, points) -> None:
    """Types of a tree description: ``n``, sequences of :class:`Body` and :class:`Point`, string names."""
    count("n", n, minimum=2)
    for what, items, cls, least in (("bodies", bodies, Body, 1), ("points", points, Point, 0)):
        if isinstance(items, (str, cls)) or not isinstance(items, Sequence) or len(items) < least:
            raise TypeError(f"`{what}` must be a sequence of {cls.__name__}{' (one or more)' * least}, got {items!r}.")
        for i, item in enumerate(items):
            if not isinstance(item, cls) or not isinstance(item.name, str):
                raise TypeError(f"`{what}[{i}]` must be a {cls.__name__}(...) with a string name, got {item!r}.")


def _check_indices(n, bodies, points) -> None:
    """Parents, coordinates and point bodies by index, unique point names, static ``sign`` and ``offset``."""
    for i, b in enumerate(bodies):
        if count(f"bodies[{i}].parent", b.parent, minimum=-1) >= i:
            raise ValueError(f"body {b.name!r}: parent must precede it (got {b.parent}).")
        if not (count(f"bodies[{i}].coord", b.coord, minimum=-1) == -1 or 2 <= b.coord < n):
            raise ValueError(f"body {b.name!r}: coord {b.coord} outside 2..{n - 1}.")
        number(f"bodies[{i}].sign", b.sign)
        number(f"bodies[{i}].offset", b.offset)
    names = [p.name for p in points]
    if len(set(names)) != len(names):
        raise ValueError(f"point names must be unique, got {names}.")
    for j, p in enumerate(points):
        if count(f"points[{j}].body", p.body, minimum=0) >= len(bodies):
            raise ValueError(f"point {p.name!r}: body {p.body} outside 0..{len(bodies) - 1}.")


def _rotate(trig, local):
    """``a e + p n`` for body coordinates ``local = (a, p)``, with ``e = (sin θ, cos θ)``, ``n = (cos θ, −sin θ)``
    and ``trig = (sin θ, cos θ)``."""
    (s, c), (a, p) = trig, local
    return jnp.stack([a * s + p * c, a * c - p * s])


class PlanarTree(eqx.Module):
    """Kinematics and dynamics of a planar tree of rigid bodies on a floating base (see module docstring).

    Parameters (masses, inertias, offsets, radii, ``g``) are array leaves; the topology is static.
    Build one from :class:`Body` and :class:`Point` lists with :meth:`PlanarTree.build`.
    """

    mass: Float[Array, " nb"]
    inertia: Float[Array, " nb"]
    com: Float[Array, "nb 2"]
    attach: Float[Array, "nb 2"]
    point_local: Float[Array, "np 2"]
    point_radius: Float[Array, " np"]
    g: Scalar
    slope: Scalar
    n: int = eqx.field(static=True)
    body_names: tuple[str, ...] = eqx.field(static=True)
    parent: tuple[int, ...] = eqx.field(static=True)
    coord: tuple[int, ...] = eqx.field(static=True)
    sign: tuple[float, ...] = eqx.field(static=True)
    offset: tuple[float, ...] = eqx.field(static=True)
    point_names: tuple[str, ...] = eqx.field(static=True)
    point_body: tuple[int, ...] = eqx.field(static=True)

    @classmethod
    def build(cls, n: int, bodies: Sequence[Body], points: Sequence[Point], g: ScalarLike = 9.81,
              slope: ScalarLike = 0.0) -> "PlanarTree":
        """Assemble a tree with ``n ≥ 2`` generalised coordinates (``q[0:2]`` the base position) from its
        `bodies` (at least one, parents first) and named `points`; `g` [m/s²] acts along ``−y`` tilted by the
        ground slope ``γ`` = `slope` (radians, ground down toward ``+x``; module docstring)."""
        _check_types(n, bodies, points)
        bodies, points = _by_index(bodies, points)
        _check_indices(n, bodies, points)
        names = [p.name for p in points]
        return cls(
            mass=positive("Body.mass", stacked("Body.mass", [b.mass for b in bodies], ()), allow_zero=True),
            inertia=positive("Body.inertia", stacked("Body.inertia", [b.inertia for b in bodies], ()), allow_zero=True),
            com=as_float("Body.com", stacked("Body.com", [b.com for b in bodies], (2,))),
            attach=as_float("Body.attach", stacked("Body.attach", [b.attach for b in bodies], (2,))),
            point_local=as_float("Point.local", stacked("Point.local", [p.local for p in points], (2,))),
            point_radius=positive("Point.radius", stacked("Point.radius", [p.radius for p in points], ()),
                                  allow_zero=True),
            g=positive("g", g, allow_zero=True, shape=()),
            slope=as_float("slope", slope, shape=()),
            n=n,
            body_names=tuple(b.name for b in bodies),
            parent=tuple(b.parent for b in bodies),
            coord=tuple(b.coord for b in bodies),
            sign=tuple(float(b.sign) for b in bodies),
            offset=tuple(float(b.offset) for b in bodies),
            point_names=tuple(names),
            point_body=tuple(p.body for p in points),
        )

    # -- kinematics -------------------------------------------------------------------------------
    def frames(self, q: Config) -> tuple[Float[Array, "nb 2"], Float[Array, " nb"]]:
        """Joint positions (body origins) and absolute angles of every body."""
        return self._frames(q)[:2]

    @full_precision
    def _frames(self, q: Config) -> tuple[Float[Array, "nb 2"], Float[Array, " nb"], Float[Array, "nb 2"]]:
        """Origins, angles and ``(sin θ, cos θ)`` of every body. The sines and cosines are taken once, on the
        stacked angles: written per body inside the later stacks, XLA recomputes them in every fused consumer
        under ``vmap`` (several times the cost of the rest of the mass matrix)."""
        offsets = []
        for i, par in enumerate(self.parent):
            offsets.append(self.offset[i] + (0.0 if par < 0 else offsets[par]))
        # θ = (∂θ/∂q) q + o as one product: reading q entry by entry transposes into one scatter per body in
        # reverse mode (a tenth of jax.grad of the frictional map).
        angles = jnp.asarray(self._angle_rows(), q.dtype) @ q + jnp.asarray(offsets, q.dtype)
        trig = jnp.stack([jnp.sin(angles), jnp.cos(angles)], axis=1)
        origins = []
        for i, par in enumerate(self.parent):
            origins.append(q[:2] if par < 0 else origins[par] + _rotate(trig[par], self.attach[i]))
        return jnp.stack(origins), angles, trig

    def body_point(self, q: Config, body: int, local: Float[Array, " 2"]) -> Float[Array, " 2"]:
        """World position of the point at body coordinates ``local`` of body ``body``."""
        origins, _, trig = self._frames(q)
        return origins[body] + _rotate(trig[body], local)

    def com_positions(self, q: Config) -> Float[Array, "nb 2"]:
        origins, _, trig = self._frames(q)
        return origins + jax.vmap(_rotate)(trig, self.com)

    def point_index(self, name: str) -> int:
        try:
            return self.point_names.index(name)
        except ValueError:
            raise ValueError(f"unknown point {name!r}; this model has {list(self.point_names)}.") from None

    def point_position(self, q: Config, name: str) -> Float[Array, " 2"]:
        """Position of a named point; for an arc, its lowest point (the contact point on flat ground)."""
        k = self.point_index(name)
        centre = self.body_point(q, self.point_body[k], self.point_local[k])
        return centre - jnp.stack([jnp.zeros_like(centre[0]), self.point_radius[k]])

    def point_jacobian(self, q: Config, name: str) -> Jacobian:
        """``(2, n)`` Jacobian of the *material* point currently at :meth:`point_position`.

        For an arc the material point is the one touching the ground now, so its velocity is that of
        the arc centre plus ``ω × (0, -R)``: zero when the foot rolls without slipping.
        """
        k = self.point_index(name)
        origins, _ = self.frames(q)
        return self._jacobian(origins, self.point_body[k], self.point_position(q, name))

    def _ancestry(self, body: int) -> list[int]:
        chain = [body]
        while self.parent[chain[-1]] >= 0:
            chain.append(self.parent[chain[-1]])
        return chain

    def _jacobian(self, origins: Float[Array, "nb 2"], body: int, p: Float[Array, " 2"]) -> Jacobian:
        """Closed-form Jacobian of the material point of ``body`` now at world position ``p``: the base
        coordinates translate it, the joint columns are :meth:`_joint_columns`."""
        one, zero = jnp.ones_like(p[0]), jnp.zeros_like(p[0])
        cols = self._joint_columns(origins, body, p)
        base = [jnp.stack([one, zero]), jnp.stack([zero, one])]
        return jnp.stack(base + [cols.get(k, jnp.zeros_like(p)) for k in range(2, self.n)], axis=1)

    def _joint_columns(self, origins: Float[Array, "nb 2"], body: int, p: Float[Array, " 2"]) -> dict:
        """The nonzero joint columns ``{k: ∂p/∂q_k}`` of the Jacobian of the material point of ``body`` at ``p``.

        A joint coordinate ``k`` turning body ``b`` (an ancestor of ``body`` or itself) by ``s_b dq_k`` rotates
        the point about the joint ``r_b``. With the clockwise angle convention ``∂e/∂θ = (e_y, −e_x)``, so
        column ``k`` is ``s_b ⊥(p − r_b)`` with ``⊥(a, b) = (b, −a)``.
        """
        cols = {}
        for b in self._ancestry(body):
            k = self.coord[b]
            if k >= 0:
                d = p - origins[b]
                col = self.sign[b] * jnp.stack([d[1], -d[0]])
                cols[k] = cols[k] + col if k in cols else col
        return cols

    def _angle_rows(self) -> list[list[float]]:
        rows = []
        for i in range(len(self.parent)):
            row = [0.0] * self.n
            for b in self._ancestry(i):
                if self.coord[b] >= 0:
                    row[self.coord[b]] += self.sign[b]
            rows.append(row)
        return rows

    def angle_jacobian(self) -> Float[Array, "nb n"]:
        """``∂θ_i/∂q`` (constant: angles are affine in ``q``)."""
        return jnp.asarray(self._angle_rows(), dtype=self.mass.dtype)

    # -- dynamics ---------------------------------------------------------------------------------
    def com_jacobians(self, q: Config) -> tuple[Float[Array, "nb 2 n"], Float[Array, "nb n"]]:
        """Jacobians of every centre of mass ``(nb, 2, n)`` and of every body angle ``(nb, n)``."""
        origins, _ = self.frames(q)
        coms = self.com_positions(q)
        jc = jnp.stack([self._jacobian(origins, i, coms[i]) for i in range(len(self.parent))])
        return jc, self.angle_jacobian()

    def mass_matrix(self, q: Config) -> MassMatrix:
        """``M = Σ m_i J_iᵀ J_i + I_i J_θ,iᵀ J_θ,i`` (module docstring), entry by entry from the nonzero
        columns of the closed-form centre-of-mass Jacobians (:meth:`_joint_columns`; the base columns are the
        identity) and the constant angle Jacobian. Under ``vmap`` each entry is then elementwise arithmetic on
        batch vectors; an ``einsum`` over stacked ``(nb, 2, n)`` Jacobians is a batch of tiny products, which XLA
        runs slowly on CPU."""
        origins, _, _ = self._frames(q)
        coms = self.com_positions(q)
        rows = self._angle_rows()
        upper = {}  # (k, l) with k <= l

        def add(k, l, value):
            upper[k, l] = upper[k, l] + value if (k, l) in upper else value

        for b in range(len(self.parent)):
            m, inertia = self.mass[b], self.inertia[b]
            cols = self._joint_columns(origins, b, coms[b])
            add(0, 0, m)
            add(1, 1, m)
            for k, ck in cols.items():
                add(0, k, m * ck[0])
                add(1, k, m * ck[1])
                for l, cl in cols.items():
                    if k <= l:
                        add(k, l, m * (ck[0] * cl[0] + ck[1] * cl[1]) + inertia * (rows[b][k] * rows[b][l]))
        zero = jnp.zeros_like(self.mass[0])
        return jnp.stack([jnp.stack([upper.get((min(k, l), max(k, l)), zero) for l in range(self.n)])
                          for k in range(self.n)])

    @full_precision
    def kinetic_energy(self, q: Config, qdot: Velocity) -> Scalar:
        return 0.5 * qdot @ self.mass_matrix(q) @ qdot

    def gravity_vector(self) -> Float[Array, " 2"]:
        """Gravity in the model frame, ``g (sin γ, −cos γ)``."""
        return self.g * jnp.stack([jnp.sin(self.slope), -jnp.cos(self.slope)])

    @full_precision
    def potential_energy(self, q: Config) -> Scalar:
        return -jnp.sum(self.mass * (self.com_positions(q) @ self.gravity_vector()))

    def gravity(self, q: Config) -> Velocity:
        """Generalised gravity force ``∂V/∂q``."""
        return jax.grad(self.potential_energy)(q)

    def bias(self, q: Config, qdot: Velocity) -> Velocity:
        """Bias forces ``c(q, q̇) = Ṁq̇ − ∂T/∂q + ∂V/∂q`` (Coriolis, centrifugal and gravity)."""
        return self.mass_and_bias(q, qdot)[1]

    @full_precision
    def mass_and_bias(self, q: Config, qdot: Velocity) -> tuple[MassMatrix, Velocity]:
        """``M(q)`` and ``c(q, q̇)`` together, from the centre-of-mass and angle Jacobians (d'Alembert:
        ``c = Σ m_i J_iᵀ J̇_i q̇ + I_i J_θ,iᵀ J̇_θ,i q̇ + ∂V/∂q``, equal to the Lagrangian form above) with
        forward-mode derivatives only: about a third of the compile cost of nested reverse mode, which matters
        in an ODE right-hand side traced many times per solve."""

        def kinematics(qq):
            return self.com_positions(qq), self.frames(qq)[1]

        _, (ac, at) = jax.jvp(lambda qq: jax.jvp(kinematics, (qq,), (qdot,))[1], (q,), (qdot,))
        jc, jt = self.com_jacobians(q)
        c = (jnp.einsum("b,bin,bi->n", self.mass, jc, ac) + jnp.einsum("b,bn,b->n", self.inertia, jt, at)
             - jnp.einsum("b,bin,i->n", self.mass, jc, self.gravity_vector()))
        return self.mass_matrix(q), c
