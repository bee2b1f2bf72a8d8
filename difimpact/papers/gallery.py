"""Render the figures of experiments for inspection, without the CSV files and the report of
``difimpact reproduce``: ``python -m difimpact.papers.gallery DIR [NAME ...] [--quick]`` writes
``DIR/NAME__FIGURE.png`` for every figure and ``DIR/index.html`` showing them all, one under another."""

import argparse
import html
import pathlib


def render(out: pathlib.Path, names=(), quick: bool = False) -> list[pathlib.Path]:
    """Run the experiments `names` (all when empty) and save their figures flat in `out`; returns the paths."""
    import jax

    jax.config.update("jax_enable_x64", True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .registry import select

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for exp in select(list(names)):
        for name, fig in exp.run(quick, lambda it, desc="", total=None: it).figures.items():
            paths.append(out / f"{exp.name}__{name}.png")
            fig.savefig(paths[-1], dpi=100, metadata={"Software": None})
            plt.close(fig)
    body = "\n".join(f"<h3>{html.escape(p.stem)}</h3><img src='{p.name}' style='max-width:100%'>" for p in paths)
    (out / "index.html").write_text(f"<html><body>{body}</body></html>\n")
    return paths


if __name__ == "__main__":  # pragma: no cover
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("names", nargs="*", metavar="NAME")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_intermixed_args()
    print("\n".join(map(str, render(args.out, args.names, args.quick))))
