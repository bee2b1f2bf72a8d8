"""The `difimpact` command's own interface: version, help, the experiment list."""

import contextlib
import io
import os
import subprocess
import sys

import pytest

import difimpact
from difimpact._cli import main, remember_traceback_filter
from difimpact._experiments import REGISTRY


def _run(argv, columns=None):
    out = io.StringIO()
    old = os.environ.get("COLUMNS")
    if columns:
        os.environ["COLUMNS"] = str(columns)
    try:
        with contextlib.redirect_stdout(out):
            try:
                code = main(argv)
            except SystemExit as stop:
                code = stop.code
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return code, out.getvalue()


def test_version():
    assert _run(["--version"]) == (0, f"difimpact {difimpact.__version__}\n")


@pytest.mark.parametrize("argv", [["--help"], ["reproduce", "--help"], ["list", "--help"]])
def test_help_is_plain_text(argv):
    code, text = _run(argv)
    assert code == 0 and "``" not in text and ":class:" not in text
    if "reproduce" in argv:
        assert "NAME" in text and "difimpact list" in text and "DIR" in text


def test_list_fits_the_terminal_and_names_the_papers():
    code, text = _run(["list"], columns=50)
    assert code == 0 and max(len(line) for line in text.splitlines()) <= 50
    code, text = _run(["list"], columns=80)
    lines = text.splitlines()
    assert code == 0 and max(len(line) for line in lines) <= 80
    for exp in REGISTRY.values():
        line = next(line for line in lines if line.startswith(exp.name + " "))
        assert exp.reference.short() in line and exp.target[:6] in line
    for seed, title in (("000", "swing-through crutch gait"), ("003", "bipedal")):
        assert any(title in line for line in lines), seed


def test_xla_flags_add_to_the_users(monkeypatch):
    """`add_xla_flags` appends the flags the user's XLA_FLAGS does not name (theirs win), and only on the jaxlib
    versions where they were measured (XLA aborts on a flag it does not know)."""
    from importlib.metadata import version

    from difimpact import _cli

    ours = ("--xla_cpu_use_fusion_emitters=false", "--xla_backend_optimization_level=0")
    monkeypatch.setattr(_cli, "_MEASURED_JAXLIB", (tuple(int(v) for v in version("jaxlib").split(".")[:2]),))
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_use_fusion_emitters=true --xla_force_host_platform_device_count=2")
    _cli.add_xla_flags(ours)
    assert os.environ["XLA_FLAGS"].split() == ["--xla_cpu_use_fusion_emitters=true",
                                               "--xla_force_host_platform_device_count=2",
                                               "--xla_backend_optimization_level=0"]
    monkeypatch.setattr(_cli, "_MEASURED_JAXLIB", ((0, 0),))
    monkeypatch.delenv("XLA_FLAGS")
    _cli.add_xla_flags(ours)
    assert "XLA_FLAGS" not in os.environ


def test_xla_flags_come_before_jax_starts():
    """XLA reads its flags once, when JAX starts its CPU client: the command adds them before anything starts it
    (importing the experiments does). A fresh process, as the console script is."""
    code = ("from jax._src import xla_bridge\n"
            "from difimpact import _cli\n"
            "add = _cli.add_xla_flags\n"
            "def checked(flags):\n"
            "    assert not xla_bridge.backends_are_initialized(), 'JAX started before the XLA flags'\n"
            "    add(flags)\n"
            "    print('FLAGS-ADDED')\n"
            "_cli.add_xla_flags = checked\n"
            "_cli.main(['list'])\n")
    env = {k: v for k, v in os.environ.items() if k != "DIFIMPACT_XLA_DEFAULTS"}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "FLAGS-ADDED" in run.stdout, run.stderr[-3000:]


def test_remembered_traceback_filter_keeps_jax_s_rule(tmp_path):
    # The test process runs with the filter remembered (conftest): its answers are JAX's rule, a frame is JAX's own
    # when its file lies under an excluded path, and a path excluded later is honoured.
    jax_src = pytest.importorskip("jax._src.traceback_util")
    if not hasattr(jax_src.include_filename, "remembered"):
        pytest.skip("this JAX's traceback filter differs: remember_traceback_filter leaves it as it is")
    rule = lambda f: not any(jax_src._path_starts_with(f, p) for p in jax_src._exclude_paths)  # noqa: E731
    files = [jax_src.__file__, jax_src.__file__, difimpact.__file__, __file__, str(tmp_path / "model.py")]
    assert [jax_src.include_filename(f) for f in files] == [rule(f) for f in files] == [False, False, True, True, True]
    jax_src.register_exclusion(str(tmp_path))
    assert not jax_src.include_filename(str(tmp_path / "model.py"))
    remembered = jax_src.include_filename
    remember_traceback_filter()  # again, as `difimpact reproduce` does in this process: nothing more is wrapped
    assert jax_src.include_filename is remembered
