"""The abstract planar model: a physical parametrisation that builds a :class:`PlanarTree`."""

import abc

import equinox as eqx
import jax.numpy as jnp
import optimistix as optx

from .._custom_types import Array, Bool, Config, Float, Jacobian, MassMatrix, Scalar, Velocity
from .._linalg import full_precision, solve_spd
from .._tree import PlanarTree
from .._validation import as_float, check, check_finite, count, finite_result, tolerance


class AbstractPlanarModel(eqx.Module):
    """Base class of every planar model.

    Subclasses hold physical parameters as array fields (leaves for ``jax.grad``/``vmap``) and implement
    :meth:`tree`, which assembles the :class:`~difimpact.PlanarTree` from them. Every method below takes a
    configuration ``q`` of shape ``(n,)`` (``n = len(coordinate_names)``) in radians and metres.
    """

    coordinate_names: eqx.AbstractClassVar[tuple[str, ...]]

    @abc.abstractmethod
    def tree(self) -> PlanarTree:
        """The rigid-body tree of this model with its current parameters."""

    @property
    def n(self) -> int:
        return len(self.coordinate_names)

    @property
    def point_names(self) -> tuple[str, ...]:
        return self.tree().point_names

    def _q(self, q, name="q") -> Config:
        return as_float(name, q, shape=(self.n,))

    def _shaped(self, q, name="q") -> Config:
        """``q`` as a float array of shape ``(n,)``; its finiteness is checked on the results
        (:func:`check_finite`), so that the methods called on one ``q`` share their subexpressions."""
        return as_float(name, q, shape=(self.n,), finite=False)

    def _finite(self, what: str, value, inputs: str = "`q`"):
        """``value`` computed from finite inputs, checked for overflow (e.g. velocities of 1e200)."""
        return finite_result(f"{type(self).__name__}.{what}", value, f"{inputs} or the model's parameters")

    def mass_matrix(self, q: Config) -> MassMatrix:
        """Mass matrix ``M(q)``, symmetric positive (semi-)definite, ``(n, n)``."""
        q = self._shaped(q)
        return self._finite("mass_matrix", check_finite(self.tree().mass_matrix(q), q=q))

    def bias(self, q: Config, qdot: Velocity) -> Velocity:
        """``c(q, q̇)``: Coriolis, centrifugal and gravity terms of ``M q̈ + c = τ + Jᵀ F``."""
        q, qdot = self._shaped(q), self._shaped(qdot, "qdot")
        return self._finite("bias", check_finite(self.tree().bias(q, qdot), q=q, qdot=qdot), "`q`, `qdot`")

    def gravity(self, q: Config) -> Velocity:
        q = self._shaped(q)
        return self._finite("gravity", check_finite(self.tree().gravity(q), q=q))

    def kinetic_energy(self, q: Config, qdot: Velocity) -> Scalar:
        q, qdot = self._shaped(q), self._shaped(qdot, "qdot")
        return self._finite("kinetic_energy", check_finite(self.tree().kinetic_energy(q, qdot), q=q, qdot=qdot),
                            "`q`, `qdot`")

    def potential_energy(self, q: Config) -> Scalar:
        q = self._shaped(q)
        return self._finite("potential_energy", check_finite(self.tree().potential_energy(q), q=q))

    def energy(self, q: Config, qdot: Velocity) -> Scalar:
        """Total mechanical energy ``T + V``."""
        return self.kinetic_energy(q, qdot) + self.potential_energy(q)

    def point(self, q: Config, name: str) -> Float[Array, " 2"]:
        """Position ``(x, y)`` of a named point (for a foot arc: its lowest point)."""
        q = self._shaped(q)
        return check_finite(self.tree().point_position(q, name), q=q)

    def point_jacobian(self, q: Config, name: str) -> Jacobian:
        """``(2, n)`` Jacobian of the material point ``name``: its velocity is ``J q̇``."""
        q = self._shaped(q)
        return check_finite(self.tree().point_jacobian(q, name), q=q)

    @full_precision
    def point_velocity(self, q: Config, qdot: Velocity, name: str) -> Float[Array, " 2"]:
        qdot = self._shaped(qdot, "qdot")
        return check_finite(self.point_jacobian(q, name) @ qdot, qdot=qdot)

    def contact_jacobian(self, q: Config, name: str) -> Jacobian:
        """Ground-contact Jacobian ``[A_n; A_t]`` of point ``name``: row 0 the normal (+y), row 1 the
        tangential (+x) direction (Font-Llagunes et al. 2012, eq. 4)."""
        return self.point_jacobian(q, name)[::-1]

    def accelerations(self, q: Config, qdot: Velocity, tau: Velocity | None = None) -> Velocity:
        """Free-motion accelerations ``q̈ = M⁻¹ (τ − c)`` (Font-Llagunes et al. 2012, eq. 1 with no contact), by the
        unrolled ``LDLᵀ`` of :func:`~difimpact._linalg.solve_spd`; a singular ``M`` (a massless segment) raises."""
        rhs = -self.bias(q, qdot) if tau is None else self._q(tau, "tau") - self.bias(q, qdot)
        return self._finite("accelerations", solve_spd(self.mass_matrix(q), rhs, "M"), "`q`, `qdot`, `tau`")

    def solve_coordinate(
        self, q: Config, point: str, coord: int, guess: Scalar, *, height=0.0, rtol=None, atol=None
    ) -> Config:
        """Return ``q`` with ``q[coord]`` solved so that ``point`` is at ``height`` (ground by default).

        A Newton root find (optimistix) started from ``guess``; its derivative with respect to the
        other coordinates and to the model parameters comes from the implicit function theorem, not from
        unrolled iterations. Fails with a clear error if no root is found. `rtol` and `atol` default to
        ``max(1e-12, 64 ε)`` of ``q``'s dtype (``1e-12`` in float64, ``7.6e-6`` in float32, where ``1e-12``
        cannot be met); ``0 < rtol < 1``, ``atol > 0``. `coord` is an index into ``q``.
        """
        q = self._q(q)
        tree = self.tree()
        tree.point_index(point)  # raises on an unknown name
        coord = count("coord", coord, minimum=0)
        if coord >= self.n:
            raise ValueError(f"`coord` must be a coordinate index in 0..{self.n - 1}, got {coord}.")
        y = as_float("height", height, shape=())
        default = root_tolerance(q.dtype)
        rtol, atol = (tolerance(name, default if tol is None else tol, below=1.0 if name == "rtol" else None)
                      for name, tol in (("rtol", rtol), ("atol", atol)))
        q, found = _solve_coordinate(self, q, point, coord, jnp.asarray(guess, q.dtype), y, rtol, atol)
        return check(q, ~found, self._unplaced(point, coord, height))

    def _unplaced(self, point: str, coord: int, height) -> str:
        return (f"could not place point {point!r} at height {height} by moving coordinate "
                f"{self.coordinate_names[coord]!r} (no root).")


