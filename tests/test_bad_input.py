"""A table of user mistakes (configs, run folders, command-line arguments): each one gives exactly one
line that names the problem, a non-zero exit code, no traceback and no output that looks valid."""

import json
import sys

import numpy as np
import pytest
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

from tests.conftest import TINY
from tx_keras.cli import board, train
from tx_keras.run_folder.run_marker import write_marker


def _config(*overrides):
    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        return OmegaConf.to_container(
            compose(config_name="config", overrides=[*TINY, *overrides]), resolve=True
        )


def _run_folder(path, config, checkpoint_epoch=None, damaged=False):
    """A run folder as `tx-train` leaves it when killed: run.json and maybe a checkpoint."""
    write_marker(path, config)
    if checkpoint_epoch is not None:
        (path / "checkpoints").mkdir()
        with open(path / "checkpoints" / "last.npz", "wb") as stream:
            np.savez(stream, meta=np.array(json.dumps({"epoch": checkpoint_epoch, "logs": {}})))
        if damaged:
            checkpoint = path / "checkpoints" / "last.npz"
            checkpoint.write_bytes(checkpoint.read_bytes()[:40])
    return path


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("folders")
    (root / "plain").mkdir()
    (root / "a_file").write_text("not a folder\n")
    for name, marker in {"future": '{"format": 99, "tx_keras_version": "9.0.0"}', "torn": '{"form'}.items():
        (root / name).mkdir()
        (root / name / "run.json").write_text(marker)
    (root / "foreign").mkdir()
    (root / "foreign" / "summary.json").write_text('{"status": "failed"}')
    (root / "events").mkdir()
    (root / "events" / "train").mkdir()
    (root / "events" / "train" / "events.out.tfevents.1.host").write_bytes(b"")
    (root / "empty.tsv").write_text("")
    (root / "junk.tsv").write_text("no tab here\nnor here\n")
    (root / "pairs.tsv").write_text("Hello.\tBonjour.\nThanks.\tMerci.\n")
    _run_folder((root / "changed"), _config("model.d_model=64"), checkpoint_epoch=1)
    _run_folder((root / "damaged"), _config(), checkpoint_epoch=1, damaged=True)
    _run_folder((root / "ahead"), _config(), checkpoint_epoch=5)
    return root


