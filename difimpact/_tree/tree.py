"""The planar tree: a floating base and revolute joints, its kinematics (frames, points, Jacobians) and its
dynamics (mass matrix, bias, energies) derived from one description (see the package docstring)."""

from typing import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._custom_types import Array, Config, Float, Jacobian, MassMatrix, Scalar, ScalarLike, Velocity
from .._linalg import full_precision
from .._validation import as_float, positive, real, stacked
from .description import _by_index, _check_indices, _check_types, Body, Point
from .topology import _apply, _Frames, _perp, _rotate, _Topology, _topology
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
        return cls._assemble(n, bodies, points, g, slope, checked=True)

    @classmethod
    def _assemble(cls, n, bodies, points, g=9.81, slope=0.0, *, checked: bool) -> "PlanarTree":
        """:meth:`build`; with ``checked=False`` the parameter values (finite, non-negative) are taken as valid
        and only their dtypes and shapes are checked: the built-in models, whose constructors validate every
        parameter, rebuild their tree at each method call, and the value checks would be staged again there."""
        _check_types(n, bodies, points)
        bodies, points = _by_index(bodies, points)
        _check_indices(n, bodies, points)

        def param(name, x, nonneg, shape=None):
            if not checked:
                return real(name, x, shape=shape)
            return positive(name, x, allow_zero=True, shape=shape) if nonneg else as_float(name, x, shape=shape)

        return cls(
            mass=param("Body.mass", stacked("Body.mass", [b.mass for b in bodies], ()), True),
            inertia=param("Body.inertia", stacked("Body.inertia", [b.inertia for b in bodies], ()), True),
            com=param("Body.com", stacked("Body.com", [b.com for b in bodies], (2,)), False),
            attach=param("Body.attach", stacked("Body.attach", [b.attach for b in bodies], (2,)), False),
            point_local=param("Point.local", stacked("Point.local", [p.local for p in points], (2,)), False),
            point_radius=param("Point.radius", stacked("Point.radius", [p.radius for p in points], ()), True),
            g=param("g", g, True, shape=()),
            slope=param("slope", slope, False, shape=()),
            n=n,
            body_names=tuple(b.name for b in bodies),
            parent=tuple(b.parent for b in bodies),
            coord=tuple(b.coord for b in bodies),
            sign=tuple(float(b.sign) for b in bodies),
            offset=tuple(float(b.offset) for b in bodies),
            point_names=tuple(p.name for p in points),
            point_body=tuple(p.body for p in points),
        )

    # -- topology (static) ------------------------------------------------------------------------
    def _topology(self) -> _Topology:
        return _topology(self.n, self.parent, self.coord, self.sign)

    def _angle_rows(self) -> np.ndarray:
        return self._topology().rows

    def angle_jacobian(self) -> Float[Array, "nb n"]:
        """``∂θ_i/∂q`` (constant: angles are affine in ``q``)."""
        return jnp.asarray(self._angle_rows(), dtype=self.mass.dtype)

    # -- kinematics -------------------------------------------------------------------------------
    def frames(self, q: Config) -> tuple[Float[Array, "nb 2"], Float[Array, " nb"]]:
        """Joint positions (body origins) and absolute angles of every body."""
        f = self._frames(q)
        return jnp.stack([q[0] + f.rx, q[1] + f.ry], axis=1), f.theta

    @full_precision
    def _frames(self, q: Config) -> _Frames:
        """Every body at once, as vectors over the bodies (a structure of arrays): angles ``θ = (∂θ/∂q) q + o``,
        their sines and cosines, the links ``u_i`` from the parent's joint to joint ``i`` (zero for a root) and
        the joints relative to the base, ``r_i − (q_0, q_1) = Σ_{j ∈ chain(i)} u_j``. Sums over chains and
        subtrees are products with constant matrices; XLA fuses the rest into a few loops, also under ``vmap``.
        """
        top = self._topology()
        offsets = []
        for i, par in enumerate(self.parent):
            offsets.append(self.offset[i] + (0.0 if par < 0 else offsets[par]))
        theta = _apply(top.rows, q) + jnp.asarray(offsets, q.dtype)
        sin, cos = jnp.sin(theta), jnp.cos(theta)
        linked = jnp.asarray(top.linked, q.dtype)
        ux, uy = _rotate(sin[top.parents], cos[top.parents], self.attach[:, 0], self.attach[:, 1])
        ux, uy = linked * ux, linked * uy
        return _Frames(theta, sin, cos, ux, uy, _apply(top.chain, ux), _apply(top.chain, uy))

    def body_point(self, q: Config, body: int, local: Float[Array, " 2"]) -> Float[Array, " 2"]:
        """World position of the point at body coordinates ``local`` of body ``body``."""
        f = self._frames(q)
        return self._joint(q, f, body) + jnp.stack(_rotate(f.sin[body], f.cos[body], *local))

    def _joint(self, q: Config, f: _Frames, body: int) -> Float[Array, " 2"]:
        """World position of the joint (origin) of ``body``."""
        return q[:2] + jnp.stack([f.rx[body], f.ry[body]])

    def com_positions(self, q: Config) -> Float[Array, "nb 2"]:
        f = self._frames(q)
        return self._coms(q, f, *self._com_arms(f))

    def _coms(self, q: Config, f: _Frames, wx, wy) -> Float[Array, "nb 2"]:
        """World positions of the centres of mass, from their arms ``(wx, wy)`` (:meth:`_com_arms`)."""
        return jnp.stack([q[0] + f.rx + wx, q[1] + f.ry + wy], axis=1)

    def _com_arms(self, f: _Frames):
        """The centres of mass relative to their joints, ``(x, y)`` over the bodies."""
        return _rotate(f.sin, f.cos, self.com[:, 0], self.com[:, 1])

    def point_index(self, name: str) -> int:
        try:
            return self.point_names.index(name)
        except ValueError:
            raise ValueError(f"unknown point {name!r}; this model has {list(self.point_names)}.") from None

    def _point(self, q: Config, f: _Frames, name: str) -> tuple[int, Float[Array, " 2"], Float[Array, " 2"]]:
        """The body of a named point, the vector from its joint to the point (to the arc's centre for an arc)
        and the point's :meth:`point_position`."""
        k = self.point_index(name)
        body, radius = self.point_body[k], self.point_radius[k]
        arm = jnp.stack(_rotate(f.sin[body], f.cos[body], *self.point_local[k]))
        centre = self._joint(q, f, body) + arm
        return body, arm, centre - jnp.stack([jnp.zeros_like(radius), radius])

    def point_position(self, q: Config, name: str) -> Float[Array, " 2"]:
        """Position of a named point; for an arc, its lowest point (the contact point on flat ground)."""
        return self._point(q, self._frames(q), name)[2]

    def point_jacobian(self, q: Config, name: str) -> Jacobian:
        """``(2, n)`` Jacobian of the *material* point currently at :meth:`point_position`.

        For an arc the material point is the one touching the ground now, so its velocity is that of
        the arc centre plus ``ω × (0, -R)``: zero when the foot rolls without slipping.
        """
        f = self._frames(q)
        body, _, p = self._point(q, f, name)
        return self._jacobian(q, f, body, p)

    @full_precision
    def point_kinematics(self, q: Config, qdot: Velocity, name: str) -> tuple[Float[Array, " 2"], Jacobian,
                                                                             Float[Array, " 2"]]:
        r"""Position ``p`` (:meth:`point_position`), Jacobian ``J`` (:meth:`point_jacobian`) and ``J̇ q̇`` of a
        named point, from one evaluation of the frames. ``J̇ q̇`` is the time derivative of ``J(q(t))`` along
        ``q̇`` applied to ``q̇`` (the acceleration of the material point at ``q̈ = 0``):

        $$
        \dot J \dot q = \sum_{j ∈ chain} Ω_j\, ⊥(\dot p - \dot r_j) = ω\, ⊥\dot p -
        \sum_{j ∈ chain} Ω_j\, ⊥\dot r_j,
        $$

        ``Ω_j = s_j q̇_{k(j)}`` the joint rates, ``ω = Σ Ω_j`` the body's angular velocity, ``ṗ`` the velocity of
        ``p`` (of the arc's centre for an arc) and ``ṙ_j`` those of the joints (:meth:`_velocities`)."""
        f = self._frames(q)
        body, arm, p = self._point(q, f, name)
        omega, relative, vx, vy = self._velocities(qdot, f)
        velocity = jnp.stack([vx[body], vy[body]]) + omega[body] * _perp(arm)
        chain = self._topology().chain[body]
        rates = jnp.stack([_apply(chain, relative * vx), _apply(chain, relative * vy)])  # Σ_j Ω_j ṙ_j
        return p, self._jacobian(q, f, body, p), omega[body] * _perp(velocity) - _perp(rates)

    def _jacobian(self, q: Config, f: _Frames, body: int, p: Float[Array, " 2"]) -> Jacobian:
        """Closed-form Jacobian of the material point of ``body`` now at world position ``p``: the base
        coordinates translate it, and coordinate ``k`` turning body ``j`` on its chain rotates it about the joint
        ``r_j``: column ``k`` is ``Σ_j s_j ⊥(p − r_j)`` with ``⊥(a, b) = (b, −a)``, over those bodies."""
        top = self._topology()
        turns = top.chain[body][:, None] * top.joint  # (nb, n): s_j where q_k turns body j of the chain
        x, y = p[0] - q[0], p[1] - q[1]
        base = np.zeros((2, self.n))
        base[0, 0] = base[1, 1] = 1.0
        jx = y * jnp.asarray(turns.sum(0), p.dtype) - _apply(turns.T, f.ry)
        jy = _apply(turns.T, f.rx) - x * jnp.asarray(turns.sum(0), p.dtype)
        return jnp.asarray(base, p.dtype) + jnp.stack([jx, jy])

    def _velocities(self, qdot: Velocity, f: _Frames):
        """Absolute angular velocities ``ω = (∂θ/∂q) q̇``, joint rates ``Ω = s_j q̇_{k(j)}`` and joint velocities
        ``ṙ_i = (q̇_0, q̇_1) + Σ_{j ∈ chain(i)} ω_{p(j)} ⊥u_j`` (each link turns with its parent)."""
        top = self._topology()
        omega = _apply(top.rows, qdot)
        turning = omega[top.parents]
        return (omega, _apply(top.joint, qdot), qdot[0] + _apply(top.chain, turning * f.uy),
                qdot[1] - _apply(top.chain, turning * f.ux))

    # -- dynamics ---------------------------------------------------------------------------------
    def com_jacobians(self, q: Config) -> tuple[Float[Array, "nb 2 n"], Float[Array, "nb n"]]:
        """Jacobians of every centre of mass ``(nb, 2, n)`` and of every body angle ``(nb, n)``."""
        f = self._frames(q)
        coms = self._coms(q, f, *self._com_arms(f))
        return (jnp.stack([self._jacobian(q, f, i, coms[i]) for i in range(len(self.parent))]),
                self.angle_jacobian())

    def _mass_matrix(self, f: _Frames, wx, wy) -> MassMatrix:
        """``M`` from the subtrees' mass ``m_S``, first moment ``h_S = Σ m_b (c_b − r_j)`` and second moment
        ``G_S = Σ I_b + m_b |c_b − r_j|²`` about each joint ``j`` (sums over the subtree of ``j``): for a
        coordinate pair turning ``j`` and ``j'`` with ``j`` on the chain of ``j'``, the bodies both turn are the
        subtree of ``j'``, and ``Σ I_b + m_b (c_b − r_j)·(c_b − r_{j'}) = G_S(j') + (r_{j'} − r_j)·h_S(j')``; a base
        coordinate with a joint coordinate gives ``±⊥h_S``, the two base coordinates the total mass (the subtree
        sums of the composite-rigid-body algorithm, Featherstone 2008, *Rigid Body Dynamics Algorithms*, ch. 6)."""
        top = self._topology()
        subtree = top.chain.T
        m = self.mass
        # Moments about the base (coordinates relative to it stay of the size of the model), then about each joint.
        mass = _apply(subtree, m)
        px, py = _apply(subtree, m * (f.rx + wx)), _apply(subtree, m * (f.ry + wy))
        second = _apply(subtree, self.inertia + m * ((f.rx + wx) ** 2 + (f.ry + wy) ** 2))
        hx, hy = px - mass * f.rx, py - mass * f.ry
        g = second - 2 * (f.rx * px + f.ry * py) + mass * (f.rx ** 2 + f.ry ** 2)
        j, i = top.upper, top.lower
        pair = g[i] + (f.rx[i] - f.rx[j]) * hx[i] + (f.ry[i] - f.ry[j]) * hy[i]
        terms = jnp.concatenate([pair, hy, -hx, jnp.sum(m)[None]])
        return _apply(top.place, terms)[top.full].reshape(self.n, self.n)

    def mass_matrix(self, q: Config) -> MassMatrix:
        """``M = Σ m_i J_iᵀ J_i + I_i J_θ,iᵀ J_θ,i`` (module docstring), entry by entry from moments of the
        subtrees (:meth:`_mass_matrix`; exactly symmetric)."""
        f = self._frames(q)
        return self._mass_matrix(f, *self._com_arms(f))

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
        """``M(q)`` and ``c(q, q̇)`` together (d'Alembert: ``c = Σ m_i J_iᵀ (a_i − g) + I_i J_θ,iᵀ J̇_θ,i q̇``, equal
        to the Lagrangian form above). The angles are affine in ``q``, so ``J̇_θ = 0``; ``a_i = J̇_i q̇``, the
        acceleration of centre of mass ``i`` at ``q̈ = 0``, is :meth:`point_kinematics`'s closed form, and the
        generalised force of the forces ``f_i = m_i (a_i − g)`` on coordinate ``k`` turning body ``j`` is the
        moment about ``r_j`` of those on its subtree, ``Σ ⊥(c_i − r_j)·f_i``."""
        top = self._topology()
        f = self._frames(q)
        wx, wy = self._com_arms(f)
        omega, relative, vx, vy = self._velocities(qdot, f)
        cx, cy = vx + omega * wy, vy - omega * wx  # centre-of-mass velocities
        gravity = self.gravity_vector()
        ax = omega * cy - _apply(top.chain, relative * vy) - gravity[0]
        ay = -omega * cx + _apply(top.chain, relative * vx) - gravity[1]
        fx, fy = self.mass * ax, self.mass * ay
        subtree = top.chain.T
        Fx, Fy = _apply(subtree, fx), _apply(subtree, fy)
        moment = _apply(subtree, (f.ry + wy) * fx - (f.rx + wx) * fy) - (f.ry * Fx - f.rx * Fy)
        c = _apply(top.joint.T, moment) + jnp.stack([jnp.sum(fx), jnp.sum(fy)] + [jnp.zeros_like(fx[0])] * (
            self.n - 2))
        return self._mass_matrix(f, wx, wy), c

