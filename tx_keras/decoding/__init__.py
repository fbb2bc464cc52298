"""Turning a trained Transformer's logits into sentences, one word at a time until EOS.

- `greedy`: the reference, the TensorFlow tutorial's decoding: the decoder's call re-reads every word so far.
- `cached_greedy`: the same words, each step reading one new position through key/value caches.
- `beam_search`: the `width` best hypotheses on the cached step, GNMT's length penalty.
- `cached_step`: the step both cached decoders take (the decoder's own call with caches).
- `compiled_decoder`: the one place that compiles a decoder for the backend (tf.function or jax.jit), and
  `decode_in_batches`, a compiled decoder run over a whole split.

The decoders are written once in `keras.ops` (`ops.while_loop` over fixed-size buffers, as KerasHub's
samplers are) and run on TensorFlow and JAX; only `compiled_decoder` imports either, and TensorFlow only
on that backend. On TensorFlow a decoder returns tensors, on JAX numpy arrays: `decode_in_batches` and
evaluation/sorted_decoding.py read both through `keras.ops.convert_to_numpy`.

The submodules are imported directly (`from tx_keras.decoding.beam_search import beam_search_decoder`).
Values are written at a position (chosen words, attention rows) with the attention layers' own helper,
tx_keras/layers/position_write.py: decoding sits above the models and the layers, never below them.
"""
