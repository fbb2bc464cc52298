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


def main() -> None:
    _train()


if __name__ == "__main__":
    main()
