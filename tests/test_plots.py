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


def test_token_labels_fall_back_glyph_by_glyph_to_an_installed_font(monkeypatch):
    """A token whose glyphs DejaVu Sans lacks is drawn from a fallback font, not as empty boxes.

    Checked with fonts matplotlib ships, so on every machine: DejaVu Sans Mono has the arc signs
    U+2312..U+2314, DejaVu Sans does not."""
    from tx_keras.plots import attention_grid

    def image(tokens: list[str], fallbacks: tuple[str, ...]) -> np.ndarray:
        monkeypatch.setattr(attention_grid, "_FALLBACK_FONTS", fallbacks)
        attention_grid._token_fonts.cache_clear()
        return attention_grid_image(_weights(1, 3, 3), tokens, tokens, "t")

    try:
        latin = [image(list("abc"), fallbacks) for fallbacks in ((), ("DejaVu Sans Mono",))]
        arcs = [image(list("\u2312\u2313\u2314"), fallbacks) for fallbacks in ((), ("DejaVu Sans Mono",))]
        assert attention_grid._token_fonts() == ["DejaVu Sans", "DejaVu Sans Mono"]
    finally:
        attention_grid._token_fonts.cache_clear()
    np.testing.assert_array_equal(*latin)  # glyphs DejaVu Sans has are drawn with it either way
    assert not np.array_equal(*arcs)  # the others come from the fallback: the labels' pixels change
