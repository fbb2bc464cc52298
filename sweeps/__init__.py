"""Ready sweeps, installed as the package `tx_keras.sweeps`: run one with `tx-train sweep=NAME`."""
