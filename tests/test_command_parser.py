"""The parser every tx-* command but tx-train starts from: its target argument, and `fail`, the one error line
for a mistake found after parsing (argparse's own `error` would print the usage above it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tx_keras.cli.command_parser import command_parser


def test_the_target_comes_first_and_fail_is_one_line_and_exit_2(capsys):
    parser = command_parser("tx-demo", "A demo.", "run_dir", type=Path, help="a run folder")
    parser.add_argument("--beam-width", type=int)
    args = parser.parse_args(["runs/a", "--beam-width", "3"])
    assert (args.run_dir, args.beam_width) == (Path("runs/a"), 3)
    assert "run_dir" in parser.format_usage()
    with pytest.raises(SystemExit) as stopped:
        parser.fail("runs/a is not a tx_keras run folder")
    assert stopped.value.code == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "tx-demo: error: runs/a is not a tx_keras run folder\n")
