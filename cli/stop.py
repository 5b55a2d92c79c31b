# SPDX-License-Identifier: GPL-3.0-or-later
"""Stopping a batch cleanly: on SIGINT or SIGTERM, or when the parent of a ``--jobs`` child goes away.

Python's default SIGINT raises KeyboardInterrupt wherever the main thread happens to be, which
Blender swallows when that is inside one of its handlers (the batch then goes on), and SIGTERM
kills the process in the middle of a save. Instead a signal only records the request; the batch
checks it between files and, during a bake, between frames. A file is either done and saved
whole, or not written at all.
"""

import os
import signal
import threading
from contextlib import contextmanager

#: The signals that stop a batch; 128 + the signal number is its exit status, as a shell reports it.
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopped(Exception):
    """Raised between frames to end the file being done at once; nothing is written for it."""


class Stop:
    """A request to stop the batch, set by a signal or by the parent's pipe closing; read by the batch."""

    def __init__(self):
        self._set = threading.Event()
        self.signal: int | None = None

    def __bool__(self) -> bool:
        return self._set.is_set()

    def request(self, number: int) -> None:
        if not self._set.is_set():
            self.signal = number
            self._set.set()

    def check(self) -> None:
        """Raise :class:`Stopped` if a stop was requested."""
        if self:
            raise Stopped(self.sentence(started=True))

    def sentence(self, started: bool) -> str:
        """What happened to a file the stop came before (``started``: while it was being done)."""
        if started:
            return f"Stopped by {self.name} before it was done; nothing was written for it."
        return f"Not started: the batch was stopped by {self.name}."

    @property
    def name(self) -> str:
        return signal.Signals(self.signal).name

    @property
    def exit_status(self) -> int:
        return 128 + self.signal

    @contextmanager
    def on_signals(self):
        """For the duration: SIGINT and SIGTERM request a stop instead of interrupting whatever runs."""
        if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
            yield
            return
        previous = {number: signal.signal(number, lambda number, frame: self.request(number)) for number in SIGNALS}
        try:
            yield
        finally:
            for number, handler in previous.items():
                # None: a handler not set from Python (Blender's own); the process ends after the command anyway.
                signal.signal(number, signal.SIG_DFL if handler is None else handler)

    def watch_parent(self) -> None:
        """In a ``--jobs`` child: stop, as on SIGTERM, once the parent closes this process's standard
        input, which it does to stop its children and which its end does whichever way it ends."""

        def wait() -> None:
            try:
                while os.read(0, 4096):
                    pass
            except OSError:
                pass
            self.request(signal.SIGTERM)

        threading.Thread(target=wait, name="limb_ik parent watch", daemon=True).start()


def stopped_by(exit_status: int) -> int | None:
    """The signal that stopped a child process with ``exit_status``, if it was one of :data:`SIGNALS`."""
    number = -exit_status if exit_status < 0 else exit_status - 128
    return number if number in SIGNALS else None
