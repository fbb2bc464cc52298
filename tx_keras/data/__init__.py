"""Download-free tasks (a synthetic translation grammar and symbol ablations) and their tf.data pipeline."""

from tx_keras.data.pipeline import make_dataset
from tx_keras.data.registry import TASKS, build_task
from tx_keras.data.task import Task
from tx_keras.data.vocabulary import Vocabulary

__all__ = ["TASKS", "Task", "Vocabulary", "build_task", "make_dataset"]
