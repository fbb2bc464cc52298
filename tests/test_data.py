"""Behaviour of the embedded tasks, their vocabularies and the tf.data pipeline."""

import numpy as np
import pytest
import tensorflow as tf
from omegaconf import OmegaConf

from tx_keras.data import TASKS, Task, Vocabulary, build_task, make_dataset
from tx_keras.data.translation import MONTHS, num_sentences, translate

SMALL = {"num_train": 2000, "num_validation": 200, "num_test": 200}


@pytest.fixture(scope="module")
def translation() -> Task:
    return build_task(OmegaConf.create({"name": "translation", "seed": 0}))


# --- Vocabulary -----------------------------------------------------------------------------------------


def test_vocabulary_specials_and_encoding():
    vocab = Vocabulary(["jane", "visits", "africa"])
    assert vocab.tokens[:4] == ["<pad>", "<sos>", "<eos>", "<unk>"]
    assert (Vocabulary.PAD, Vocabulary.SOS, Vocabulary.EOS, Vocabulary.UNK) == (0, 1, 2, 3)
    assert len(vocab) == 7
    assert vocab.encode(["jane", "visits", "asia"]) == [4, 5, Vocabulary.UNK]
    assert vocab.decode([1, 4, 5, 6, 2, 4, 0]) == ["jane", "visits", "africa"]
    assert vocab.decode(np.array([4, 0, 3, 2])) == ["jane", "<unk>"]


@pytest.mark.parametrize(
    ("tokens", "said"),
    [
        (["a", "a"], "duplicate"),
        (["a", "<eos>"], "reserved"),
        (["a b"], "whitespace"),
        ([""], "empty"),
        (["\x00", "##\x00"], "control character"),  # issue 65: the tokens that broke the WordPiece build
        (["a\x85"], "whitespace"),  # NEL: whitespace to str.split, a C1 control to the text rule
        (["a\x7f"], "control character"),
    ],
)
def test_vocabulary_rejects_bad_tokens(tokens, said):
    with pytest.raises(ValueError, match=said):
        Vocabulary(tokens)


def test_vocabulary_file_round_trip(tmp_path):
    vocab = Vocabulary(["l'", "afrique", "école", "août"])
    path = tmp_path / "vocab.txt"
    vocab.to_file(path)
    assert path.read_text(encoding="utf-8").splitlines() == vocab.tokens
    assert Vocabulary.from_file(path).tokens == vocab.tokens

    path.write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(ValueError, match="special tokens"):
        Vocabulary.from_file(path)


# --- Translation grammar -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("english", "french"),
    [
        ("jane visits africa in september", "jane visite l' afrique en septembre"),
        ("jane buys the red car", "jane achète la voiture rouge"),
        ("paul likes the green books", "paul aime les livres verts"),
        ("marie sees the green house", "marie voit la maison verte"),
        ("the cats see the green houses", "les chats voient les maisons vertes"),
        ("the white cows often see the grey birds", "les vaches blanches voient souvent les oiseaux gris"),
        ("jane and paul visit italy in may", "jane et paul visitent l' italie en mai"),
        ("tom visits france with marie", "tom visite la france avec marie"),
        ("the horse visits japan", "le cheval visite le japon"),
        ("the dogs always like canada", "les chiens aiment toujours le canada"),
        ("the grey cow never likes the tree with jane", "la vache grise n' aime jamais l' arbre avec jane"),
        ("jane and tom never see the yellow school", "jane et tom ne voient jamais l' école jaune"),
    ],
)
def test_translation_grammar_reorders_and_agrees(english, french):
    assert translate(english) == french


@pytest.mark.parametrize(
    "english",
    ["jane visit africa", "the cats sees the tree", "jane visits africa with jane", "jane buys france"],
)
def test_translation_grammar_rejects_ungrammatical(english):
    with pytest.raises(ValueError, match="not a sentence"):
        translate(english)


def test_translation_covers_all_months():
    assert len(MONTHS) == 12
    assert len({translate(f"jane visits africa in {month}") for month, _ in MONTHS}) == 12


def test_translation_lecture_sentence_fits_the_task(translation):
    ids = translation.source_vocab.encode("jane visits africa in september".split())
    assert Vocabulary.UNK not in ids
    french = translate("jane visits africa in september").split()
    target = [Vocabulary.SOS, *translation.target_vocab.encode(french), Vocabulary.EOS]
    assert Vocabulary.UNK not in target
    assert translation.detokenize_target(target) == "jane visite l'afrique en septembre"
    assert len(ids) + 1 <= translation.source_length and len(target) <= translation.target_length


