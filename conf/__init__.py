"""Hydra's config tree, installed as the package `tx_keras.conf` so `tx-train` finds it from any folder."""
