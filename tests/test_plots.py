"""Attention heat-map grids: one RGB image per layer and kind, all heads in one mosaic."""

import numpy as np

from tx_keras.plots import attention_grid_image


def _weights(heads, queries, keys):
    weights = np.random.default_rng(0).random((heads, queries, keys))
    return weights / weights.sum(-1, keepdims=True)


def test_image_is_rgb_and_grows_with_the_sentence():
    short = attention_grid_image(_weights(4, 3, 5), list("abc"), list("vwxyz"), "cross layer 1")
    long = attention_grid_image(_weights(4, 9, 12), list("abcdefghi"), list("ABCDEFGHIJKL"), "cross layer 1")
    assert short.dtype == np.uint8 and short.ndim == 3 and short.shape[-1] == 3
    assert long.shape[0] > short.shape[0] and long.shape[1] > short.shape[1]
    assert short.std() > 10  # a picture, not a blank canvas


def test_heads_wrap_into_rows_of_two():
    two = attention_grid_image(_weights(2, 6, 6), list("abcdef"), list("abcdef"), "t")
    four = attention_grid_image(_weights(4, 6, 6), list("abcdef"), list("abcdef"), "t")
    assert four.shape[1] == two.shape[1] and four.shape[0] > 1.4 * two.shape[0]


def test_default_model_maps_fit_a_tensorboard_image_card():
    """4 heads over a 12-token sentence: about the width of TensorBoard's image card (~350 px), so the
    token labels are legible at the default size."""
    tokens = [f"word{i}" for i in range(12)]
    image = attention_grid_image(_weights(4, 12, 12), tokens, tokens, "cross-attention, layer 1, epoch 1")
    assert image.shape[1] <= 400, image.shape


def test_token_labels_fall_back_to_installed_fonts_for_other_scripts(monkeypatch):
    from types import SimpleNamespace

    from tx_keras.plots import attention_grid

    fonts = [SimpleNamespace(name="DejaVu Sans"), SimpleNamespace(name="Noto Sans CJK JP")]
    monkeypatch.setattr(attention_grid.font_manager.fontManager, "ttflist", fonts)
    attention_grid._token_fonts.cache_clear()
    try:
        assert attention_grid._token_fonts() == ["DejaVu Sans", "Noto Sans CJK JP"]  # only what is installed
    finally:
        attention_grid._token_fonts.cache_clear()
