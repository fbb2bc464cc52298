"""Where LayerNorm sits around each sublayer: the values of `model.norm`.

A leaf below the layers: AddNorm (layers) checks its argument against it and the config check reads it
before TensorFlow starts, so neither imports the other's package (tests/test_import_layers.py).
"""

# post: the paper, LayerNorm(x + F(x)); pre: x + F(LayerNorm(x)), most modern stacks; none: no norm.
NORM_MODES = ("post", "pre", "none")
