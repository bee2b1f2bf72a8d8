"""How a contact is named: by its point's name, with the laws at that point passed by keyword.

Every contact map of difimpact names a contact by the name of the model point that touches the ground —
:func:`~difimpact.impact`'s `stick` and `unilateral`, :func:`~difimpact.frictional_impact`'s `point`,
:func:`~difimpact.compliant_impact`'s `points` — and takes what happens at it by keyword: one value for every
point, or a mapping ``{point: value}`` (``restitution={"Q": 0.5}``, ``friction=Coulomb(0.75)``,
``normal={"heel": HuntCrossley(…), "toe": KelvinVoigt(…)}``). :class:`~difimpact.Contact` is the description these
resolve to (a point with its laws), which the compliant phase carries.

The maps are compiled behind a Python edge (:func:`difimpact._check.program`) that runs on every call, outside
the compiled program: the laws become mappings by point there, and Python numbers that are values (a blocked
rate, a restitution coefficient) become arrays, before ``filter_jit`` would make them compile-time constants.
"""

from collections.abc import Mapping, Sequence

from .base import AbstractFrictionLaw, AbstractNormalLaw
from .contact import Contact


def _law_kind(arg: str) -> type:
    return AbstractNormalLaw if arg == "normal" else AbstractFrictionLaw


def laws_by_point(arg: str, laws, points: tuple[str, ...], *, required: bool) -> dict:
    """`laws` (the keyword `arg`, ``"normal"`` or ``"friction"``): one law for every point of `points`, or a
    mapping ``{point: law}``, as ``{point: law or None}``; with `required` every point needs a law."""
    kind = _law_kind(arg)
    if laws is None or isinstance(laws, kind):
        per_point = {p: laws for p in points}
    elif isinstance(laws, Mapping):
        unknown = [p for p in laws if p not in points]
        if unknown:
            raise ValueError(f"`{arg}` names {unknown}, which are not contact points here ({list(points)}).")
        per_point = {p: laws.get(p) for p in points}
    else:
        raise TypeError(f"`{arg}` must be a law ({kind.__name__}) or a mapping {{point: law}}, got {laws!r}.")
    for p, law in per_point.items():
        if law is not None and not isinstance(law, kind):
            raise TypeError(f"`{arg}[{p!r}]` must be a {kind.__name__} (e.g. "
                            f"{'HuntCrossley(1e6)' if arg == 'normal' else 'Coulomb(0.5)'}), got {law!r}.")
    missing = [p for p, law in per_point.items() if law is None]
    if required and missing:
        raise ValueError(f"`{arg}`: no normal law for {missing}; every compliant contact needs one (e.g. "
                         "`normal=HuntCrossley(1e6)`).")
    return per_point


def laws_by_name(points, normal, friction) -> dict:
    """``{"normal": {point: law}, "friction": {point: law or None}}`` for the names `points` (one name is one
    point) and the keywords `normal` (required for every point) and `friction`, checked; empty where `points` is
    no name or sequence of names (the map reports it). One law for every point and the same laws by point are
    one pytree structure, so they share a compiled program."""
    if not (isinstance(points, str) or isinstance(points, Sequence) and all(isinstance(p, str) for p in points)):
        return {}
    points = (points,) if isinstance(points, str) else tuple(points)
    return {"normal": laws_by_point("normal", normal, points, required=True),
            "friction": laws_by_point("friction", friction, points, required=False)}


def contacts_of(points: tuple[str, ...], normal, friction) -> tuple[Contact, ...]:
    """The :class:`Contact` of each point of `points`, with its laws from the keywords `normal` and `friction`
    (:func:`laws_by_point`; a normal law for every point)."""
    normal = laws_by_point("normal", normal, points, required=True)
    friction = laws_by_point("friction", friction, points, required=False)
    return tuple(Contact(p, normal[p], friction[p]) for p in points)
