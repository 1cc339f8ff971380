"""Wake-up calls for the background loops (feature workers, the notification scheduler).

A `Wakeup` is a pipe: `set` writes a byte, `wait` waits for one, `clear` reads them all. It
takes no lock, so it is safe where the events of `threading` and `multiprocessing` are not:
- across fork: a `multiprocessing.Event` is a lock shared by both processes, and a process
  killed while it held it (inside `set`, as an API process killed mid-request) leaves the
  other blocked in `wait` for ever: an orphaned embedded worker that never leaves;
- in a signal handler (SIGTERM asks a loop to stop): the handler runs on the thread that may
  be inside `wait`, holding the event's non-reentrant lock, and `set` would wait for itself.
"""

from __future__ import annotations

import os
import select


class Wakeup:
    """A wake-up call: `set` from any thread, process (sharing it by fork) or signal handler."""

    def __init__(self) -> None:
        read, write = os.pipe()
        os.set_blocking(read, False)
        os.set_blocking(write, False)
        # File objects close their descriptor when collected (a worker of the tests is built
        # and dropped many times). Unbuffered: a write is one write(2), a read one read(2).
        self._reader = open(read, "rb", buffering=0)  # noqa: SIM115 - closed when collected
        self._writer = open(write, "wb", buffering=0)  # noqa: SIM115

    def set(self) -> None:
        # A full pipe (None written) already holds a wake-up call.
        self._writer.write(b"\0")

    def wait(self, timeout: float) -> bool:
        """Whether a wake-up call came (it stays until `clear`) before `timeout` seconds."""
        ready, _, _ = select.select([self._reader], [], [], timeout)
        return bool(ready)

    def clear(self) -> None:
        while self._reader.read(4096):  # None once the pipe is empty
            pass
