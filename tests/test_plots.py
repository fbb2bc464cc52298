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


def test_heads_wrap_into_rows_of_four():
    four = attention_grid_image(_weights(4, 3, 3), list("abc"), list("abc"), "t")
    eight = attention_grid_image(_weights(8, 3, 3), list("abc"), list("abc"), "t")
    assert eight.shape[1] == four.shape[1] and eight.shape[0] > 1.4 * four.shape[0]


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
