"""data.tokenizer=auto: a side written without spaces (Japanese, Chinese, Thai) is tokenized as characters,
a spaced one with WordPiece, and the run folder's formats bring the same choice to the export."""

import json
from pathlib import Path

import pytest
import tensorflow as tf

from tests.test_parallel_text import _config as parallel_text_config
from tx_keras.data import build_task
from tx_keras.data.text_format import TextFormat, load_formats, save_formats
from tx_keras.data.unspaced_script import tokenizer_for, unspaced_share
from tx_keras.export.text_codec import TextCodec

ENGLISH_JAPANESE = [
    ("I am tired.", "私は疲れています。"),
    ("I am happy.", "私は幸せです。"),
    ("He is here.", "彼はここにいます。"),
    ("She is late.", "彼女は遅れています。"),
    ("We are ready.", "私たちは準備ができています。"),
    ("Jane visits Africa in September.", "ジェーンは九月にアフリカを訪れます。"),
    ("I like cats.", "私は猫が好きです。"),
    ("He likes dogs.", "彼は犬が好きです。"),
    ("She reads books.", "彼女は本を読みます。"),
    ("We eat rice.", "私たちはご飯を食べます。"),
]


def test_the_share_of_unspaced_script_tells_the_sides_apart():
    assert unspaced_share(["私は猫が好きです。"]) > 0.8  # the full stop 。 is punctuation, not script
    assert unspaced_share(["我们走吧。"]) == pytest.approx(4 / 5)
    assert unspaced_share(["ฉันชอบแมว"]) == 1.0  # Thai
    assert unspaced_share(["I like cats.", "Ich mag Katzen.", "고양이를 좋아해요."]) == 0.0  # Korean: spaced
    assert tokenizer_for([j for _, j in ENGLISH_JAPANESE]) == "characters"
    assert tokenizer_for([e for e, _ in ENGLISH_JAPANESE]) == "wordpiece"
    assert tokenizer_for([]) == "wordpiece"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "eng-jpn.txt"
    lines = [f"{en}\t{ja}\tCC-BY 2.0 (France) Attribution: tatoeba.org" for en, ja in ENGLISH_JAPANESE * 3]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _config(corpus: Path, **overrides) -> dict:
    settings = {"num_validation": 2, "num_test": 2, "vocab_size": 300, "tokenizer": "auto"}
    return parallel_text_config(corpus, **{**settings, **overrides})


def test_auto_picks_characters_for_japanese_and_wordpiece_for_english(corpus):
    task = build_task(_config(corpus))
    assert task.report["tokenizers"] == {"source": "wordpiece", "target": "characters"}
    assert task.source_format.kind == "wordpiece" and task.target_format.kind == "characters"
    assert "私" in task.target_vocab.tokens and "##." in task.source_vocab.tokens
    source, target = task.splits["train"]  # (test sentences may hold characters training never saw)
    texts = task.texts("train")
    assert [task.detokenize_target(row) for row in target] == [ja for _, ja in texts]
    assert [task.detokenize_source(row) for row in source] == [en for en, _ in texts]
    shared = build_task(_config(corpus, shared_vocabulary=True))  # one vocabulary: one kind
    assert shared.report["tokenizers"] == {"source": "characters", "target": "characters"}
    forced = build_task(_config(corpus, tokenizer="wordpiece"))
    assert forced.report["tokenizers"] == {"source": "wordpiece", "target": "wordpiece"}


def test_the_formats_file_keeps_each_side_and_the_codec_uses_it(corpus, tmp_path):
    task = build_task(_config(corpus))
    save_formats(tmp_path / "text_format.json", task.source_format, task.target_format)
    assert load_formats(tmp_path / "text_format.json") == (task.source_format, task.target_format)
    task.source_vocab.to_file(tmp_path / "source.txt")
    task.target_vocab.to_file(tmp_path / "target.txt")
    codec = TextCodec(
        tmp_path / "source.txt", tmp_path / "target.txt", *load_formats(tmp_path / "text_format.json"), 20
    )
    source, target = task.splits["train"]
    english, japanese = task.texts("train")[0]
    assert codec.encode(tf.constant([english])).numpy()[0].tolist() == source[0, :20].tolist()
    decoded = codec.decode(tf.constant(target[:1, 1:])).numpy()[0].decode()
    assert decoded == japanese and " " not in decoded


def test_a_formats_file_from_before_per_side_formats_serves_both_sides(tmp_path):
    path = tmp_path / "text_format.json"
    path.write_text(json.dumps({"kind": "characters", "lowercase": True}))
    assert load_formats(path) == (TextFormat("characters", True), TextFormat("characters", True))
