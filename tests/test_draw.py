"""`draw_model`: the stick figure passes through the model's own points, arrows point along the given vectors,
bad input names the argument."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import difimpact as di  # noqa: E402


@pytest.fixture(scope="module")
def walker_state():
    walker = di.CrutchWalker()
    q = walker.place_crutch(math.radians(12.0))
    return walker, np.asarray(q)


def test_sticks_join_the_models_points(walker_state):
    walker, q = walker_state
    ax = di.draw_model(walker, q, contacts=("Q",), arrows={"Q": (-3.0, 4.0)})
    ends = np.concatenate([np.column_stack(line.get_data()) for line in ax.get_lines()])
    for name in ("P", "H", "S", "E", "Q"):
        point = np.asarray(walker.point(q, name))
        assert np.min(np.linalg.norm(ends - point, axis=1)) < 1e-12, name
    (arrow,) = [a for a in ax.texts if a.arrow_patch is not None]
    tip, tail = np.asarray(arrow.xy), np.asarray(arrow.xyann)
    np.testing.assert_allclose(tail, walker.point(q, "Q"), atol=1e-12)
    np.testing.assert_allclose((tip - tail) / np.linalg.norm(tip - tail), [-0.6, 0.8], atol=1e-12)
    assert any(t.get_text() == "5 N s" for t in ax.texts)
    plt.close(ax.figure)


def test_bad_input_names_the_argument(walker_state):
    walker, q = walker_state
    with pytest.raises(ValueError, match="`q` must have shape"):
        di.draw_model(walker, q[:3])
    with pytest.raises(ValueError, match="unknown point.*'Z'"):
        di.draw_model(walker, q, contacts=("Z",))


def test_line_styles_with_markers_draw():
    """Format strings with a marker and no line ('o') or all three parts ('ko-') draw as matplotlib does."""
    from difimpact._experiments.plotting import line_panels

    x = np.linspace(0.0, 1.0, 5)
    fig = line_panels(x, [np.stack([x, x**2, x**3])], ["a", "b", "c"], "x", ["y"], "t",
                      styles={0: "o", 1: "ko-", 2: "r--"})
    lines = fig.axes[0].get_lines()
    assert [(ln.get_marker(), ln.get_linestyle()) for ln in lines] == [("o", "None"), ("o", "-"), ("None", "--")]
    assert lines[1].get_color() == "k" and lines[2].get_color() == "r"
    plt.close(fig)
