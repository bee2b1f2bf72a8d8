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
