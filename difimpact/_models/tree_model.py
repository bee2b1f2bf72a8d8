from .._tree import PlanarTree
from .base import AbstractPlanarModel


class TreeModel(AbstractPlanarModel):
    """A model given directly by a :class:`~difimpact.PlanarTree` — for chains that are not built in.

    ```python
    tree = PlanarTree.build(4, [Body("thigh", -1, 2, 7.0, 0.1, (0.2, 0.0)),
                                Body("shank", 0, 3, 3.0, 0.04, (0.2, 0.0), (0.45, 0.0))],
                            [Point("foot", 1, (0.43, 0.0))])
    model = TreeModel(tree)
    ```
    """

    planar_tree: PlanarTree

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        return ("x", "y") + tuple(f"q{i}" for i in range(3, self.planar_tree.n + 1))

    def tree(self) -> PlanarTree:
        return self.planar_tree
