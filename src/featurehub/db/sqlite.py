"""SQLite under several processes: writers queue without polling, WAL checkpoints run off the
request path.

Writers. Every transaction begins with BEGIN IMMEDIATE (see featurehub.db.base), so SQLite lets
one at a time in; the others wait in SQLite's busy handler, which polls with sleeps growing to
100 ms. Under ingest (the API accepting while the worker finishes batches) a writer often slept
long after the lock was free, and the worker took it again meanwhile. Each connection therefore
first takes an exclusive `flock` on a file beside the database (`<db>-writer`), held until its
transaction ends: the kernel wakes the next writer the moment the lock is released. Programs
that do not take the file lock (the sqlite3 shell) still meet SQLite's own lock and its busy
timeout; the file lock only orders our own writers.

Readers. A transaction that only reads (authorisation, the lookups of an acceptance) is begun
inside `reading()`: plain BEGIN, no file lock. In WAL mode a reader sees the last commit and
neither waits for nor blocks the writer, so a request no longer queues behind a worker batch
just to learn who is calling. Such a transaction must not write (SQLite would have to upgrade
its read snapshot, which fails at once when another writer committed meanwhile).

Checkpoints. SQLite's automatic checkpoint runs inside the COMMIT that crosses its threshold
(1,000 pages by default): a 1,000-feature acceptance or worker batch writes several megabytes,
so nearly every such commit copied the whole WAL back into the database and waited for its fsync
(50 ms of a 60 ms commit, measured). Connections now checkpoint by themselves only past a large
safety threshold, and a background thread of `featurehub serve` (or `featurehub worker`)
checkpoints the database every quarter of a second without blocking anyone (PASSIVE). The copy
costs the same; it is just no longer in front of a client or in the middle of the single write
lock. Durability does not change: a committed transaction is in the WAL either way."""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger(__name__)

# Pages a connection lets the WAL grow to before checkpointing inside its own commit (64 MiB
# of 4 KiB pages): the safety net for processes without a checkpointer (tests, tools).
AUTOCHECKPOINT_PAGES = 16_384
INTERVAL_SECONDS = 0.25
CHECKPOINTER = "sqlite-checkpointer"


_held = threading.local()  # how many writer locks the current thread holds
_reading = threading.local()  # how many `reading()` blocks the current thread is in


@contextmanager
def reading() -> Iterator[None]:
    """Transactions begun by this thread inside the block only read (see Readers above)."""
    depth = getattr(_reading, "depth", 0)
    _reading.depth = depth + 1
    try:
        yield
    finally:
        _reading.depth = depth


def is_reading() -> bool:
    return getattr(_reading, "depth", 0) > 0


class QueuedWriterConnection(sqlite3.Connection):
    """A connection that takes the writers' file lock before its transactions (begin_write)
    and gives it back when they end (commit, rollback, close)."""

    _writer_lock: int | None = None
    _writer_path: str | None = None
    _holding = False

    def queue_for_writes(self, database: str) -> None:
        self._writer_path = database + "-writer"

    def begin_write(self) -> None:
        # A thread that holds the lock through another connection does not wait for itself:
        # that connection meets SQLite's busy timeout instead, as it would without the queue.
        if self._writer_path is None or getattr(_held, "count", 0):
            return
        if self._writer_lock is None:
            self._writer_lock = os.open(self._writer_path, os.O_RDWR | os.O_CREAT, 0o600)
            _lock_holders.add(self)
        fcntl.flock(self._writer_lock, fcntl.LOCK_EX)  # releases the GIL while it waits
        self._holding = True
        _held.count = getattr(_held, "count", 0) + 1

    def _end_write(self) -> None:
        if self._holding and not self.in_transaction:
            fcntl.flock(self._writer_lock, fcntl.LOCK_UN)
            self._holding = False
            _held.count -= 1

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            self._end_write()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self._end_write()

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self._writer_lock is not None:
                os.close(self._writer_lock)  # closing the descriptor releases its lock
                self._writer_lock = None
                if self._holding:
                    self._holding = False
                    _held.count -= 1


# The connections with the writers' lock file open. A forked child closes its copies of their
# descriptors: a flock belongs to the open file description, which fork shares, so a parent
# killed while holding the lock would leave it held, for ever, by the child's copy (`serve`
# forks its embedded worker with its pooled connections open: the orphaned worker, and then a
# restarted serve, would wait for the lock of a dead process).
_lock_holders: weakref.WeakSet[QueuedWriterConnection] = weakref.WeakSet()


def _close_inherited_writer_locks() -> None:
    for connection in list(_lock_holders):
        if connection._writer_lock is not None:
            os.close(connection._writer_lock)
            connection._writer_lock = None
        connection._holding = False
    _lock_holders.clear()
    _held.count = 0  # the forking thread, the child's only one


os.register_at_fork(after_in_child=_close_inherited_writer_locks)


class WalCheckpointer:
    """A daemon thread with its own connection running PASSIVE checkpoints."""

    def __init__(self, database: str, interval: float = INTERVAL_SECONDS) -> None:
        self.database = database
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=CHECKPOINTER, daemon=True)

    def start(self) -> WalCheckpointer:
        self._thread.start()
        return self

    def checkpoint(self, connection: sqlite3.Connection) -> tuple[int, int, int]:
        """(busy, frames in the WAL, frames checkpointed)."""
        return connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()

    def _run(self) -> None:
        connection = sqlite3.connect(self.database, timeout=30, isolation_level=None,
                                     check_same_thread=False)
        try:
            connection.execute("PRAGMA busy_timeout=30000")
            while not self._stop.wait(self.interval):
                try:
                    self.checkpoint(connection)
                except sqlite3.Error as error:  # a busy database: next round
                    log.debug("WAL checkpoint skipped: %s", error)
            self.checkpoint(connection)
        except sqlite3.Error:
            log.exception("the WAL checkpointer stopped")
        finally:
            connection.close()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)


def start_wal_checkpointer(runtime: Any) -> None:
    """APP_STARTED hook (and `featurehub worker`): one checkpointer for a file database."""
    url = runtime.engine.url
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return
    if CHECKPOINTER not in runtime.workers:
        runtime.workers[CHECKPOINTER] = WalCheckpointer(url.database).start()
