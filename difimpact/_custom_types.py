"""Array type aliases used across difimpact (jaxtyping)."""

from typing import Union

from jaxtyping import Array, ArrayLike, Bool, Complex as Complex, Float, Int

Scalar = Float[Array, ""]
ScalarLike = Union[float, Float[ArrayLike, ""]]
Config = Float[Array, " n"]
Velocity = Float[Array, " n"]
MassMatrix = Float[Array, "n n"]
Jacobian = Float[Array, "2 n"]

__all__ = [
    "Array",
    "ArrayLike",
    "Bool",
    "Config",
    "Float",
    "Int",
    "Jacobian",
    "MassMatrix",
    "Scalar",
    "ScalarLike",
    "Velocity",
]
