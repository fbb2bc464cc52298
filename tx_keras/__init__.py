"""tx_keras: a Keras experiment suite that makes the Transformer lecture tangible."""

__version__ = "0.1.0"
