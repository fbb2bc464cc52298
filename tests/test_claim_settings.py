"""A setting is a job's knobs without the seed; rules pick settings by parsed values."""

import pytest

from tx_keras.claims.settings import label, make_setting, parse_value, select, sort_key, value_of


def test_values_parse_as_hydra_reads_them():
    assert [parse_value(text) for text in ("true", "False", "4", "1e-2", "0.003", "lookup")] == [
        True,
        False,
        4,
        0.01,
        0.003,
        "lookup",
    ]


def test_select_matches_parsed_values_and_refuses_ambiguity():
    stats = {
        make_setting({"trainer.learning_rate": "1e-2", "model.norm": "post"}): "a",
        make_setting({"trainer.learning_rate": "0.003", "model.norm": "post"}): "b",
    }
    assert select(stats, {"trainer.learning_rate": 0.01}) == "a"
    assert select(stats, {"trainer.learning_rate": "3e-3", "model.norm": "post"}) == "b"
    assert select(stats, {"model.norm": "pre"}) is None
    with pytest.raises(ValueError, match="matches 2 settings"):
        select(stats, {"model.norm": "post"})


def test_label_and_order_follow_the_knobs():
    knobs = ("model.num_encoder_layers", "model.residual")
    settings = [
        make_setting({"model.num_encoder_layers": depth, "model.residual": r})
        for depth in (8, 2)
        for r in ("true", "false")
    ]
    ordered = sorted(settings, key=lambda s: sort_key(s, knobs))
    assert [label(s, knobs) for s in ordered] == [
        "num_encoder_layers=2, residual=false",
        "num_encoder_layers=2, residual=true",
        "num_encoder_layers=8, residual=false",
        "num_encoder_layers=8, residual=true",
    ]
    assert value_of(ordered[0], "model.num_encoder_layers") == 2 and value_of(ordered[0], "seed") is None
