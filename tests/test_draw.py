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
    from difimpact.papers.plotting import line_panels

    x = np.linspace(0.0, 1.0, 5)
    fig = line_panels(x, [np.stack([x, x**2, x**3])], ["a", "b", "c"], "x", ["y"], "t",
                      styles={0: "o", 1: "ko-", 2: "r--"})
    lines = fig.axes[0].get_lines()
    assert [(ln.get_marker(), ln.get_linestyle()) for ln in lines] == [("o", "None"), ("o", "-"), ("None", "--")]
    assert lines[1].get_color() == "k" and lines[2].get_color() == "r"
    plt.close(fig)


def test_coordinates_are_labelled_where_they_act(walker_state):
    """``coordinates=True`` writes q1 … qn: the base's translations at the root's origin (the feet P), each joint
    angle beside the body it turns, nearer that body's joint than its other end; by default no label."""
    walker, q = walker_state
    ax = di.draw_model(walker, q)
    assert not [t for t in ax.texts if t.get_text().startswith("q")]
    plt.close(ax.figure)
    ax = di.draw_model(walker, q, coordinates=True)
    labels = {t.get_text(): np.asarray(t.xy) for t in ax.texts if t.get_text().startswith("q")}
    assert sorted(labels) == ["q1, q2", "q3", "q4", "q5", "q6"]
    np.testing.assert_allclose(labels["q1, q2"], walker.point(q, "P"), atol=1e-12)
    for name, joint, end in (("q3", "P", "H"), ("q4", "H", "S"), ("q5", "S", "E"), ("q6", "E", "Q")):
        a, b, at = np.asarray(walker.point(q, joint)), np.asarray(walker.point(q, end)), labels[name]
        t = np.dot(at - a, b - a) / np.dot(b - a, b - a)
        assert 0 < t < 0.5 and np.linalg.norm(a + t * (b - a) - at) < 1e-6, name  # on the body, near its joint
    plt.close(ax.figure)
