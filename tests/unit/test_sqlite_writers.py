"""SQLite under several writers: the writers' file lock and the background WAL checkpointer
(featurehub.db.sqlite), on a real database file."""

from __future__ import annotations

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
