"""Quiet start-up: TensorFlow's CUDA probing lines stay off stderr on a CPU machine; real lines do not."""

from tx_keras.runtime import quiet_startup

NOISE_WORDS = ("cuInit", "Could not find cuda drivers", "absl::InitializeLog")


def test_a_default_run_has_no_startup_noise_on_stderr(tiny_run):
    result, run_dir = tiny_run
    assert result.returncode == 0, result.stderr[-2000:]
    for words in NOISE_WORDS:
        assert words not in result.stderr, result.stderr[-2000:]
    log = (run_dir / "train.log").read_text()
    assert "tx_keras.startup: TensorFlow" in log  # the log file keeps the start-up record


def test_noise_is_dropped_and_real_messages_pass(capsys, caplog):
    caplog.set_level("DEBUG", logger="tx_keras.startup")
    real = "E0000 00:00:1.0 123 some_op.cc:7] out of memory allocating 1 GiB"
    quiet_startup._pass_on(
        [
            "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
            "I0000 00:00:1.0 123 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will "
            "not be used.",
            "E0000 00:00:1.0 123 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error",
            real,
        ]
    )
    assert capsys.readouterr().err.splitlines() == [real]
    assert len([r for r in caplog.records if r.name == "tx_keras.startup"]) == 4  # all kept for the log


def test_the_user_can_ask_for_the_startup_lines(monkeypatch):
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", quiet_startup.QUIET_LEVEL)  # the default start_tensorflow sets
    assert not quiet_startup.wants_startup_messages(1)
    assert quiet_startup.wants_startup_messages(2)  # logging.verbose=2
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL")
    assert not quiet_startup.wants_startup_messages(1)
    for level in ("0", "1"):  # set by the user
        monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", level)
        assert quiet_startup.wants_startup_messages(1)
