"""`tx-claims [SWEEP_DIR ...]`: judge the lecture's claims on their finished sweeps and write report.md."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# The event-file reader imports TensorFlow: its start-up lines (CUDA probing on a CPU) stay off stderr.
from tx_keras.runtime.quiet_startup import start_tensorflow


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tx-claims",
        description="Apply each claim's pre-stated rule to its finished sweep (tx-train sweep=claim_<name>) "
        "and write report.md with the tables and plots.",
    )
    parser.add_argument(
        "sweeps",
        nargs="*",
        type=Path,
        default=[Path("outputs/sweeps")],
        help="claim sweep folders, or a folder holding claim_<name>/<date>_<time>/ sweeps, whose newest "
        "sweep with runs is judged unless --pick names another (default: outputs/sweeps)",
    )
    parser.add_argument(
        "--pick",
        action="append",
        default=[],
        metavar="CLAIM=SWEEP",
        help="judge this sweep folder of a claim instead of its newest, e.g. "
        "--pick heads=<the sweep folder's name, its date and time> "
        "(repeatable)",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("outputs/claims"), help="report folder (default: outputs/claims)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = _parse_args(argv)
    from tx_keras.claims.sweep_folders import ClaimsError, find_sweeps, parse_picks

    try:
        sweeps = find_sweeps(args.sweeps, parse_picks(args.pick))
    except ClaimsError as error:
        print(f"tx-claims: error: {error}", file=sys.stderr)
        sys.exit(2)
    start_tensorflow()
    from tx_keras.claims import CLAIMS
    from tx_keras.claims.assessment import assess
    from tx_keras.claims.report import write_report

    args.out.mkdir(parents=True, exist_ok=True)
    for name, found in sweeps.items():
        listed = ", ".join(
            f"{folder.name}{' (judged)' if folder == found.judged else ''}" for folder in found.found
        )
        print(f"tx-claims: {name}: {len(found.found)} sweep(s) found: {listed}")
    assessments = [assess(CLAIMS[name], found.judged, args.out) for name, found in sweeps.items()]
    for assessment in assessments:
        print(f"{assessment.claim.name}: {assessment.verdict.label}: {assessment.verdict.reason}")
    all_found = {name: list(found.found) for name, found in sweeps.items()}
    print(f"tx-claims: wrote {write_report(assessments, args.out, all_found)}")


if __name__ == "__main__":
    main()
