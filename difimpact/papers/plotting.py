"""Figure helpers shared by the experiments: panels of curves laid out like the papers' figures, with nothing
clipped (constrained layout, long titles and labels wrapped) and the legend where it hides no curve (in an
empty panel slot, or below the panels)."""

import textwrap

import matplotlib.pyplot as plt
import numpy as np

from difimpact import draw_model

_PANEL_SIZE = (4.8, 3.7)  # inches per panel
_MIN_WIDTH = 6.4  # inches: a one-panel figure is widened for its title and legend
_CHARS_PER_INCH = 10  # at the default 10-point font
_LEGEND_CHARS_PER_INCH = 13  # at 8 points


def _wrap(text: str, inches: float) -> str:
    """`text` in lines that fit `inches`, never breaking around ``=``, ``+`` or ``−`` (no-break spaces)."""
    for op in " = ", " + ", " − ":
        text = text.replace(op, op.replace(" ", "\u00a0"))
    return textwrap.fill(text, max(20, int(_CHARS_PER_INCH * inches)))


def panel_grid(panels, title, xlabel, *, ncols=None, note=""):
    """Panels of curves, each curve with its own abscissa: `panels` is a list of ``(ylabel, curves)`` and
    ``curves`` a list of ``(x, y, label, matplotlib kwargs)`` (label ``None``: not in the legend). One legend for
    the figure, from the labelled curves of all panels; `note` is printed under it (symbols, where curves
    end). A panel spans at least 10⁻³ of its unit, so a flat curve does not magnify round-off."""
    ncols = ncols or len(panels)
    nrows = -(-len(panels) // ncols)
    width = max(_PANEL_SIZE[0] * ncols, _MIN_WIDTH)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, _PANEL_SIZE[1] * nrows + 0.3), squeeze=False,
                             layout="constrained")
    handles = {}
    for ax, (ylabel, curves) in zip(axes.flat, panels):
        for x, y, label, style in curves:
            (line,) = ax.plot(x, y, label=label, **style)
            if label:
                handles.setdefault(label, line)
        lo, hi = ax.get_ylim()
        if hi - lo < 1e-3:
            ax.set_ylim(0.5 * (lo + hi) - 5e-4, 0.5 * (lo + hi) + 5e-4)
        ax.set_xlabel(_wrap(xlabel, _PANEL_SIZE[0]))
        ax.set_ylabel(_wrap(ylabel, _PANEL_SIZE[1]))
        ax.grid(alpha=0.3)
    spare = list(axes.flat)[len(panels):]
    for ax in spare:
        ax.set_axis_off()
    fig.suptitle(_wrap(title, width))
    if spare:  # the legend and the note in the first empty slot
        spare[0].legend(handles.values(), handles.keys(), loc="upper left", fontsize=8, frameon=False)
        if note:
            spare[0].text(0.0, 0.0, _wrap(note, _PANEL_SIZE[0]), fontsize=8, va="bottom", transform=spare[0].transAxes)
    else:
        longest = max((len(label) for label in handles), default=1)
        ncol = max(1, min(len(handles), int(width * _LEGEND_CHARS_PER_INCH) // (longest + 6)))
        fig.legend(handles.values(), handles.keys(), loc="outside lower center", ncol=ncol, fontsize=8,
                   title=_wrap(note, width) if note else None, title_fontsize=8)
    return fig


def line_panels(x, panels, labels, xlabel, ylabels, title, *, styles=None, zero_line=False, note=""):
    """One row of panels; panel ``k`` plots each row of ``panels[k]`` (curves × len(x)) against ``x``, curve
    ``i`` with label ``labels[i]`` and style ``styles[i]`` (a matplotlib format string)."""
    styles = styles or {}
    rows = []
    for data, ylabel in zip(panels, ylabels):
        curves = [(x, curve, label, _format(styles.get(i, "-"))) for i, (curve, label) in
                  enumerate(zip(np.atleast_2d(data), labels))]
        if zero_line:
            curves.append(([np.min(x), np.max(x)], [0.0, 0.0], None, dict(color="k", lw=0.8, ls="--")))
        rows.append((ylabel, curves))
    return panel_grid(rows, title, xlabel, note=note)


def _format(fmt: str) -> dict:
    """Matplotlib keyword arguments of a format string ``[colour][marker][line]`` such as ``"r-"``, ``"b--"``,
    ``"g-."``, ``"k:"``, ``"o"`` (markers only) or ``"ko-"``."""
    colour = next((c for c in fmt if c in "bgrcmykw"), None)
    rest = fmt.replace(colour, "", 1) if colour else fmt
    line = next((s for s in ("--", "-.", "-", ":") if s in rest), None)
    marker = rest.replace(line, "", 1) if line else rest
    return dict(ls=line or ("none" if marker else "-"), **({"marker": marker} if marker else {}),
                **({"color": colour} if colour else {}))


def method_panels(x, panels, xlabel, ylabels, title, *, note=""):
    """One row of panels comparing two methods, laid out like Font-Llagunes et al. 2010's Figs. 2–5: panel ``k`` is a
    dict ``{quantity label: {method: curve}}``; one colour per quantity, solid lines for the first method, dashed
    lines with markers for the second. A method whose curve is ``None`` (or absent) is not drawn; NaN points
    are gaps."""
    rows, colour = [], -1
    for panel, ylabel in zip(panels, ylabels):
        curves = []
        for quantity, methods in panel.items():
            colour += 1  # one colour per quantity across the panels: one legend for the figure
            for j, (method, curve) in enumerate(methods.items()):
                if curve is not None:
                    curves.append((x, curve, f"{quantity}, {method}" if quantity else method,
                                   dict(ls="-" if j == 0 else "--", marker=None if j == 0 else "o", ms=3,
                                        color=f"C{colour}")))
        rows.append((ylabel, curves))
    return panel_grid(rows, title, xlabel, note=note)


def model_figure(model, q, title, *, contacts=(), arrows=None, note=""):
    """A model drawn at a posture (:func:`difimpact.draw_model`), with the impulse arrows of its impact."""
    fig, ax = plt.subplots(figsize=(6.0, 5.8), layout="constrained")
    draw_model(model, q, ax=ax, contacts=contacts, arrows=arrows)
    fig.suptitle(_wrap(title, 6.0))
    if note:
        ax.set_title(_wrap(note, 7.0), fontsize=8)
    return fig
