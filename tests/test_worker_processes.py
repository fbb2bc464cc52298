"""Worker processes (`python -m tx_keras.data.worker_processes`): results in order, a worker's exception
raised in the caller as it was (an OSError keeps its errno: a full disk is still a full disk), a dead worker
said in one error, and nothing a worker prints mixed into its results."""

import errno
import os

import pytest

from tx_keras.data.worker_processes import map_in_processes


def test_results_come_in_the_order_of_the_arguments_whatever_worker_computed_them():
    words = ["a", "bbb", "cc", "dddd", "", "eeeee", "ff"]
    assert list(map_in_processes(len, words, 3)) == [1, 3, 2, 4, 0, 5, 2]


def test_an_oserror_in_a_worker_reaches_the_caller_with_its_errno():
    with pytest.raises(FileNotFoundError) as raised:
        list(map_in_processes(os.stat, ["/nonexistent/tx_keras/part-000.tsv"], 1))
    assert raised.value.errno == errno.ENOENT and raised.value.filename.endswith("part-000.tsv")


def test_a_worker_that_dies_is_one_error_and_what_workers_print_is_not_a_result():
    assert list(map_in_processes(print, ["printed, not returned", "again"], 2)) == [None, None]
    with pytest.raises(RuntimeError, match=r"a worker process ended \(3\) without a result"):
        list(map_in_processes(os._exit, [3], 1))
