"""The reported loss is a per-token mean over the epoch, whatever the batches' shapes."""

from collections import Counter

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.eager import context

from tx_keras.training.step.masked_accuracy import MaskedAccuracy
from tx_keras.training.step.masked_loss import MaskedCrossEntropy
from tx_keras.training.step.token_mean_loss import TokenMeanLoss

VOCAB = 7


def _model(label_smoothing: float = 0.0) -> keras.Model:
    """Ids (B, T) -> logits (B, T, V): enough to give every position its own loss."""
    keras.utils.set_random_seed(3)
    model = keras.Sequential(
        [keras.Input((None,), dtype="int32"), keras.layers.Embedding(VOCAB, 4), keras.layers.Dense(VOCAB)]
    )
    model.compile(
        optimizer=keras.optimizers.SGD(0.0),  # weights never move: fit's figure is checkable by hand
        loss=MaskedCrossEntropy(label_smoothing),
        metrics=[TokenMeanLoss(label_smoothing), MaskedAccuracy()],
    )
    return model


def _two_batches() -> tuple[list, tf.data.Dataset]:
    """4 rows of 1 real token, then 1 row of 8: a token-budget batcher's short and long batches."""
    rng = np.random.default_rng(0)
    short_x = rng.integers(1, VOCAB, (4, 1)).astype("int32")
    short_y = rng.integers(1, VOCAB, (4, 1)).astype("int32")
    long_x = rng.integers(1, VOCAB, (1, 8)).astype("int32")
    long_y = rng.integers(1, VOCAB, (1, 8)).astype("int32")
    batches = [(short_x, short_y), (long_x, long_y)]
    dataset = tf.data.Dataset.from_tensors(batches[0]).concatenate(tf.data.Dataset.from_tensors(batches[1]))
    return batches, dataset


def test_epoch_loss_is_the_mean_over_tokens_not_rows():
    model = _model()
    batches, dataset = _two_batches()
    per_position = [
        keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True).numpy()
        for x, y in batches
    ]
    per_token = np.concatenate([p.ravel() for p in per_position]).mean()  # 12 tokens
    per_row = (4 * per_position[0].mean() + 1 * per_position[1].mean()) / 5  # what Keras' tracker gives
    assert abs(per_token - per_row) > 0.01  # the two averages differ on these batches
    logs = model.evaluate(dataset, verbose=0, return_dict=True)
    assert logs["loss"] == pytest.approx(per_token, rel=1e-5)
    history = model.fit(dataset, validation_data=dataset, epochs=1, shuffle=False, verbose=0).history
    assert history["loss"][0] == pytest.approx(per_token, rel=1e-5)
    assert history["val_loss"][0] == pytest.approx(per_token, rel=1e-5)


def test_padding_counts_no_tokens():
    metric = TokenMeanLoss()
    logits = np.random.default_rng(1).normal(size=(1, 4, VOCAB)).astype("float32")
    metric.update_state(np.array([[3, 2, 0, 0]]), logits)
    assert float(metric.tokens) == 2.0
    assert float(metric.result()) == pytest.approx(
        float(MaskedCrossEntropy()(np.array([[3, 2, 0, 0]]), logits))
    )


def test_label_smoothing_is_the_training_loss_s_and_round_trips():
    metric = TokenMeanLoss(0.1)
    labels = np.array([[1, 2]])
    logits = np.random.default_rng(2).normal(size=(1, 2, VOCAB)).astype("float32")
    metric.update_state(labels, logits)
    assert float(metric.result()) == pytest.approx(float(MaskedCrossEntropy(0.1)(labels, logits)), rel=1e-6)
    assert TokenMeanLoss.from_config(metric.get_config()).label_smoothing == 0.1


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_a_training_step_computes_the_softmax_once(smoothing):
    """The metric's cross-entropy is the loss's own subgraph, so TensorFlow's graph optimizer merges the two:
    one softmax over the vocabulary a step, not two (the ops the step ran, after optimisation; with or
    without label smoothing the loss is written around the softmax kernel, which oneDNN renames
    `_MklSoftmax`, and TensorFlow's fused cross-entropy kernel does not run)."""
    model = _model(smoothing)
    ids = np.random.default_rng(4).integers(1, VOCAB, (4, 6)).astype("int32")
    context.enable_run_metadata()  # TensorFlow's record of the graphs a call ran, as they were optimised
    try:
        model.train_on_batch(ids, ids)
        graphs = context.export_run_metadata().function_graphs
    finally:
        context.disable_run_metadata()
    ran = Counter(node.op for graph in graphs for node in graph.post_optimization_graph.node)
    assert ran["Softmax"] + ran["_MklSoftmax"] == 1
    assert ran["SoftmaxCrossEntropyWithLogits"] == 0
