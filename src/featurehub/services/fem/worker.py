"""Feature workers: take batches of granted requests from the queue and process them.

- `process_pending(runtime)` processes everything pending, synchronously (tests, tools).
- Embedded: `start_embedded_worker` (an APP_STARTED hook) runs one worker in a child process
  of `featurehub serve` (a thread where fork does not exist); acceptance wakes it up.
- Separate: `featurehub worker` runs `FeatureWorker.run_forever` in its own process; on
  PostgreSQL any number of them share the queue.

Claiming: the oldest pending request of each product, by priority then acceptance order, locked
with `FOR UPDATE SKIP LOCKED` on PostgreSQL (SQLite serialises writers with BEGIN IMMEDIATE), and
leased (claimed_by, claimed_at). A request whose lease expired (its worker died) goes back to the
queue; a worker finishes only the requests it still holds.
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, exists, or_, select, update
from sqlalchemy.orm import Session, aliased

from featurehub.db.base import read_only, utcnow
from featurehub.db.fem import FeatureRequest, among, unfinished
from featurehub.services.fem import processing
from featurehub.services.fem.lifecycle import (
    LOCAL_DELAYED,
    LOCAL_ERROR,
    LOCAL_SCHEDULED,
    REMOTE_STORAGE_REQUESTED,
    RUNNING_STEPS,
)
from featurehub.services.fem.processing import (
    CLAIMED_COLUMNS,
    ProjectContext,
    RequestFailed,
    Sources,
)
from featurehub.services.fem.rules import files_to_store
from featurehub.wakeup import Wakeup

log = logging.getLogger(__name__)
EMBEDDED = "fem"


@dataclass(frozen=True)
class WorkerOptions:
    batch_size: int = 1000
    lease_seconds: float = 600.0
    poll_seconds: float = 1.0
    gather_seconds: float = 0.2
    worker_id: str = field(default_factory=lambda: (
        f"{_host()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"))


def _host() -> str:
    return socket.gethostname()[:30].replace(":", "_")


def release_expired(session: Session, *, lease_seconds: float) -> int:
    """Requests claimed by a worker that stopped renewing go back to the queue."""
    expired = utcnow() - timedelta(seconds=lease_seconds)
    result = session.execute(update(FeatureRequest).where(
        FeatureRequest.step.in_(RUNNING_STEPS), FeatureRequest.claimed_at < expired,
    ).values(step=LOCAL_DELAYED, claimed_by=None, claimed_at=None)
        .execution_options(synchronize_session=False))
    return result.rowcount or 0


def _process_gone(worker_id: str, host: str) -> bool:
    """Whether the worker that wrote `worker_id` (host:pid:nonce) ran on this host and its
    process is gone (a recycled pid keeps the claim until its lease expires: safe, only slow)."""
    claimed_host, _, rest = worker_id.partition(":")
    pid = rest.partition(":")[0]
    if claimed_host != host or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def release_dead_claims(session: Session) -> int:
    """Requests claimed by a worker process of this host that is no longer running (killed
    with its server, say) go back to the queue now, instead of when their lease expires."""
    host = _host()
    owners = session.scalars(select(FeatureRequest.claimed_by).distinct().where(
        FeatureRequest.step.in_(RUNNING_STEPS),
        FeatureRequest.claimed_by.startswith(host + ":", autoescape=True)))
    dead = [owner for owner in owners if owner and _process_gone(owner, host)]
    if not dead:
        return 0
    result = session.execute(update(FeatureRequest).where(
        FeatureRequest.step.in_(RUNNING_STEPS), FeatureRequest.claimed_by.in_(dead),
    ).values(step=LOCAL_DELAYED, claimed_by=None, claimed_at=None)
        .execution_options(synchronize_session=False))
    return result.rowcount or 0


def _claimable(session: Session, batch_size: int) -> list[int]:
    """The ids of up to `batch_size` waiting requests, the oldest of each product, by priority
    then acceptance order, locked (FOR UPDATE SKIP LOCKED on PostgreSQL). Narrow rows: sorting
    them stays in memory, where sorting them with their features (LockRows keeps PostgreSQL
    from a top-N sort) spilled to disk."""
    other = aliased(FeatureRequest)
    earlier = [other.product_key == FeatureRequest.product_key, other.id != FeatureRequest.id,
               or_(and_(other.step == LOCAL_DELAYED, other.id < FeatureRequest.id),
                   other.step.in_(RUNNING_STEPS))]
    if session.get_bind().dialect.name == "sqlite":
        # SQLite uses the (partial) product index only if the query repeats its condition.
        # PostgreSQL proves it from the steps above, and plans worse with it repeated.
        earlier.append(unfinished(other.step))
    waiting_for_another = exists().where(*earlier)
    rows = session.connection().execute(
        select(FeatureRequest.id, FeatureRequest.product_key)
        .where(FeatureRequest.step == LOCAL_DELAYED, ~waiting_for_another)
        .order_by(FeatureRequest.priority, FeatureRequest.id)
        .limit(batch_size)
        .with_for_update(skip_locked=True, of=FeatureRequest)
    ).all()
    chosen, products = [], set()
    for row in rows:
        if row.product_key not in products:
            products.add(row.product_key)
            chosen.append(row.id)
    return chosen


def _claimed(session: Session, ids: Sequence[int]) -> list[Any]:
    """The requests `ids` as Core rows (no ORM loading: a batch is a thousand rows with
    their features), in scheduling order."""
    return list(session.connection().execute(
        select(*CLAIMED_COLUMNS).where(among(session, FeatureRequest.id, ids))
        .order_by(FeatureRequest.priority, FeatureRequest.id)).all())


def claim(session: Session, *, worker_id: str, batch_size: int) -> list[Any]:
    """Claim up to `batch_size` requests, at most one per product, and commit the claim; the
    claimed requests are then read (features included) outside the claiming transaction."""
    ids = _claimable(session, batch_size)
    if ids:
        session.execute(update(FeatureRequest).where(among(session, FeatureRequest.id, ids))
                        .values(step=LOCAL_SCHEDULED, claimed_by=worker_id, claimed_at=utcnow())
                        .execution_options(synchronize_session=False))
    session.commit()
    if not ids:
        return []
    # Read while SQLite's writer lock is free. Nobody else changes a claimed request.
    with read_only(session):
        return _claimed(session, ids)


def _still_held(session: Session, ids: Sequence[int], worker_id: str) -> set[int]:
    """Lock the requests this worker still holds (a lease may have expired meanwhile)."""
    return set(session.scalars(
        select(FeatureRequest.id)
        .where(among(session, FeatureRequest.id, ids), FeatureRequest.claimed_by == worker_id,
               FeatureRequest.step.in_(RUNNING_STEPS))
        .with_for_update(of=FeatureRequest)))


class FeatureWorker:
    """One worker: a loop of claim -> store files -> finish."""

    def __init__(self, runtime: Any, options: WorkerOptions | None = None,
                 wakeup: Wakeup | None = None) -> None:
        self.runtime = runtime
        self.options = options or WorkerOptions()
        settings = runtime.settings
        self.sources = Sources(settings.models_dir, settings.storage_settings_file)
        self._wake = wakeup if wakeup is not None else Wakeup()
        self._stopping = False  # a plain flag: set by signal handlers
        self._thread: threading.Thread | None = None

    # -- one batch --

    def run_once(self) -> int:
        """Claim and process one batch; the number of requests taken."""
        options = self.options
        with self.runtime.sessions() as session:
            release_expired(session, lease_seconds=options.lease_seconds)
            if not self.runtime.settings.is_sqlite:
                taken = self._process_locked(session)
                if taken is not None:
                    return taken
            claimed = claim(session, worker_id=options.worker_id, batch_size=options.batch_size)
        if claimed:
            self.process(claimed)
        return len(claimed)

    def _process_locked(self, session: Session) -> int | None:
        """PostgreSQL: take a batch and finish it in one transaction, its rows locked (SKIP
        LOCKED keeps other workers off them; the locks end with a worker that dies), with no
        claim written: half the row updates of a leased claim. None, the transaction still
        open, when the batch has files to fetch (fetched outside any transaction, under a
        lease) or could not be finished at once (its requests are then leased and finished
        one by one)."""
        ids = _claimable(session, self.options.batch_size)
        if not ids:
            session.commit()
            return 0
        requests = _claimed(session, ids)  # locked above, in this transaction
        if any(files_to_store(request.feature.get("files") or ()) for request in requests):
            return None
        try:
            outcome = processing.plan(session, requests, now=utcnow(), sources=self.sources,
                                      contexts={}, stored={})
            processing.apply(session, outcome)
            session.commit()
        except Exception:  # noqa: BLE001 - the leased path isolates the request that breaks it
            log.exception("batch of %d requests failed; leasing it to finish it request by "
                          "request", len(requests))
            session.rollback()
            return None
        return len(requests)

    def process(self, claimed: Sequence[Any]) -> None:
        contexts: dict[int, ProjectContext] = {}
        stored: dict[int, list[dict[str, Any]]] = {}
        failures: dict[int, RequestFailed] = {}
        with_files = [request for request in claimed
                      if files_to_store(request.feature.get("files") or ())]
        if with_files:
            with self.runtime.sessions() as session:
                session.execute(update(FeatureRequest).where(
                    FeatureRequest.id.in_([request.id for request in with_files]),
                    FeatureRequest.claimed_by == self.options.worker_id,
                ).values(step=REMOTE_STORAGE_REQUESTED, claimed_at=utcnow())
                    .execution_options(synchronize_session=False))
                for request in with_files:
                    if request.project_id not in contexts:
                        contexts[request.project_id] = processing.project_context(
                            session, request.project_id, self.sources)
                session.commit()
            for request in with_files:
                try:
                    stored[request.id] = processing.store_files(
                        request, contexts[request.project_id])
                except RequestFailed as failure:
                    failures[request.id] = failure
        try:
            self._finish(claimed, contexts, stored, failures)
        except Exception:  # noqa: BLE001 - isolate the request that breaks the batch
            log.exception("batch of %d requests failed; processing them one by one",
                          len(claimed))
            for request in claimed:
                try:
                    self._finish([request], contexts, stored, failures)
                except Exception as error:  # noqa: BLE001 - recorded on the request
                    log.exception("request %s failed", request.request_id)
                    failures[request.id] = RequestFailed(LOCAL_ERROR, f"Processing failed: "
                                                                      f"{error}")
                    self._finish([request], contexts, stored, failures)

    def _finish(self, requests: Sequence[Any], contexts: dict[int, ProjectContext],
                stored: dict[int, list[dict[str, Any]]],
                failures: dict[int, RequestFailed]) -> None:
        now = utcnow()
        with self.runtime.sessions() as session:
            # Planned before the writing transaction: on SQLite the API accepts meanwhile.
            with read_only(session):
                outcome = processing.plan(
                    session, [request for request in requests if request.id not in failures],
                    now=now, sources=self.sources, contexts=contexts, stored=stored)
            held = _still_held(session, [request.id for request in requests],
                               self.options.worker_id)
            lost = len(requests) - len(held)
            if lost:
                # Leases expired meanwhile: plan again, under the locks, what is still held.
                outcome = processing.plan(
                    session, [request for request in requests
                              if request.id in held and request.id not in failures],
                    now=now, sources=self.sources, contexts=contexts, stored=stored)
            for request in requests:
                if request.id in held and request.id in failures:
                    failure = failures[request.id]
                    outcome.failed(request, failure.step, failure.reason)
            processing.apply(session, outcome)
            session.commit()
            if lost:
                log.warning("%d claimed request(s) were taken back (lease expired)", lost)
            log.debug("finished %d request(s)", len(outcome.request_updates))

    # -- the loop --

    def run_forever(self, alive: Any = None) -> None:
        try:
            with self.runtime.sessions() as session:
                released = release_dead_claims(session)
                session.commit()
            if released:
                log.warning("%d request(s) claimed by a stopped worker went back to the queue",
                            released)
        except Exception:  # noqa: BLE001 - their leases still expire
            log.exception("could not release the claims of stopped workers")
        while not self._stopping and (alive is None or alive()):
            try:
                taken = self.run_once()
            except Exception:  # noqa: BLE001 - a worker outlives a failing batch
                log.exception("feature worker batch failed")
                taken = 0
            if taken == 0:
                woken = self._wake.wait(self.options.poll_seconds)
                self._wake.clear()
                if woken and not self._stopping:
                    # Let a burst of small requests gather into one batch: a batch per
                    # request would fight the API for the database at every request.
                    time.sleep(self.options.gather_seconds)

    def wake(self) -> None:
        self._wake.set()

    def start(self) -> FeatureWorker:
        self._thread = threading.Thread(target=self.run_forever, name="fem-worker", daemon=True)
        self._thread.start()
        return self

    def stop_soon(self) -> None:
        """Finish the batch under way, then leave run_forever (signal handlers)."""
        self._stopping = True
        self._wake.set()

    def stop(self) -> None:
        self.stop_soon()
        if self._thread is not None:
            self._thread.join(timeout=30)


def process_pending(runtime: Any, *, options: WorkerOptions | None = None,
                    max_batches: int = 1000) -> int:
    """Process every pending request now, in batches; the number processed."""
    worker = FeatureWorker(runtime, options)
    total = 0
    for _ in range(max_batches):
        taken = worker.run_once()
        if taken == 0:
            break
        total += taken
    return total


EMBEDDED_WORKER_NICENESS = 10


def tune_garbage_collector() -> None:
    """A batch allocates hundreds of thousands of short-lived objects (parsed features); with
    the default thresholds the cyclic collector rescans every long-lived object many times per
    batch, which costs a third of a batch. Objects alive after start-up are frozen out of its
    reach and it runs less often (reference counting frees the batches anyway)."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


