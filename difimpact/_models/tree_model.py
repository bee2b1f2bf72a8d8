from .._tree import PlanarTree
from .base import AbstractPlanarModel


class TreeModel(AbstractPlanarModel):
    """A model given directly by a :class:`~difimpact.PlanarTree` — for chains that are not built in.

    ```python
    bodies = [Body(name="thigh", parent=None, coord=2, mass=7.0, inertia=0.1, com=(0.2, 0.0), offset=math.pi),
              Body(name="shank", parent="thigh", coord=3, mass=3.0, inertia=0.04, com=(0.2, 0.0),
                   attach=(0.45, 0.0))]
    model = TreeModel(PlanarTree.build(4, bodies, [Point(name="foot", body="shank", local=(0.43, 0.0))]))
    ```

    Its coordinates are named ``("x", "y", "q3", …)``: the base position, then one per joint.
    """

    planar_tree: PlanarTree

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        return ("x", "y") + tuple(f"q{i}" for i in range(3, self.planar_tree.n + 1))

    def tree(self) -> PlanarTree:
        return self.planar_tree
