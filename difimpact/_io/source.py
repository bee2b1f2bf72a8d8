"""Reading a model file or its text with the standard library's XML parser, with errors that name what is wrong:
the argument, the file, the element."""

import os
import re
import xml.etree.ElementTree as ET

import numpy as np

_ARTICLE = {"MJCF": "an MJCF", "URDF": "a URDF", "OpenSim .osim": "an OpenSim .osim"}
_READERS = {"mujoco": "from_mjcf", "robot": "from_urdf", "OpenSimDocument": "from_osim"}
# OpenSim 4 writes nested class names as tags (``<HuntCrossleyForce::ContactParameters>``), which XML does not
# allow in a name; the importer reads them as ``HuntCrossleyForce__ContactParameters``.
_SCOPED_TAG = re.compile(r"(</?)([A-Za-z_][\w.-]*)::(?=[A-Za-z_])")


def read_text(source, what: str) -> tuple[str, str]:
    """``(text, label)`` of `source`, a path or the XML text itself (it starts with ``<``); `label` names it in
    messages. Raises ``TypeError`` for another type, ``ValueError`` for a missing file or a directory."""
    if isinstance(source, bytes):
        source = source.decode("utf-8", errors="replace")
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"`source` must be a path to {_ARTICLE.get(what, what)} file or its XML text, got "
                        f"{type(source).__name__}.")
    text = os.fspath(source)
    if text.lstrip().startswith("<"):
        return text, f"the {what} text"
    if os.path.isdir(text):
        raise ValueError(f"`source`: {text!r} is a directory, not {_ARTICLE.get(what, what)} file.")
    if not os.path.exists(text):
        raise ValueError(f"`source`: no {what} file {text!r} (pass a path or the XML text).")
    try:
        with open(text, encoding="utf-8") as handle:
            return handle.read(), repr(text)
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"`source`: cannot read {what} file {text!r}: {error}.") from None


def parse(source, what: str, root_tag: str, *, scoped_tags: bool = False) -> tuple[ET.Element, str, str]:
    """``(root element, label, text)`` of `source` (:func:`read_text`), checked to be well-formed XML whose root is
    ``<root_tag>``; with `scoped_tags`, ``A::B`` in tag names is read as ``A__B`` (OpenSim 4)."""
    text, label = read_text(source, what)
    if scoped_tags:
        text = _SCOPED_TAG.sub(r"\1\2__", text)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as error:
        raise ValueError(f"`source`: {label} is not well-formed XML ({error}).") from None
    if root.tag != root_tag:
        other = _READERS.get(root.tag)
        hint = f": read it with `{other}`" if other else ""
        raise ValueError(f"`source`: {label} is a <{root.tag}> document, not {what} (<{root_tag}>){hint}.")
    return root, label, text


def floats(text, count: int | None, where: str, *, default=None) -> np.ndarray:
    """The numbers in `text` (``count`` of them unless ``None``), finite; `default` when `text` is ``None`` or
    blank. Raises ``ValueError`` naming `where`."""
    if text is None or not str(text).strip():
        if default is None:
            raise ValueError(f"{where} is missing (it has no value).")
        return np.asarray(default, dtype=float)
    try:
        values = np.array(str(text).split(), dtype=float)
    except ValueError:
        raise ValueError(f"{where} must be {'a number' if count == 1 else 'numbers'}, got {text!r}.") from None
    if count is not None and values.shape != (count,):
        raise ValueError(f"{where} must be {count} number{'s' if count > 1 else ''}, got {text!r}.")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{where} must be finite, got {text!r}.")
    return values


def scalar(text, where: str, *, default=None, nonneg: bool = False) -> float:
    """One finite number (non-negative with `nonneg`), as :func:`floats`."""
    value = float(floats(text, 1, where, default=None if default is None else (default,))[0])
    if nonneg and value < 0:
        raise ValueError(f"{where} must be non-negative, got {value}.")
    return value
