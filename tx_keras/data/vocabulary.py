"""Token <-> id mapping with the fixed special ids every model and loss in the suite relies on."""

from collections.abc import Iterable
from pathlib import Path

from tx_keras import special_tokens
from tx_keras.data.text_rule import refusal
from tx_keras.run_folder.atomic_write import write_text


class Vocabulary:
    """An ordered token list whose first four ids are reserved: PAD=0 (masked), SOS=1, EOS=2, UNK=3."""

    PAD = special_tokens.PAD
    SOS = special_tokens.SOS
    EOS = special_tokens.EOS
    UNK = special_tokens.UNK
    SPECIALS = special_tokens.SPECIALS

    def __init__(self, tokens: list[str]) -> None:
        reserved = set(self.SPECIALS)
        seen: set[str] = set()
        for token in tokens:
            if token in reserved:
                raise ValueError(f"token {token!r} is a reserved special token")
            if token in seen:
                raise ValueError(f"duplicate token {token!r}")
            if not token or token != token.strip() or len(token.split()) != 1:
                # One token per line in files and space-joined display both need whitespace-free tokens.
                raise ValueError(f"token {token!r} is empty or contains whitespace")
            if refusal(token):  # text the rule refuses (a NUL token stops the WordPiece tokenizer's build)
                raise ValueError(f"token {token!r} holds a control character")
            seen.add(token)
        self._tokens = [*self.SPECIALS, *tokens]
        self._ids = {token: i for i, token in enumerate(self._tokens)}

    def __len__(self) -> int:
        return len(self._tokens)

    def __repr__(self) -> str:
        return f"Vocabulary({len(self)} tokens)"

    @property
    def tokens(self) -> list[str]:
        """All tokens including the specials, indexed by id."""
        return list(self._tokens)

    def encode(self, words: list[str]) -> list[int]:
        """Map words to ids; words outside the vocabulary become UNK rather than failing."""
        return [self._ids.get(word, self.UNK) for word in words]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Map ids to words up to the first EOS, dropping PAD and SOS so model outputs read cleanly."""
        words = []
        for i in ids:
            i = int(i)
            if i == self.EOS:
                break
            if i in (self.PAD, self.SOS):
                continue
            words.append(self._tokens[i])
        return words

    def to_file(self, path: str | Path) -> None:
        """Write one token per line (specials included) so the file alone reconstructs the ids."""
        write_text(Path(path), "".join(f"{token}\n" for token in self._tokens))

    @classmethod
    def from_file(cls, path: str | Path) -> "Vocabulary":
        """Read a file written by `to_file`; refuses files whose leading specials do not match."""
        return cls.from_text(Path(path).read_text(encoding="utf-8"), str(path))

    @classmethod
    def from_text(cls, text: str, where: str) -> "Vocabulary":
        """The vocabulary of a `to_file` file's text (one token a line); `where` names it in errors."""
        tokens = text.splitlines()
        if tuple(tokens[: len(cls.SPECIALS)]) != cls.SPECIALS:
            raise ValueError(f"{where}: vocabulary file must start with the special tokens {cls.SPECIALS}")
        try:
            return cls(tokens[len(cls.SPECIALS) :])
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
