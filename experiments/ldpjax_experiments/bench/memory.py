"""Peak memory of one side of a workload: host RSS sampled by a thread, and the device's peak."""

from __future__ import annotations

import os
import threading


def _rss_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except Exception:  # noqa: BLE001 -- no way to read RSS on this platform
        return None


class PeakMemory:
    """Context manager: peak host RSS above the level at entry, sampled by a thread."""

    def __init__(self, interval: float = 0.002):
        self.interval = interval
        self.peak_bytes: int | None = None
        self._stop = threading.Event()

    def _poll(self):
        while not self._stop.is_set():
            rss = _rss_bytes()
            if rss is not None:
                self._peak = max(self._peak, rss)
            self._stop.wait(self.interval)

    def __enter__(self):
        self._start = _rss_bytes()
        self._peak = self._start or 0
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        rss = _rss_bytes()
        if self._start is not None:
            self._peak = max(self._peak, rss or 0)
            self.peak_bytes = self._peak - self._start
        return False


def _device_peak_bytes() -> int | None:
    import jax

    try:
        stats = jax.devices()[0].memory_stats()
    except Exception:  # noqa: BLE001 -- backends without memory stats
        return None
    if not stats:
        return None
    peak = stats.get("peak_bytes_in_use")
    return int(peak) if peak is not None else None


__all__ = ["PeakMemory"]
