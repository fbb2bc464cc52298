"""How the exported `translate` signature reports attention, in a leaf module: the export settings check
it without importing TensorFlow (a run without TensorFlow saves for a later export)."""

ATTENTION_MODES = ("mean", "heads")
