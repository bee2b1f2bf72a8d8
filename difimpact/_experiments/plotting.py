"""Figure helpers shared by the experiments: panels of curves laid out like the papers' figures."""

import matplotlib.pyplot as plt
import numpy as np


def line_panels(x, panels, labels, xlabel, ylabels, title, *, styles=None, zero_line=False):
    """One row of panels; panel ``k`` plots each row of ``panels[k]`` (curves × len(x)) against ``x``."""
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.0), squeeze=False)
    for ax, data, ylabel in zip(axes[0], panels, ylabels):
        for i, (curve, label) in enumerate(zip(np.atleast_2d(data), labels)):
            ax.plot(x, curve, (styles or {}).get(i, "-"), label=label)
        if zero_line:
            ax.axhline(0.0, color="k", lw=0.8, ls="--")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def method_panels(x, panels, xlabel, ylabels, title):
    """One row of panels comparing two methods, laid out like seed 001's Figs. 2–5: panel ``k`` is a dict
    ``{quantity label: {method: curve}}``; one colour per quantity, solid lines for the first method, dashed
    lines with markers for the second. A method whose curve is ``None`` (or absent) is not drawn; NaN points
    are gaps."""
    fig, axes = plt.subplots(1, len(panels), figsize=(5.6 * len(panels), 4.2), squeeze=False)
    for ax, panel, ylabel in zip(axes[0], panels, ylabels):
        for colour, (quantity, curves) in enumerate(panel.items()):
            for j, (method, curve) in enumerate(curves.items()):
                if curve is not None:
                    ax.plot(x, curve, "-" if j == 0 else "--o", color=f"C{colour}", ms=3,
                            label=f"{quantity}, {method}" if quantity else method)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig
