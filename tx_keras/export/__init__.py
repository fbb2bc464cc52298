"""A self-contained SavedModel: text in, translations (and attention) out, loadable without tx_keras."""

from tx_keras.export.run_export import ExportSettings, NotARunError, export_model, export_run
from tx_keras.export.translator import Translator
from tx_keras.export.word_codec import WordCodec

__all__ = ["ExportSettings", "NotARunError", "Translator", "WordCodec", "export_model", "export_run"]
