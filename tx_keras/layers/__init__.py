"""The lecture's building blocks as serializable Keras layers."""

from tx_keras.kernels.layer_norm import LayerNorm
from tx_keras.layers.add_norm import AddNorm
from tx_keras.layers.aligned_attention import AlignedAttention
from tx_keras.layers.attention import SelfAttention, scaled_dot_product_attention
from tx_keras.layers.embedding import TokenAndPositionEmbedding
from tx_keras.layers.feed_forward import FeedForward
from tx_keras.layers.learned_positions import LearnedPositions
from tx_keras.layers.looped_multi_head import LoopedMultiHeadAttention
from tx_keras.layers.multi_head import MultiHeadAttention
from tx_keras.layers.rotary_positions import RotaryPositions
from tx_keras.layers.sinusoidal_positions import SinusoidalPositions

__all__ = [
    "AddNorm",
    "AlignedAttention",
    "FeedForward",
    "LayerNorm",
    "LearnedPositions",
    "LoopedMultiHeadAttention",
    "MultiHeadAttention",
    "RotaryPositions",
    "SelfAttention",
    "SinusoidalPositions",
    "TokenAndPositionEmbedding",
    "scaled_dot_product_attention",
]
