"""docs/tour.md stays true: every command on the page composes to a valid config as written (fast), and
runs as written at its smallest size, the translation included (slow); each stop names the dashboard view
to open and points `tx-board` at the folder its runs write."""

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module

from tests.conftest import tx_train
from tx_keras.cli.translate import _parser as _translate_parser
from tx_keras.training.run.config_check import check_config

ROOT = Path(__file__).parent.parent
TOUR = ROOT / "docs" / "tour.md"
# The smallest size of a command: one epoch over a handful of rows; held-out sets cut where a task has them.
SMALLEST = ["trainer.epochs=1", "data.num_train=64", "logging.verbose=0"]
HELD_OUT = ["data.num_validation=16", "data.num_test=16"]


def _stops() -> list[tuple[str, list[list[str]]]]:
    """Each stop's title and the commands of its bash blocks, split as a shell splits them."""
    stops = []
    for section in re.split(r"^## ", TOUR.read_text(), flags=re.MULTILINE)[1:]:
        title = section.splitlines()[0]
        blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)
        commands = [shlex.split(line) for block in blocks for line in block.splitlines() if line.strip()]
        if commands:
            stops.append((title, commands))
    return stops


def _overrides(command: list[str]) -> list[str]:
    return [arg for arg in command[1:] if not arg.startswith("hydra.")]


def _run_dir(command: list[str]) -> str:
    (run_dir,) = [arg.split("=", 1)[1] for arg in command if arg.startswith("hydra.run.dir=")]
    return run_dir


def test_each_stop_trains_shows_and_names_its_view():
    stops = _stops()
    assert len(stops) >= 6, [title for title, _ in stops]
    text = TOUR.read_text()
    for title, commands in stops:
        programs = [command[0] for command in commands]
        assert set(programs) <= {"tx-train", "tx-board", "tx-translate"}, title
        section = text[text.index(f"## {title}") :]
        assert "**Open**" in section.split("\n## ", 1)[0], f"stop {title!r} names no dashboard view"
        for board in (command for command in commands if command[0] == "tx-board"):
            runs = [_run_dir(command) for command in commands if command[0] == "tx-train"]
            assert runs and all(run.startswith(board[1] + "/") for run in runs), title


def test_every_tour_command_composes_to_a_valid_config():
    """Each `tx-train` line of the tour, as written, composes and passes the config check (what tx-train
    does before TensorFlow starts)."""
    commands = [command for _, stop in _stops() for command in stop if command[0] == "tx-train"]
    assert len(commands) >= 10
    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        for command in commands:
            cfg = compose(config_name="config", overrides=_overrides(command))
            check_config(cfg)
            assert cfg.data.name and _run_dir(command).startswith("outputs/tour/")


def test_every_translate_command_parses_as_written():
    """tx-translate's options and arguments in the order the page gives them (argparse refuses an option
    between its two positionals), and its run folder is one the tour trains."""
    runs = {_run_dir(command) for _, stop in _stops() for command in stop if command[0] == "tx-train"}
    commands = [command for _, stop in _stops() for command in stop if command[0] == "tx-translate"]
    assert commands
    for command in commands:
        args = _translate_parser().parse_args(command[1:])
        assert str(args.path) in runs and args.sentences and args.attention


@pytest.mark.slow
def test_every_tour_command_runs_at_its_smallest_size(tmp_path):
    """Every command of the tour in a fresh process, as written but at its smallest size and under
    tmp_path: each run completes, each `tx-board` folder holds its runs' event files, and `tx-translate`
    translates with the run it names."""
    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        held_out = {
            " ".join(command): "num_validation"
            in compose(config_name="config", overrides=_overrides(command)).data
            for _, stop in _stops()
            for command in stop
            if command[0] == "tx-train"
        }
    for title, commands in _stops():
        for command in commands:
            args = [arg.replace("outputs/tour", str(tmp_path)) for arg in command[1:]]
            if command[0] == "tx-train":
                small = SMALLEST + (HELD_OUT if held_out[" ".join(command)] else [])
                result = tx_train(*args, *small, cwd=tmp_path)
                assert result.returncode == 0, f"{title}: {shlex.join(command)}\n{result.stderr[-2000:]}"
                summary = json.loads((Path(_run_dir(["", *args])) / "summary.json").read_text())
                assert summary["status"] == "completed", title
            elif command[0] == "tx-board":
                assert list(Path(args[0]).rglob("events.out.tfevents.*")), title
            else:
                result = subprocess.run(
                    [sys.executable, "-m", "tx_keras.cli.translate", *args],
                    cwd=tmp_path,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
                assert result.returncode == 0, result.stderr[-2000:]
                assert result.stdout.strip(), "tx-translate printed no translation"