class EmbeddedWorkerProcess:
    """The embedded worker as a child process forked by `featurehub serve`: one command still
    runs everything, but processing does not compete with the API for the interpreter lock (on
    2 cores this doubles acceptance speed). SQLite serialises the writers of both processes
    (BEGIN IMMEDIATE); the child leaves when its parent is gone."""

    def __init__(self, runtime: Any) -> None:
        context = multiprocessing.get_context("fork")
        self._wake = Wakeup()
        self._process = context.Process(target=self._run, args=(runtime, os.getpid()),
                                        name="fem-worker", daemon=True)
        self._process.start()

    def _run(self, runtime: Any, parent: int) -> None:
        runtime.engine.dispose(close=False)  # the parent's connections stay the parent's
        tune_garbage_collector()
        if not runtime.settings.is_sqlite:
            # Acceptance answers clients; processing is background work: when both want the
            # CPU, the API goes first (the worker catches up as soon as the API is idle). Not
            # on SQLite, where a descheduled worker holding the single write lock would make
            # the API wait the longer.
            os.nice(EMBEDDED_WORKER_NICENESS)
        worker = FeatureWorker(runtime, wakeup=self._wake)
        signal.signal(signal.SIGTERM, lambda *_: worker.stop_soon())
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        worker.run_forever(alive=lambda: os.getppid() == parent)

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(timeout=30)


