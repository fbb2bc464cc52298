"""A self-contained SavedModel: text in, translations (and attention) out, loadable without tx_keras.

The names below are imported on first use (PEP 562): a caller of one codec does not load the model,
decoding and run-folder code that exporting a run needs.
"""

from tx_keras.lazy_names import lazy_names

_HOMES = {
    "ExportSettings": "tx_keras.export.run_export",
    "NotARunError": "tx_keras.export.run_export",
    "export_model": "tx_keras.export.run_export",
    "export_run": "tx_keras.export.run_export",
    "Translator": "tx_keras.export.translator",
    "WordCodec": "tx_keras.export.word_codec",
}

__all__ = sorted(_HOMES)

__getattr__ = lazy_names(__name__, _HOMES)