E = "tx-train: error: "
# (command-line arguments; "{root}" is the folders fixture) -> the start of the one error line.
CASES = [
    (
        ["model.num_heads=3"],
        E + "model.num_heads=3 does not divide model.d_model=32; choose num_heads in 1, 2",
    ),
    (["model.d_model=big"], E + "model.d_model='big' has the wrong type: expected int"),
    (["trainer.deterministic=maybe"], E + "trainer.deterministic='maybe' has the wrong type: expected bool"),
    (["trainer.checkpoint_every=-1"], E + "trainer.checkpoint_every=-1 must be >= 0"),
    (["trainer.lr_scale=0"], E + "trainer.lr_scale=0.0 must be >= 1e-12"),
    (["data.num_train=0"], E + "data.num_train=0 must be >= 1"),
    (["trainer.epoch=3"], E + "trainer.epoch is not a config key; did you mean trainer.epochs"),
    (["model=huge"], E + "model=huge is not an option of model/ (choose one of: base, small, tiny)"),
    (["data=revers"], E + "data=revers is not an option of data/; did you mean reverse?"),
    (["data=reverse", "data.vocab_size=0"], E + "data.vocab_size=0 must be >= 1"),
    (["data=reverse", "data.length=0"], E + "data.length=0 must be >= 1"),
    (["data=reverse", "data.min_length=20"], E + "data.min_length=20 must be <= data.length=12"),
    (
        ["data=copy", "data.vocab_size=2", "data.length=3", "data.min_length=3"],
        E + "data: task 'copy' can produce only 8 distinct sources but the splits ask for 320",
    ),
    (["data=parallel_text"], E + "data.path is required: set it on the command line"),
    (
        ["data=parallel_text", "data.path={root}/none.tsv"],
        E + "data.path={root}/none.tsv: no such file",
    ),
    (
        ["data=parallel_text", "data.path={root}/empty.tsv"],
        E + "data.path={root}/empty.tsv: the file is empty",
    ),
    (
        ["data=parallel_text", "data.path={root}/junk.tsv"],
        E + "{root}/junk.tsv: no valid sentence pairs (2 lines: 2 malformed",
    ),
    (
        ["data=parallel_text", "data.path={root}/pairs.tsv", "data.vocab_size=4"],
        E + "data.vocab_size=4 leaves no room beside the 4 special tokens",
    ),
    (
        ["data=parallel_text", "data.path={root}/pairs.tsv", "data.sha256=" + "0" * 64],
        E + "data.path={root}/pairs.tsv: SHA-256 mismatch",
    ),
    (
        ["data=parallel_text", "data.path={root}/pairs.tsv", "data.tokenizer=bytes"],
        E + "data.tokenizer='bytes' is not allowed; choose one of: wordpiece, characters",
    ),
    (
        ["trainer.batching=sorted"],
        E + "trainer.batching='sorted' is not allowed; choose one of: fixed, bucket",
    ),
    (["trainer.batch_tokens=512"], E + "trainer.batch_tokens=512 needs trainer.batching=bucket"),
    (["trainer.shape_classes=6"], E + "trainer.shape_classes=6 needs trainer.batching=bucket"),
    (
        ["trainer.batching=bucket", "trainer.shape_classes=0"],
        E + "trainer.shape_classes=0 is not allowed; choose auto, null or a whole number >= 1",
    ),
    (["trainer.objective=test_bleu"], E + "trainer.objective=test_bleu is measured only on real text"),
    (["resume={root}/missing"], E + "resume={root}/missing: {root}/missing does not exist"),
    (["resume={root}/a_file"], E + "resume={root}/a_file: {root}/a_file is not a folder"),
    (
        ["resume={root}/plain"],
        E + "resume={root}/plain: {root}/plain is not a tx_keras run folder (it has no run.json)",
    ),
    (
        ["resume={root}/future"],
        E + "{root}/future was written by tx_keras 9.0.0 (run format 99); tx_keras 0.1.0 reads run format 1",
    ),
    (["resume={root}/torn"], E + "{root}/torn/run.json is unreadable (JSONDecodeError)"),
    (
        ["resume={root}/changed", "hydra.run.dir={root}/damaged"],
        E + "resume={root}/changed and hydra.run.dir={root}/damaged name different folders",
    ),
    (["hydra.run.dir={root}/foreign"], E + "{root}/foreign holds a run without run.json"),
    (["hydra.run.dir={root}/events"], E + "{root}/events holds a run without run.json"),
    (
        ["hydra.run.dir={root}/changed"],
        E + "{root}/changed was started with model.d_model=64, this command has model.d_model=32",
    ),
    (["hydra.run.dir={root}/damaged"], E + "checkpoint {root}/damaged/checkpoints/last.npz is damaged"),
    (
        ["hydra.run.dir={root}/ahead"],
        E + "{root}/ahead has trained 5 epochs already, more than trainer.epochs=2",
    ),
]


def _one_error_line(capsys, prefix):
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    lines = [line for line in captured.err.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1, captured.err
    return lines[0]


@pytest.mark.parametrize(("arguments", "message"), CASES, ids=[" ".join(args) for args, _ in CASES])
def test_tx_train_bad_input(folders, tmp_path, monkeypatch, capsys, arguments, message):
    arguments = [argument.format(root=folders) for argument in arguments]
    if not any(argument.startswith(("hydra.run.dir=", "resume=")) for argument in arguments):
        arguments.append(f"hydra.run.dir={tmp_path / 'run'}")
    # In this process Hydra must not point logging at pytest's captured streams (closed after the test).
    quiet = ["hydra/job_logging=none", "hydra/hydra_logging=none"]
    tiny = [a for a in TINY if not (a.startswith("data.num_train") and "data=parallel_text" in arguments)]
    monkeypatch.setattr(sys, "argv", ["tx-train", *tiny, *arguments, *quiet])
    with pytest.raises(SystemExit) as exit_info:
        train.main()
    assert exit_info.value.code == 2
    assert _one_error_line(capsys, "tx-train").startswith(message.format(root=folders))
    assert not (tmp_path / "run" / "checkpoints").exists() and not (tmp_path / "run" / "train").exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["{root}/missing"], "tx-board: error: logdir {root}/missing does not exist"),
        (["{root}/a_file"], "tx-board: error: logdir {root}/a_file is not a folder"),
        (["--port", "http"], "tx-board: error: argument --port: invalid int value: 'http'"),
    ],
)
def test_tx_board_bad_input(folders, capsys, arguments, message):
    with pytest.raises(SystemExit) as exit_info:
        board.main([argument.format(root=folders) for argument in arguments])
    assert exit_info.value.code == 2
    assert _one_error_line(capsys, "tx-board").startswith(message.format(root=folders))
