import equinox as eqx

from .._tree import PlanarTree
from .._validation import instance
from .base import AbstractPlanarModel


class TreeModel(AbstractPlanarModel):
    """A model given directly by a :class:`~difimpact.PlanarTree` — for chains that are not built in, and
    what the importers (:func:`~difimpact.from_mjcf`, :func:`~difimpact.from_urdf`,
    :func:`~difimpact.from_osim`) return.

    ```python
    bodies = [Body(name="thigh", parent=None, coord=2, mass=7.0, inertia=0.1, com=(0.2, 0.0), offset=math.pi),
              Body(name="shank", parent="thigh", coord=3, mass=3.0, inertia=0.04, com=(0.2, 0.0),
                   attach=(0.45, 0.0))]
    model = TreeModel(PlanarTree.build(4, bodies, [Point(name="foot", body="shank", local=(0.43, 0.0))]))
    ```

    **Arguments:**

    - `planar_tree`: the tree.
    - `names`: names of the ``n`` coordinates; by default ``("x", "y", "q3", …)``: the base position, then one
      per joint.
    """

    planar_tree: PlanarTree
    names: tuple[str, ...] | None = eqx.field(static=True, default=None)

    def __check_init__(self):
        instance("planar_tree", self.planar_tree, PlanarTree, "PlanarTree.build(n, bodies, points)")
        if self.names is not None and len(self.names) != self.planar_tree.n:
            raise ValueError(f"`names` must name the {self.planar_tree.n} coordinates, got {len(self.names)}.")

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        if self.names is not None:
            return self.names
        return ("x", "y") + tuple(f"q{i}" for i in range(3, self.planar_tree.n + 1))

    def tree(self) -> PlanarTree:
        return self.planar_tree
