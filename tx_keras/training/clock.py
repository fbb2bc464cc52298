"""Durations as people read them on a clock face."""


def clock(seconds: float) -> str:
    """90 -> `1:30`, 3700 -> `1:01:40`."""
    minutes, secs = divmod(int(round(max(seconds, 0.0))), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
