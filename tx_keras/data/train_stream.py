"""The training split of a streamed corpus as a tf.data pipeline: lines read from the prepared part files,
tokenized in the graph, batched by length over a bounded buffer. Memory is set by the buffers, not the corpus.

An epoch is one pass over the parts. Its order is a pure function of (seed, epoch): the parts are read in a
permutation drawn from both, and the pairs pass a shuffle buffer seeded by both; nothing depends on how many
times the pipeline was iterated before. So a resumed run (the trainer sets `epoch` and `skip` before an
epoch's iterator opens, as for data/pipeline.py) sees the same batches as an uninterrupted one.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tensorflow as tf

from tx_keras.data.batching import BATCHING
from tx_keras.data.length_batches import batch_width, bucket_widths, length_batches
from tx_keras.data.text_tokenizer import TextTokenizer
from tx_keras.data.vocabulary import Vocabulary
from tx_keras.run_folder.atomic_write import atomic_file

_TOKENIZE_BATCH = 1024


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
    counts_file: str  # where bucket_counts caches its count (a path prefix; the shard is appended)
    shard_index: int = 0
    shard_count: int = 1

    def shard(self, index: int, count: int) -> TrainStream:
        """This stream's share for process `index` of `count` (data parallel): every count-th line of each
        part, so the processes read disjoint pairs and together the whole corpus."""
        if not 0 <= index < count:
            raise ValueError(f"shard index {index} is not in [0, {count})")
        return dataclasses.replace(self, shard_index=index, shard_count=count)

    def dataset(
        self,
        batch_size: int,
        batch_tokens: int | None,
        batching: str,
        seed: int,
        epoch: tf.Variable | int = 0,
        skip: tf.Variable | None = None,
    ) -> tf.data.Dataset:
        """`((source, decoder_input), labels)` int32 batches, as data.make_dataset yields them; `skip`
        batches at the epoch's start are left out (a run resumed inside an epoch)."""
        if batching not in BATCHING:
            raise ValueError(f"batching={batching!r}; choose one of: {', '.join(BATCHING)}")
        widths = bucket_widths(max(self.source_width, self.target_width))
        sizes = [batch_size if batch_tokens is None else max(1, batch_tokens // int(w)) for w in widths]
        counts = self.bucket_counts()
        if batching == "fixed":
            length = -(-int(counts.sum()) // batch_size)
        else:
            length = sum(-(-int(count) // size) for count, size in zip(counts, sizes, strict=True))

        def start(_):
            """Runs each time an iteration starts, so it reads the epoch and skip the trainer has just set."""
            current = tf.cast(tf.convert_to_tensor(epoch), tf.int64)
            skipped = tf.cast(tf.convert_to_tensor(0 if skip is None else skip), tf.int64)
            return current, skipped

        def epoch_batches(current: tf.Tensor, skipped: tf.Tensor) -> tf.data.Dataset:
            key = tf.random.experimental.stateless_fold_in(tf.constant([seed, 0], tf.int64), current)

            def shuffled(index: tf.Tensor, window: tf.Tensor) -> tf.Tensor:
                """A window of lines in an order drawn from (seed, epoch, window)."""
                window_key = tf.random.experimental.stateless_fold_in(key, index)
                return tf.random.experimental.stateless_shuffle(window, seed=window_key)

            files = tf.random.experimental.stateless_shuffle(tf.constant(list(self.files)), seed=key)
            lines = self._lines(files).batch(self.shuffle_buffer).enumerate().map(shuffled).unbatch()
            rows = self._tokenized(lines)
            if batching == "fixed":
                shapes = ([self.source_width], [self.target_width])
                batches = rows.padded_batch(batch_size, padded_shapes=shapes)
            else:
                batches = rows.bucket_by_sequence_length(
                    lambda source, target: tf.maximum(tf.size(source), tf.size(target)),
                    bucket_boundaries=[int(w) + 1 for w in widths],
                    bucket_batch_sizes=[*sizes, 1],
                    pad_to_bucket_boundary=True,
                )
            return batches.skip(skipped)

        def teacher_forced(source: tf.Tensor, target: tf.Tensor):
            source, target = source[:, : self.source_width], target[:, : self.target_width]
            return (source, target[:, :-1]), target[:, 1:]

        batches = tf.data.Dataset.from_tensors(0).map(start).flat_map(epoch_batches)
        # The epoch's length, declared: Keras then runs exactly that many steps and never one past the end
        # to find it (such a step advances the dropout seeds and the step counter, so a resumed run, whose
        # shortened epoch the trainer ends by hand, would drift by one; data/batch_skip.py).
        batches = batches.apply(tf.data.experimental.assert_cardinality(length))
        return batches.map(teacher_forced).prefetch(tf.data.AUTOTUNE)

    def _lines(self, files) -> tf.data.Dataset:
        """The lines of `files` in that order, this shard's only: every shard_count-th line of each file, so
        a shard holds the same pairs in every epoch."""
        if self.shard_count == 1:
            return tf.data.Dataset.from_tensor_slices(files).flat_map(tf.data.TextLineDataset)
        count, index = self.shard_count, self.shard_index
        return tf.data.Dataset.from_tensor_slices(files).flat_map(
            lambda file: tf.data.TextLineDataset(file).shard(count, index)
        )

    def _tokenized(self, lines: tf.data.Dataset) -> tf.data.Dataset:
        """(source row, target row) per line, the rows that fit the widths only."""
        return (
            lines.batch(_TOKENIZE_BATCH)
            .map(self._rows, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
            .unbatch()
            .map(_unpadded)
            .filter(self._fits)
        )

    def bucket_counts(self) -> np.ndarray:
        """Training rows per bucket width (this shard's): the same in every epoch, so an epoch's batch count
        is known before it runs. Counted by one pass over the stream, cached in `counts_file` (per shard)."""
        widths = bucket_widths(max(self.source_width, self.target_width))
        path = Path(f"{self.counts_file}-{self.shard_index}-of-{self.shard_count}.json")
        if path.exists():
            return np.array(json.loads(path.read_text()), np.int64)
        boundaries = tf.constant(widths, tf.int32)
        lengths = self._tokenized(self._lines(tf.constant(list(self.files)))).map(
            lambda source, target: tf.maximum(tf.size(source), tf.size(target))
        )
        counts = lengths.batch(_TOKENIZE_BATCH).reduce(
            tf.zeros([len(widths)], tf.int64),
            lambda total, batch: (
                total
                + tf.math.bincount(
                    tf.searchsorted(boundaries, batch, side="left"), minlength=len(widths), dtype=tf.int64
                )[: len(widths)]
            ),
        )
        counts = counts.numpy()
        with atomic_file(path) as temp:
            Path(temp).write_text(json.dumps(counts.tolist()))
        return counts

    def _rows(self, lines: tf.Tensor):
        """Lines `source<TAB>target` -> ragged `tokens EOS` and `SOS tokens EOS` rows."""
        sides = tf.strings.split(lines, "\t").to_tensor(shape=[None, 2])
        source = self.source_tokenizer.tokenize(sides[:, 0])
        target = self.target_tokenizer.tokenize(sides[:, 1])
        rows = tf.shape(lines, out_type=tf.int64)[:1]
        eos = tf.fill(tf.concat([rows, [1]], 0), Vocabulary.EOS)
        sos = tf.fill(tf.concat([rows, [1]], 0), Vocabulary.SOS)
        source, target = tf.concat([source, eos], axis=1), tf.concat([sos, target, eos], axis=1)
        # Padded, with lengths: padded_batch takes dense elements only (an unbatched ragged row is not).
        return source.to_tensor(), source.row_lengths(), target.to_tensor(), target.row_lengths()

    def _fits(self, source: tf.Tensor, target: tf.Tensor) -> tf.Tensor:
        return tf.logical_and(tf.size(source) <= self.source_width, tf.size(target) <= self.target_width)

    def epoch_estimate(
        self, batch_size: int, batch_tokens: int | None, batching: str, seed: int
    ) -> tuple[int, float, float]:
        """(steps, padding share, real tokens per step) of an epoch, from the sample's lengths scaled to the
        corpus (a shard's share): the progress line, the cooldown clock and the summary read these."""
        lengths = self.sample_lengths
        pairs = max(1, -(-self.pairs // self.shard_count))
        if batching == "fixed" or not len(lengths):
            steps = -(-pairs // batch_size)
            padding = 1.0 - self.sample_tokens / (self.source_width + self.target_width)
        else:
            batches = length_batches(lengths, batch_size, batch_tokens, seed, 0)
            steps = max(1, round(len(batches) * pairs / len(lengths)))
            widths = bucket_widths(max(self.source_width, self.target_width))
            computed = sum(
                len(rows) * (min(w, self.source_width) + min(w, self.target_width))
                for rows in batches
                for w in [int(batch_width(lengths[rows].max(), widths))]
            )
            padding = 1.0 - self.sample_tokens * len(lengths) / computed
        return steps, round(float(padding), 4), self.sample_tokens * pairs / steps


def _unpadded(source: tf.Tensor, source_length: tf.Tensor, target: tf.Tensor, target_length: tf.Tensor):
    """One row pair without the padding of its tokenization batch."""
    return source[:source_length], target[:target_length]
