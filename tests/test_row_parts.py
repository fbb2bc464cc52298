"""Decoding a batch as independent loops over parts of its rows: same words, both cores."""

import numpy as np
import pytest
import tensorflow as tf

from tx_keras.decoding import row_parts
from tx_keras.decoding.beam_search import beam_search_decoder
from tx_keras.decoding.cached_greedy import cached_greedy_decoder
from tx_keras.decoding.greedy import greedy_decoder
from tx_keras.decoding.row_parts import concurrent_loops, in_row_parts, plan_decoding_threads
from tx_keras.runtime import thread_pools


def _decoders(model, monkeypatch, loops: int) -> list:
    """The three decoders, compiled to decode in `loops` loops whatever this machine's cores."""
    monkeypatch.setattr("tx_keras.decoding.compiled_decoder.concurrent_loops", lambda: loops)
    length = model.max_target_length
    return [
        cached_greedy_decoder(model, length, return_attention_scores=True),
        greedy_decoder(model, length),
        beam_search_decoder(model, length, width=3, alpha=0.6, return_attention_scores=True),
    ]


def test_the_parts_give_the_words_and_attention_of_one_loop(copy_model, monkeypatch):
    """1 row: one part is empty; 7 rows: parts of 3 and 4 (one trace each decoder serves both)."""
    model, source = copy_model
    parted, whole = _decoders(model, monkeypatch, 2), _decoders(model, monkeypatch, 1)
    for rows in (1, 7):
        batch = tf.constant(source[:rows])
        for split, one in zip(parted, whole, strict=True):
            got, expected = split(batch), one(batch)
            if isinstance(expected, tuple):
                np.testing.assert_array_equal(got[0], expected[0])
                np.testing.assert_allclose(got[1], expected[1], rtol=1e-5, atol=1e-6)
            else:
                np.testing.assert_array_equal(got, expected)


def test_two_cores_decode_in_two_loops(copy_model, monkeypatch):
    """On 2 cores (CI's machine) the compiled decoder holds two while loops, one per half of the rows."""
    monkeypatch.setattr(thread_pools, "usable_cores", lambda: 2)
    monkeypatch.delenv("TF_NUM_INTEROP_THREADS", raising=False)
    monkeypatch.setattr(tf.config.threading, "get_inter_op_parallelism_threads", lambda: 0)  # the default
    model, source = copy_model
    decode = cached_greedy_decoder(model, model.max_target_length)
    graph = decode.get_concrete_function().graph.as_graph_def()
    loops = [node for node in graph.node if node.op in ("While", "StatelessWhile")]
    assert len(loops) == 2


@pytest.mark.parametrize(
    ("environment", "cores", "expected"), [("1", 8, 1), ("4", 1, 2), (None, 1, 1), (None, 16, 2)]
)
def test_as_many_loops_as_inter_op_threads_at_most_two(monkeypatch, environment, cores, expected):
    monkeypatch.setattr(tf.config.threading, "get_inter_op_parallelism_threads", lambda: 0)  # the default
    monkeypatch.setattr(thread_pools, "usable_cores", lambda: cores)
    if environment is None:
        monkeypatch.delenv("TF_NUM_INTEROP_THREADS", raising=False)
    else:
        monkeypatch.setenv("TF_NUM_INTEROP_THREADS", environment)
    assert concurrent_loops() == expected


def test_an_empty_part_and_tuple_outputs_concatenate_in_row_order():
    def decode(source):
        return source * 10, tf.cast(source, tf.float32)[:, :1]

    parted = tf.function(in_row_parts(decode, 2), input_signature=[tf.TensorSpec([None, None], tf.int32)])
    one_row = parted(tf.constant([[1, 2]]))
    np.testing.assert_array_equal(one_row[0], [[10, 20]])
    ids, first = parted(tf.constant([[1, 2], [3, 4], [5, 6]]))
    np.testing.assert_array_equal(ids, [[10, 20], [30, 40], [50, 60]])
    np.testing.assert_array_equal(first, [[1.0], [3.0], [5.0]])


def test_the_decoding_plan_sets_the_pools_on_two_cores_unless_the_user_did(monkeypatch, recorded_pools):
    """tx-translate's plan, through tf.config.threading."""
    pools = recorded_pools
    monkeypatch.setattr(row_parts, "usable_cores", lambda: 2)
    line = plan_decoding_threads()
    assert line.endswith("(decoding in 2 row parts)") and pools == {"intra": 1, "inter": 2}
    pools.clear()
    monkeypatch.setenv("TF_NUM_INTEROP_THREADS", "1")  # the user's: one loop, their pools
    assert "left as TF_NUM_INTEROP_THREADS=1" in plan_decoding_threads() and pools == {}
    monkeypatch.delenv("TF_NUM_INTEROP_THREADS")
    monkeypatch.setattr(row_parts, "usable_cores", lambda: 8)  # not measured there: TensorFlow's defaults
    assert "defaults" in plan_decoding_threads() and pools == {}
    monkeypatch.setattr(row_parts, "usable_cores", lambda: 2)
    for loops in (1, None):  # an export traced with one loop, or one that does not say: one core would idle
        assert "defaults" in plan_decoding_threads(loops) and pools == {}
