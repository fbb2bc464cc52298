"""trainer.shape_classes=auto: 6 batch shapes where a compiled step would compile one per shape (JAX, XLA),
today's widths where TensorFlow's graph step takes new shapes cheaply; a number or null as written."""

from types import SimpleNamespace

import pytest
from hydra import compose, initialize_config_module

from tx_keras.data.batching.shape_classes import COMPILED_CLASSES, shape_classes
from tx_keras.training.run.config_check import ConfigError, check_config


@pytest.mark.parametrize(
    ("settings", "classes"),
    [
        ({"backend": "tensorflow", "jit_compile": "auto", "batching": "bucket"}, None),
        ({"backend": "tensorflow", "jit_compile": True, "batching": "bucket"}, COMPILED_CLASSES),
        ({"backend": "jax", "jit_compile": "auto", "batching": "bucket"}, COMPILED_CLASSES),
        ({"backend": "jax", "jit_compile": "auto", "batching": "fixed"}, None),
        ({"backend": "jax", "jit_compile": "auto", "batching": "bucket", "shape_classes": None}, None),
        ({"backend": "tensorflow", "jit_compile": "auto", "batching": "bucket", "shape_classes": 3}, 3),
    ],
)
def test_auto_takes_a_few_shapes_only_for_a_compiled_bucketed_step(settings, classes):
    assert shape_classes(SimpleNamespace(**{"shape_classes": "auto", **settings})) == classes


def test_the_presets_say_auto_and_pass_the_config_check():
    with initialize_config_module(config_module="tx_keras.conf", version_base="1.3"):
        for overrides in ([], ["experiment=tatoeba_small", "data.path=x.tsv"], ["trainer.backend=jax"]):
            cfg = compose(config_name="config", overrides=overrides)
            assert cfg.trainer.shape_classes == "auto"
            check_config(cfg)
        with pytest.raises(ConfigError, match="trainer.shape_classes"):
            check_config(compose(config_name="config", overrides=["trainer.shape_classes=fast"]))
