"""Figures for the dashboard, rendered off-screen with matplotlib."""

from tx_keras.plots.attention_grid import attention_grid_image

__all__ = ["attention_grid_image"]