def embedded_worker_count(runtime: Any) -> int:
    """SQLite has one writer at a time: one worker. PostgreSQL lets workers write side by
    side: one per core, at most 4 (more can run as `featurehub worker`)."""
    if runtime.settings.is_sqlite:
        return 1
    return max(1, min(4, os.cpu_count() or 1))


class EmbeddedWorkers:
    """The embedded worker processes, woken and stopped together."""

    def __init__(self, runtime: Any, count: int) -> None:
        self.processes = [EmbeddedWorkerProcess(runtime) for _ in range(count)]

    def wake(self) -> None:
        for process in self.processes:
            process.wake()

    def stop(self) -> None:
        for process in self.processes:
            process.stop()


def start_embedded_worker(runtime: Any) -> None:
    """APP_STARTED hook: the feature worker of `featurehub serve`, in a child process where
    fork exists, else in a thread."""
    if "fork" in multiprocessing.get_all_start_methods():
        runtime.workers[EMBEDDED] = EmbeddedWorkers(runtime, count=embedded_worker_count(runtime))
    else:
        runtime.workers[EMBEDDED] = FeatureWorker(runtime).start()


def wake_embedded_worker(runtime: Any) -> None:
    worker = runtime.workers.get(EMBEDDED)
    if worker is not None:
        worker.wake()