def test_translation_splits_shapes_and_framing(translation):
    sizes = {"train": 20000, "validation": 1000, "test": 1000}
    for split, size in sizes.items():
        source, target = translation.splits[split]
        assert source.dtype == np.int32 and target.dtype == np.int32
        assert source.shape == (size, translation.source_length)
        assert target.shape == (size, translation.target_length)
        assert (target[:, 0] == Vocabulary.SOS).all()
        assert ((target == Vocabulary.EOS).sum(axis=1) == 1).all()
        assert ((source == Vocabulary.EOS).sum(axis=1) == 1).all()
        assert not (source == Vocabulary.SOS).any()
        assert not (source == Vocabulary.UNK).any() and not (target == Vocabulary.UNK).any()
        for rows in (source, target):
            eos = np.argmax(rows == Vocabulary.EOS, axis=1)
            after = np.arange(rows.shape[1]) > eos[:, None]
            assert (rows[after] == Vocabulary.PAD).all()
            assert (rows[~after] != Vocabulary.PAD).all()


@pytest.mark.parametrize(
    ("english", "french"),
    [
        ("jane visits africa in september", "jane visite l' afrique en septembre"),  # elided article
        ("tom never likes japan", "tom n' aime jamais le japon"),  # n' before a vowel, ne ... jamais
        ("marie never sees the grey schools", "marie ne voit jamais les écoles grises"),
        ("the cow often sees the white house", "la vache voit souvent la maison blanche"),  # gender
        ("jane and paul buy the red cars with tom", "jane et paul achètent les voitures rouges avec tom"),
        (
            "the birds sometimes like the green apple in august",
            "les oiseaux aiment parfois la pomme verte en août",
        ),
        ("paul and marie always visit brazil", "paul et marie visitent toujours le brésil"),
    ],
)
def test_translation_grammar_reference(english, french):
    """Written out by hand: agreement, adjective order, elision, negation and adverb placement."""
    assert translate(english) == french


def test_translation_samples_match_reference_and_use_whole_vocabulary(translation):
    pairs = translation.texts("train")
    for english, french in pairs[:300]:  # each sample is a sentence of the grammar, paired as it reads
        assert translate(english) == french
    lengths = [len(english.split()) for english, _ in pairs]
    assert min(lengths) == 3 and max(lengths) == translation.source_length - 1
    assert {month for english, _ in pairs for month, _ in MONTHS if english.endswith(f"in {month}")} == {
        month for month, _ in MONTHS
    }
    # The vocabularies are derived from the grammar; a 20000-sentence sample must use every token.
    source, target = translation.splits["train"]
    unused = {Vocabulary.UNK}
    assert (
        set(np.unique(source).tolist())
        == set(range(len(translation.source_vocab))) - {Vocabulary.SOS} - unused
    )
    assert set(np.unique(target).tolist()) == set(range(len(translation.target_vocab))) - unused


def test_translation_splits_are_disjoint(translation):
    sources = {split: {english for english, _ in translation.texts(split)} for split in translation.splits}
    assert len(sources["train"]) == 20000
    assert not sources["train"] & sources["validation"]
    assert not sources["train"] & sources["test"]
    assert not sources["validation"] & sources["test"]


def test_translation_is_seeded():
    a = build_task({"name": "translation", "seed": 3, **SMALL})
    b = build_task({"name": "translation", "seed": 3, **SMALL})
    c = build_task({"name": "translation", "seed": 4, **SMALL})
    for split in a.splits:
        for x, y, z in zip(a.splits[split], b.splits[split], c.splits[split], strict=True):
            np.testing.assert_array_equal(x, y)
            assert not np.array_equal(x, z)
    assert a.source_vocab.tokens == c.source_vocab.tokens
    assert a.target_vocab.tokens == c.target_vocab.tokens


def test_translation_refuses_more_sentences_than_the_grammar_has():
    assert num_sentences() > 1_000_000
    with pytest.raises(ValueError, match="distinct sources"):
        build_task({"name": "translation", "num_train": num_sentences(), "num_validation": 1})


