"""SQLite under several writers: the writers' file lock and the background WAL checkpointer
(featurehub.db.sqlite), on a real database file."""

from __future__ import annotations

import os
import select
import signal
import sqlite3
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from sqlalchemy import text

from featurehub.db.base import make_engine, make_session_factory, read_only
from featurehub.db.sqlite import AUTOCHECKPOINT_PAGES, CHECKPOINTER, start_wal_checkpointer


def _engine(tmp_path: Path):
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)"))
    return engine


def _wait_until(condition, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_commits_leave_checkpoints_to_the_background(tmp_path):
    engine = _engine(tmp_path)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == \
            AUTOCHECKPOINT_PAGES
    database = tmp_path / "db.sqlite"
    with engine.begin() as connection:  # ~4 MB: past SQLite's default 1,000-page threshold
        connection.execute(text("INSERT INTO t (body) VALUES (:body)"),
                           [{"body": "x" * 4000} for _ in range(1000)])
    assert database.stat().st_size < 1_000_000, "the commit checkpointed by itself"
    runtime = SimpleNamespace(engine=engine, workers={})
    start_wal_checkpointer(runtime)
    try:
        assert _wait_until(lambda: database.stat().st_size > 4_000_000)
    finally:
        runtime.workers[CHECKPOINTER].stop()
        engine.dispose()


def test_no_checkpointer_for_a_database_in_memory():
    runtime = SimpleNamespace(engine=make_engine("sqlite://"), workers={})
    start_wal_checkpointer(runtime)
    assert runtime.workers == {}


def test_a_writer_waits_for_the_one_in_a_transaction_then_goes_at_once(tmp_path):
    engine = _engine(tmp_path)
    order: list[str] = []
    second_in = threading.Event()

    def second_writer() -> None:
        with engine.begin() as connection:
            second_in.set()
            connection.execute(text("INSERT INTO t (body) VALUES ('second')"))
            order.append("second")

    with engine.begin() as connection:
        connection.execute(text("INSERT INTO t (body) VALUES ('first')"))
        thread = threading.Thread(target=second_writer)
        thread.start()
        assert not second_in.wait(0.3)  # queued behind the open transaction
        order.append("first")
    assert second_in.wait(5)
    thread.join(5)
    assert order == ["first", "second"]
    with engine.connect() as connection:
        assert connection.execute(text("SELECT body FROM t ORDER BY id")).scalars().all() == \
            ["first", "second"]
    engine.dispose()


def test_a_failed_transaction_gives_the_lock_back(tmp_path):
    engine = _engine(tmp_path)
    try:
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO t (body) VALUES ('lost')"))
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    done = threading.Event()

    def writer() -> None:
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO t (body) VALUES ('kept')"))
        done.set()

    threading.Thread(target=writer).start()
    assert done.wait(5)
    raw = sqlite3.connect(tmp_path / "db.sqlite")
    assert [row[0] for row in raw.execute("SELECT body FROM t")] == ["kept"]
    raw.close()
    engine.dispose()


def test_a_reader_neither_waits_for_the_writer_nor_sees_its_uncommitted_rows(tmp_path):
    engine = _engine(tmp_path)
    sessions = make_session_factory(engine)
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO t (body) VALUES ('committed')"))
    with sessions() as writer, sessions() as reader:
        writer.execute(text("INSERT INTO t (body) VALUES ('pending')"))  # holds the writer lock
        started = time.monotonic()
        with read_only(reader):
            bodies = reader.scalars(text("SELECT body FROM t")).all()
        assert bodies == ["committed"]
        assert time.monotonic() - started < 1.0, "the reader queued behind the writer"
        assert not reader.in_transaction()  # the read transaction ended with the block
        writer.commit()
    engine.dispose()


def test_reads_inside_a_transaction_under_way_join_it(tmp_path):
    engine = _engine(tmp_path)
    with make_session_factory(engine)() as session:
        session.execute(text("INSERT INTO t (body) VALUES ('mine')"))
        with read_only(session):
            assert session.scalars(text("SELECT body FROM t")).all() == ["mine"]
        assert session.in_transaction()  # not rolled back: the insert is still there
        session.commit()
    engine.dispose()


def _orphan_writes(database: str, parent: int, report: int) -> None:  # pragma: no cover
    """In the orphaned child: once its parent is gone, write through a connection of its own;
    report b"1" when the write went through within 5 seconds."""
    deadline = time.monotonic() + 10
    while os.getppid() == parent and time.monotonic() < deadline:
        time.sleep(0.01)
    engine = make_engine(f"sqlite:///{database}")
    done = threading.Event()

    def write() -> None:
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO t (body) VALUES ('orphan')"))
        done.set()

    threading.Thread(target=write, daemon=True).start()
    os.write(report, b"1" if done.wait(5) else b"0")


def test_a_process_killed_holding_the_writer_lock_leaves_it_to_its_forked_child(tmp_path):
    """`serve` forks its embedded worker after start-up, its pooled connections open: if serve
    is killed while one of them holds the writers' lock, the orphaned worker (then a restarted
    serve) must still write: the lock ends with the process that took it."""
    _engine(tmp_path).dispose()
    database = str(tmp_path / "db.sqlite")
    held_read, held_write = os.pipe()
    report_read, report_write = os.pipe()
    server = os.fork()
    if server == 0:  # pragma: no cover - the "serve" process, killed below
        try:
            engine = make_engine(f"sqlite:///{database}")
            connection = engine.connect()
            connection.execute(text("INSERT INTO t (body) VALUES ('before the fork')"))
            connection.commit()  # its connection now has the lock file open
            if os.fork() == 0:
                engine.dispose(close=False)  # as the embedded worker does
                _orphan_writes(database, os.getppid(), report_write)
                os._exit(0)
            connection.execute(text("INSERT INTO t (body) VALUES ('killed mid-write')"))
            os.write(held_write, b"H")  # holds the writers' lock until killed
            time.sleep(60)
        finally:
            os._exit(1)
    try:
        assert select.select([held_read], [], [], 15)[0], "the server never held the lock"
    finally:
        os.kill(server, signal.SIGKILL)
        os.waitpid(server, 0)
    assert select.select([report_read], [], [], 20)[0], "the orphan never reported"
    assert os.read(report_read, 1) == b"1", "the orphan waited for the dead server's lock"
