"""The training split of a streamed corpus as a tf.data pipeline: lines read from the prepared part files,
tokenized in the graph, batched by length over a bounded buffer. Memory is set by the buffers, not the corpus.

An epoch is one pass over the parts. Its order is a pure function of (seed, epoch): the parts are read in a
permutation drawn from both, and the pairs pass a shuffle buffer seeded by both; nothing depends on how many
times the pipeline was iterated before. So a resumed run (the trainer sets `epoch` and `skip` before an
epoch's iterator opens, as for data/batching/pipeline.py) sees the same batches as an uninterrupted one.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from tx_keras.data.batching import BATCHING
from tx_keras.data.batching.autotune_thread import without_autotune_thread
from tx_keras.data.batching.length_batches import batch_width, bucket_widths, length_batches
from tx_keras.data.batching.window_buckets import single_rows, window_batches
from tx_keras.data.text_tokenizer import TextTokenizer
from tx_keras.data.vocabulary import Vocabulary


@dataclass(frozen=True)
class TrainStream:
    """What the training dataset needs; `sample_lengths` (the vocabulary sample's row lengths) stands for the
    corpus when the trainer asks how an epoch will look before it runs (`epoch_estimate`)."""

    files: tuple[str, ...]
    source_tokenizer: TextTokenizer
    target_tokenizer: TextTokenizer
    source_width: int  # widest source row (tokens + EOS); longer training rows are left out
    target_width: int  # widest target row (SOS + tokens + EOS)
    pairs: int  # training pairs in the files
    shuffle_buffer: int  # lines per shuffled window
    sample_lengths: np.ndarray  # max(source, target) row length per sampled pair
    sample_tokens: float  # mean real tokens (both sides) per sampled pair
    shard_index: int = 0
    shard_count: int = 1

    def shard(self, index: int, count: int) -> TrainStream:
        """This stream's share for process `index` of `count` (data parallel): every count-th line of each
        epoch's shuffled pass, so the processes train disjoint pairs and together the whole corpus (each
        reads the files through, and tokenizes and batches its own lines only)."""
        if not 0 <= index < count:
            raise ValueError(f"shard index {index} is not in [0, {count})")
        return dataclasses.replace(self, shard_index=index, shard_count=count)

    def epoch_steps(self, batch_size: int, batch_tokens: int | None, batching: str) -> int:
        """Batches in an epoch: the sample's rows per bucket width scaled to the corpus (this shard's share),
        batched as the stream batches them. Known at once, the same in every process and every run (no pass
        over the corpus before training), so Keras runs exactly that many steps an epoch."""
        pairs = max(1, -(-self.pairs // self.shard_count))
        if batching == "fixed" or not len(self.sample_lengths):
            return -(-pairs // batch_size)
        widths = bucket_widths(max(self.source_width, self.target_width))
        sizes = [batch_size if batch_tokens is None else max(1, batch_tokens // int(w)) for w in widths]
        sampled = np.bincount(
            np.searchsorted(widths, self.sample_lengths, side="left"), minlength=len(widths)
        )[: len(widths)]
        scale = pairs / len(self.sample_lengths)
        batches = (int(np.ceil(count * scale / size)) for count, size in zip(sampled, sizes, strict=True))
        return max(1, sum(batches))

    def dataset(
        self,
        batch_size: int,
        batch_tokens: int | None,
        batching: str,
        seed: int,
        epoch: tf.Variable | int = 0,
        skip: tf.Variable | None = None,
        steps: int | None = None,
        left_out: tf.Variable | None = None,
    ) -> tf.data.Dataset:
        """`((source, decoder_input), labels)` int32 batches, as data.make_dataset yields them; `skip`
        batches at the epoch's start are left out (a run resumed inside an epoch).

        An epoch is `steps` batches (default: epoch_steps): the pass of the parts drawn from (seed, epoch),
        continued by the next pass of that epoch's order if the estimate runs past it, cut where it ends if
        it falls short (by the sample's sampling error, well under 1 % of the pairs at 200k sampled). Rows
        wider than the widths are left out and counted in `left_out` (cumulative over the process's passes).
        """
        if batching not in BATCHING:
            raise ValueError(f"batching={batching!r}; choose one of: {', '.join(BATCHING)}")
        widths = bucket_widths(max(self.source_width, self.target_width))
        sizes = [batch_size if batch_tokens is None else max(1, batch_tokens // int(w)) for w in widths]
        length = self.epoch_steps(batch_size, batch_tokens, batching) if steps is None else steps

        def start(_):
            """Runs each time an iteration starts, so it reads the epoch and skip the trainer has just set."""
            current = tf.cast(tf.convert_to_tensor(epoch), tf.int64)
            skipped = tf.cast(tf.convert_to_tensor(0 if skip is None else skip), tf.int64)
            return current, skipped

        def epoch_batches(current: tf.Tensor, skipped: tf.Tensor) -> tf.data.Dataset:
            key = tf.random.experimental.stateless_fold_in(tf.constant([seed, 0], tf.int64), current)

            def pass_batches(number: tf.Tensor) -> tf.data.Dataset:
                """The epoch's pass `number` over the parts (0, and 1 if the epoch runs past the first):
                bucketed batches (a pass's last ones flushed at its end), or rows for fixed batching."""
                pass_key = tf.random.experimental.stateless_fold_in(key, number)

                def shuffled(index: tf.Tensor, window: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
                    """A window of lines in an order drawn from (seed, epoch, pass, window)."""
                    window_key = tf.random.experimental.stateless_fold_in(pass_key, index)
                    return index, tf.random.experimental.stateless_shuffle(window, seed=window_key)

                files = tf.random.experimental.stateless_shuffle(tf.constant(list(self.files)), seed=pass_key)
                windows = self._lines(files).batch(self.shuffle_buffer).enumerate().map(shuffled)
                rows = windows.map(
                    lambda index, window: self._window_rows(index, window, left_out),
                    num_parallel_calls=tf.data.AUTOTUNE,
                    deterministic=True,
                )
                return single_rows(rows) if batching == "fixed" else window_batches(rows, widths, sizes)

            # At most `length` passes: a stream whose rows all fall outside the widths ends, not loops.
            passes = tf.data.Dataset.range(length).flat_map(pass_batches)
            if batching == "fixed":  # full batches across a pass's end: one shape in every process
                shapes = ([self.source_width], [self.target_width])
                passes = passes.padded_batch(batch_size, padded_shapes=shapes)
            return passes.take(length).skip(skipped)

        def teacher_forced(source: tf.Tensor, target: tf.Tensor):
            source, target = source[:, : self.source_width], target[:, : self.target_width]
            return (source, target[:, :-1]), target[:, 1:]

        batches = tf.data.Dataset.from_tensors(0).map(start).flat_map(epoch_batches)
        # The epoch's length, declared: Keras then runs exactly that many steps and never one past the end
        # to find it (such a step advances the dropout seeds and the step counter, so a resumed run, whose
        # shortened epoch the trainer ends by hand, would drift by one; data/batching/batch_skip.py).
        batches = batches.apply(tf.data.experimental.assert_cardinality(length))
        return without_autotune_thread(batches.map(teacher_forced).prefetch(tf.data.AUTOTUNE))

    def _lines(self, files) -> tf.data.Dataset:
        """The lines of `files` in that order."""
        return tf.data.Dataset.from_tensor_slices(files).flat_map(tf.data.TextLineDataset)

    def _window_rows(self, index: tf.Tensor, lines: tf.Tensor, left_out: tf.Variable | None) -> tuple:
        """This shard's rows of window `index` that fit the widths (window_batches.Rows); the others are
        added to `left_out`. The shard's lines are every shard_count-th of the pass: disjoint, sizes differ
        by one at most."""
        first = tf.math.floormod(self.shard_index - index * self.shuffle_buffer, self.shard_count)
        source, target = self._pairs(lines[first :: self.shard_count])
        fits = tf.logical_and(
            source.row_lengths() <= self.source_width, target.row_lengths() <= self.target_width
        )
        if left_out is not None:
            wide = tf.reduce_sum(tf.cast(tf.logical_not(fits), tf.int64))
            with tf.control_dependencies([left_out.assign_add(wide)]):
                fits = tf.identity(fits)
        source, target = tf.ragged.boolean_mask(source, fits), tf.ragged.boolean_mask(target, fits)
        return source.flat_values, source.row_lengths(), target.flat_values, target.row_lengths()

    def _pairs(self, lines: tf.Tensor) -> tuple[tf.RaggedTensor, tf.RaggedTensor]:
        """Lines `source<TAB>target` -> ragged `tokens EOS` and `SOS tokens EOS` rows."""
        sides = tf.strings.split(lines, "\t").to_tensor(shape=[None, 2])
        source = self.source_tokenizer.tokenize(sides[:, 0])
        target = self.target_tokenizer.tokenize(sides[:, 1])
        rows = tf.shape(lines, out_type=tf.int64)[:1]
        eos = tf.fill(tf.concat([rows, [1]], 0), Vocabulary.EOS)
        sos = tf.fill(tf.concat([rows, [1]], 0), Vocabulary.SOS)
        return tf.concat([source, eos], axis=1), tf.concat([sos, target, eos], axis=1)

    def epoch_estimate(
        self, batch_size: int, batch_tokens: int | None, batching: str, seed: int
    ) -> tuple[int, float, float]:
        """(steps, padding share, real tokens per step) of an epoch, from the sample's lengths scaled to the
        corpus (a shard's share): the progress line, the cooldown clock and the summary read these. The steps
        are the epoch's own (epoch_steps); the padding share is estimated."""
        lengths = self.sample_lengths
        pairs = max(1, -(-self.pairs // self.shard_count))
        steps = self.epoch_steps(batch_size, batch_tokens, batching)
        if batching == "fixed" or not len(lengths):
            padding = 1.0 - self.sample_tokens / (self.source_width + self.target_width)
        else:
            batches = length_batches(lengths, batch_size, batch_tokens, seed, 0)
            widths = bucket_widths(max(self.source_width, self.target_width))
            computed = sum(
                len(rows) * (min(w, self.source_width) + min(w, self.target_width))
                for rows in batches
                for w in [int(batch_width(lengths[rows].max(), widths))]
            )
            padding = 1.0 - self.sample_tokens * len(lengths) / computed
        return steps, round(float(padding), 4), self.sample_tokens * pairs / steps