# --- Symbol tasks -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["copy", "reverse", "sort"])
def test_symbol_task_targets(name):
    task = build_task({"name": name, "seed": 1, **SMALL})
    assert task.source_vocab.tokens == task.target_vocab.tokens
    assert len(task.source_vocab) == 16 + 4
    assert (task.source_length, task.target_length) == (13, 14)
    expected = {
        "copy": lambda s: s,
        "reverse": lambda s: s[::-1],
        "sort": lambda s: sorted(s, key=lambda symbol: int(symbol[1:])),
    }[name]
    for source, target in task.texts("validation"):
        assert len(source.split()) == 12
        assert target.split() == expected(source.split())
    all_sources = [source for split in task.splits for source, _ in task.texts(split)]
    assert len(set(all_sources)) == len(all_sources)


def test_symbol_task_variable_length():
    task = build_task({"name": "reverse", "length": 8, "min_length": 2, "vocab_size": 5, **SMALL})
    assert (task.source_length, task.target_length) == (9, 10)
    lengths = {len(source.split()) for source, _ in task.texts("train")}
    assert lengths == set(range(2, 9))
    assert {symbol for source, _ in task.texts("train") for symbol in source.split()} == {
        f"s{i}" for i in range(5)
    }


def test_symbol_task_too_small_space_raises():
    with pytest.raises(ValueError, match="only 8 distinct sources"):
        build_task(
            {
                "name": "copy",
                "vocab_size": 2,
                "length": 3,
                "min_length": 3,
                "num_train": 8,
                "num_validation": 1,
            }
        )


def test_unknown_task_name():
    names = ["translation", "copy", "reverse", "sort", "parallel_text", "lookup", "modular_addition"]
    assert TASKS == [*names, "associative_recall"]
    with pytest.raises(ValueError) as error:
        build_task({"name": "wmt14"})
    assert str(error.value) == f"data.name='wmt14' is not a task; choose one of: {', '.join(TASKS)}"


# --- Pipeline -----------------------------------------------------------------------------------------------


def test_make_dataset_shapes_and_shift():
    task = build_task({"name": "copy", "length": 6, "min_length": 6, **SMALL})
    source, target = task.splits["validation"]
    batches = list(make_dataset(source, target, batch_size=64, shuffle=False))
    assert len(batches) == 4  # 200 rows: 3 full batches and a remainder of 8
    (enc, dec), labels = batches[0]
    assert enc.shape == (64, 7) and dec.shape == (64, 7) and labels.shape == (64, 7)
    assert enc.dtype == dec.dtype == labels.dtype == "int32"
    np.testing.assert_array_equal(enc.numpy(), source[:64])
    np.testing.assert_array_equal(dec.numpy(), target[:64, :-1])
    np.testing.assert_array_equal(labels.numpy(), target[:64, 1:])
    np.testing.assert_array_equal(dec.numpy()[:, 1:], labels.numpy()[:, :-1])
    assert (dec.numpy()[:, 0] == Vocabulary.SOS).all()
    assert batches[-1][1].shape == (8, 7)

    dropped = list(make_dataset(source, target, batch_size=64, shuffle=False, drop_remainder=True))
    assert [labels.shape[0] for _, labels in dropped] == [64, 64, 64]


def test_make_dataset_shuffle_is_seeded_and_keeps_pairs():
    source = np.arange(100, dtype=np.int32).reshape(50, 2)
    target = source * 10 + 1

    def epoch(dataset) -> np.ndarray:
        rows = [
            np.concatenate([enc.numpy(), dec.numpy(), labels.numpy()], axis=1)
            for (enc, dec), labels in dataset
        ]
        return np.concatenate(rows)

    counter = tf.Variable(0, dtype=tf.int64, trainable=False)
    dataset = make_dataset(source, target, batch_size=16, shuffle=True, seed=7, epoch=counter)
    first = epoch(dataset)
    counter.assign(1)
    second = epoch(dataset)
    assert not np.array_equal(first[:, :2], source)  # shuffled
    assert not np.array_equal(first, second)  # reshuffled each epoch
    # The order depends on (seed, epoch) only: what a resumed run needs to see the same epochs again.
    np.testing.assert_array_equal(first, epoch(make_dataset(source, target, 16, shuffle=True, seed=7)))
    np.testing.assert_array_equal(second, epoch(make_dataset(source, target, 16, True, seed=7, epoch=1)))
    assert not np.array_equal(first, epoch(make_dataset(source, target, 16, shuffle=True, seed=8)))
    # Rows stay paired: decoder input and labels still come from the same row's target.
    np.testing.assert_array_equal(first[:, 2], first[:, 0] * 10 + 1)
    np.testing.assert_array_equal(first[:, 3], first[:, 1] * 10 + 1)
    np.testing.assert_array_equal(np.sort(first[:, 0]), source[:, 0])
