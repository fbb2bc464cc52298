"""`tx-train resume=RUN_DIR` becomes that run's saved overrides, the user's extras and its folder."""

import pytest

from tx_keras.run_folder.resume_argv import resume_argv
from tx_keras.run_folder.run_folder_error import RunFolderError
from tx_keras.run_folder.run_marker import write_marker


@pytest.fixture
def run_dir(tmp_path):
    run = tmp_path / "run"
    write_marker(run, {"seed": 0})
    (run / ".hydra").mkdir()
    (run / ".hydra" / "overrides.yaml").write_text("- model=tiny\n- trainer.epochs=4\n- sweep=heads\n")
    return run


def test_resume_replays_saved_overrides_then_the_users_into_the_same_folder(run_dir):
    argv = resume_argv([f"resume={run_dir}", "trainer.epochs=8", "logging.verbose=0"])
    assert argv == [
        "model=tiny",  # replayed; trainer.epochs is the user's now; a sweep's override is not replayed
        "trainer.epochs=8",
        "logging.verbose=0",
        f"hydra.run.dir='{run_dir}'",
        f"resume='{run_dir}'",
    ]


def test_without_resume_the_command_line_is_untouched():
    assert resume_argv(["model=tiny"]) == ["model=tiny"]
    assert resume_argv(["resume=null", "model=tiny"]) == ["resume=null", "model=tiny"]


def test_a_run_without_saved_overrides_is_one_clear_error(run_dir):
    (run_dir / ".hydra" / "overrides.yaml").unlink()
    with pytest.raises(
        RunFolderError, match=r"resume=.*: cannot read .*overrides.yaml \(FileNotFoundError\)"
    ):
        resume_argv([f"resume={run_dir}"])
