"""Turning a trained Transformer's logits into sentences, one word at a time until EOS.

- `greedy`: the reference, the TensorFlow tutorial's decoding: the decoder's call re-reads every word so far.
- `cached_greedy`: the same words, each step reading one new position through key/value caches.
- `beam_search`: the `width` best hypotheses on the cached step, GNMT's length penalty.
- `cached_step`: the step both cached decoders take (the decoder's own call with caches).
- `position_write`: the one helper that writes a value at a position (caches, chosen words, attention rows).
- `batches`: a decoder run over a whole split in batches.

The submodules are imported directly (`from tx_keras.decoding.beam_search import beam_search_decoder`): the
attention layers use `position_write`, so this package imports nothing that imports them back.
"""
