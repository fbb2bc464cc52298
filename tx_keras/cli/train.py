"""`tx-train`: compose the Hydra config, train one model (or a sweep of them), write the run folder."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep TensorFlow's start-up chatter out of the console

import hydra  # noqa: E402
from hydra.core.hydra_config import HydraConfig  # noqa: E402
from omegaconf import DictConfig  # noqa: E402


@hydra.main(version_base="1.3", config_path="pkg://tx_keras.conf", config_name="config")
def _train(cfg: DictConfig) -> float:
    from pathlib import Path

    from tx_keras.config_check import ConfigError, check_config

    try:
        check_config(cfg)  # before any data or model is built
    except ConfigError as error:
        print(f"tx-train: error: {error}", file=sys.stderr)
        sys.exit(2)
    from tx_keras.training.run import run

    return run(cfg, Path(HydraConfig.get().runtime.output_dir))


def _default_config() -> DictConfig | None:
    """The config with no overrides, for "did you mean" suggestions (None if even that fails)."""
    from hydra import compose, initialize_config_module

    try:
        with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
            return compose(config_name="config")
    except Exception:  # suggestions are a courtesy; the error line itself must still be printed
        return None


def main() -> None:
    """Run Hydra, turning its multi-line composition errors into one line and exit code 2."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from tx_keras.cli.error_line import error_line

    os.environ["HYDRA_FULL_ERROR"] = "1"  # let Hydra's errors reach us instead of printing them itself
    try:
        _train()
    except (HydraException, OmegaConfBaseException) as error:
        message = str(error) + (f"\n{error.__cause__}" if error.__cause__ else "")
        print(f"tx-train: error: {error_line(message, _default_config())}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
