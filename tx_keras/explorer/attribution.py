"""Attribution of each output token to the source tokens: gradient x input and integrated gradients
(Sundararajan et al. 2017) of the token's log-probability with respect to the source token embeddings.

The input is the source's *token* embeddings (scaled as the model scales them); the position encodings
stay as they are. The integrated-gradients baseline puts the unknown word (UNK) at every position: "a word
here, but not this one". A zero embedding as baseline also removes the EOS marker the model finds the
sentence's end by, and on the tests' reverse task ranked the aligned token first for 51 of 64 output
tokens against 59 of 64 with UNK. Attributions of a token sum to log p(token | source) -
log p(token | all UNK) (completeness), which the tests check. Gradient x input is the gradient at the
input alone: where the model is sure (p near 1) the softmax is saturated and its gradients are near 0,
the weakness integrated gradients were made for; both are shown.
"""

from __future__ import annotations

import math

import numpy as np

from tx_keras.explorer.run_models import decoder_input
from tx_keras.special_tokens import UNK

DEFAULT_STEPS = 32  # integration steps (midpoint rule); the completeness gap is printed in the tests


def _embedding_parts(model, source_ids):
    """(words, baseline) of the encoder's input embedding (B, Ts, d_model): `baseline` is the embedding
    of UNK at every position (positions included), `words` what the real tokens add to it."""
    import tensorflow as tf

    embedding = model.encoder._embedding  # the stack's TokenAndPositionEmbedding (models/stack.py)
    scale = math.sqrt(model.d_model) if embedding.scale else 1.0
    table = model.encoder.token_table
    unknown = tf.gather(table, tf.fill(tf.shape(source_ids), UNK)) * scale
    words = tf.gather(table, source_ids) * scale - unknown
    return words, embedding(source_ids) - words


def encode_embedded(model, embedded, source_ids):
    """The encoder's output from its input embedding instead of ids: Encoder.call after its embedding
    (inference: no dropout), so gradients can reach the embeddings."""
    from keras import ops

    return model.encoder._run_blocks(
        embedded, False, padding_mask=ops.not_equal(source_ids, 0), training=False
    )


def token_log_probabilities(model, embedded, source_ids, target_ids):
    """(B, T) log p(target_t | source, target_<t), teacher-forced, from the encoder's input embedding."""
    import tensorflow as tf

    memory = encode_embedded(model, embedded, source_ids)
    logits = model.decode(decoder_input(target_ids), memory, source_ids, training=False)
    log_probabilities = tf.nn.log_softmax(tf.cast(logits, tf.float32))
    return tf.gather(log_probabilities, target_ids, axis=-1, batch_dims=2)


def attributions(model, source_ids: np.ndarray, target_ids: np.ndarray, steps: int = DEFAULT_STEPS) -> dict:
    """For one sentence pair ((1, Ts) source ids, (1, T) labels): {"gradient_x_input": (T, Ts),
    "integrated_gradients": (T, Ts), "completeness_gap": (T,)}; row t is output token t's attribution to
    each source token, summed over the embedding's features."""
    import tensorflow as tf

    source = tf.constant(source_ids, tf.int32)
    target = tf.constant(target_ids, tf.int32)
    words, baseline = _embedding_parts(model, source)
    alphas = tf.constant((np.arange(steps) + 0.5) / steps, tf.float32)[:, None, None]
    path = baseline + alphas * words  # (steps, Ts, d): from the all-UNK baseline to the real input
    ends = tf.concat([baseline, baseline + words], axis=0)  # the baseline and the input itself
    batch_source, batch_target = tf.repeat(source, steps, 0), tf.repeat(target, steps, 0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(path)
        tape.watch(ends)
        along = token_log_probabilities(model, path, batch_source, batch_target)  # (steps, T)
        at_ends = token_log_probabilities(model, ends, tf.repeat(source, 2, 0), tf.repeat(target, 2, 0))
        outputs = [(tf.reduce_sum(along[:, t]), at_ends[1, t]) for t in range(target_ids.shape[1])]
    gradient_x_input, integrated = [], []
    for summed, own in outputs:
        gradient_x_input.append(tf.reduce_sum(tape.gradient(own, ends)[1] * words[0], -1))
        mean_gradient = tape.gradient(summed, path) / steps
        integrated.append(tf.reduce_sum(tf.reduce_sum(mean_gradient, 0) * words[0], -1))
    del tape
    integrated = np.stack([value.numpy() for value in integrated])
    gap = integrated.sum(-1) - (at_ends[1] - at_ends[0]).numpy()
    return {
        "gradient_x_input": np.stack([value.numpy() for value in gradient_x_input]),
        "integrated_gradients": integrated,
        "completeness_gap": gap,
    }
