"""A self-contained SavedModel: text in, translations (and attention) out, loadable without tx_keras.

The names below are imported on first use (PEP 562): a caller of one codec does not load the model,
decoding and run-folder code that exporting a run needs.
"""

from tx_keras.lazy_names import lazy_names

__getattr__, __all__ = lazy_names(
    __name__,
    run_export=("ExportSettings", "NotARunError", "export_model", "export_run"),
    translator=("Translator",),
    word_codec=("WordCodec",),
)
