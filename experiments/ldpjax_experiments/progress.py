"""A dependency-free progress bar for long runs (shown only after a few seconds).

On a terminal it redraws one line on stderr; otherwise (CI logs, notebooks without a TTY) it
prints a line at most every ``log_every`` seconds. Nothing is printed for work that finishes
before ``delay`` seconds.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    def __init__(
        self,
        total: float,
        desc: str = "",
        *,
        enabled: bool = True,
        delay: float = 2.0,
        log_every: float = 10.0,
        stream: TextIO | None = None,
    ) -> None:
        self.total = max(float(total), 1e-12)
        self.desc = desc
        self.enabled = enabled
        self.delay = delay
        self.log_every = log_every
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0.0
        self.start = time.perf_counter()
        self._last_print = 0.0
        self._shown = False

    def _tty(self) -> bool:
        return bool(getattr(self.stream, "isatty", lambda: False)())

    def update(self, amount: float = 1.0) -> None:
        self.done = min(self.total, self.done + amount)
        self._render()

    def set_description(self, desc: str) -> None:
        self.desc = desc
        self._render()

    def _render(self, final: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        elapsed = now - self.start
        if elapsed < self.delay and not (final and self._shown):
            return
        if not final and not self._tty() and now - self._last_print < self.log_every:
            return
        frac = self.done / self.total
        eta = elapsed * (1 - frac) / frac if frac > 0 else float("nan")
        width = 28
        filled = int(round(width * frac))
        bar = "#" * filled + "-" * (width - filled)
        eta_text = f"eta {eta:5.0f}s" if frac < 1 and eta == eta else "done"
        line = f"{self.desc} [{bar}] {100 * frac:5.1f}% {elapsed:6.1f}s {eta_text}"
        if self._tty():
            self.stream.write("\r" + line + ("\n" if final else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self._shown = True
        self._last_print = now

    def close(self) -> None:
        if self._shown:
            self.done = self.total
            self._render(final=True)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["ProgressBar"]
