"""Parameter parity: models whose sizes differ do not do the same work, so their speeds are not compared."""

from __future__ import annotations

PARITY_TOLERANCE = 0.02  # peers whose parameter count differs from ours by more do not do the same work


class ParityError(ValueError):
    """The models of a comparison differ in size, so their speeds are not comparable."""


def check_parity(parameters: dict[str, int], tolerance: float = PARITY_TOLERANCE) -> None:
    """Raise ParityError naming every model whose parameter count is more than `tolerance` from ours."""
    ours = parameters["ours"]
    off = {name: count for name, count in parameters.items() if abs(count - ours) > tolerance * ours}
    if off:
        listed = ", ".join(
            f"{name} {count:,} ({100 * (count / ours - 1):+.1f} %)" for name, count in off.items()
        )
        raise ParityError(
            f"parameter counts differ by more than {100 * tolerance:.0f} % from ours ({ours:,}): {listed}; "
            "the models would not do the same work, so no comparison is made"
        )