class AbstractSteppingModel(AbstractPlanarModel):
    """A model that steps: a trailing and a leading foot on the ground, a :meth:`step_length` between them (the
    walkers, the bipeds and the human). A marker for what needs a step length, such as
    :func:`~difimpact.loss_per_distance`."""

    @abc.abstractmethod
    def step_length(self, q: Config) -> Scalar:
        """The step length ``L(q)`` [m] along the ground."""


def feet_apart(model: AbstractPlanarModel, q: Config) -> Scalar:
    """``x`` of the point ``swing_foot`` minus ``x`` of ``stance_foot``: the step of a model with point feet."""
    tree, q = model.tree(), model._q(q)
    return tree.point_position(q, "swing_foot")[0] - tree.point_position(q, "stance_foot")[0]


def root_tolerance(dtype) -> float:
    """The default tolerance of :meth:`AbstractPlanarModel.solve_coordinate`: ``max(1e-12, 64 ε)``."""
    return max(1e-12, 64 * float(jnp.finfo(dtype).eps))


@eqx.filter_jit
def _solve_coordinate(model: AbstractPlanarModel, q: Config, point: str, coord: int, guess: Scalar, y: Scalar,
                      rtol, atol) -> tuple[Config, Bool[Array, ""]]:
    """:meth:`AbstractPlanarModel.solve_coordinate` (a compiled function of arrays) and whether it found the
    root; the caller checks the flag, so that concrete values raise ``ValueError``."""
    tree = model.tree()

    def residual(x, args):
        return tree.point_position(q.at[coord].set(x), point)[1] - y

    sol = optx.root_find(residual, optx.Newton(rtol=rtol, atol=atol), guess, throw=False, max_steps=64)
    return q.at[coord].set(sol.value), sol.result == optx.RESULTS.successful

