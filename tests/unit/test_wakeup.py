"""The wake-up call of the background loops: never blocked by a process killed while it woke
them, and usable from a signal handler."""

from __future__ import annotations

import os
import random
import signal
import threading
import time

from featurehub.wakeup import Wakeup


def test_a_wake_up_call_stays_until_cleared():
    wakeup = Wakeup()
    assert wakeup.wait(0.01) is False
    wakeup.set()
    wakeup.set()
    assert wakeup.wait(0) is True
    assert wakeup.wait(0) is True
    wakeup.clear()
    assert wakeup.wait(0.01) is False


def test_set_never_blocks_once_the_pipe_is_full():
    wakeup = Wakeup()
    for _ in range(200_000):  # far more bytes than a pipe holds
        wakeup.set()
    wakeup.clear()
    assert wakeup.wait(0) is False


def _killed_while_setting(wakeup: Wakeup) -> None:
    child = os.fork()
    if child == 0:  # pragma: no cover - the child only wakes, until it is killed
        while True:
            wakeup.set()
            wakeup.clear()
    time.sleep(random.uniform(0.001, 0.02))
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)


def _wait_and_clear(wakeup: Wakeup) -> None:
    wakeup.wait(0.01)
    wakeup.clear()


def test_a_process_killed_while_it_wakes_never_blocks_the_waiter():
    """The API process, killed mid-request, may be inside `set`: its orphaned worker must still
    wait, clear and notice it is alone (with a multiprocessing.Event, whose lock the dead
    process keeps, most of these waits never returned)."""
    for _ in range(20):
        wakeup = Wakeup()
        _killed_while_setting(wakeup)
        waiter = threading.Thread(target=_wait_and_clear, args=(wakeup,), daemon=True)
        waiter.start()
        waiter.join(timeout=5)
        assert not waiter.is_alive(), "a wait stayed blocked after its setter was killed"


def test_a_signal_handler_wakes_the_waiting_thread():
    """SIGTERM asks a worker to stop: its handler sets the wake-up call the worker waits on."""
    wakeup = Wakeup()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child, reports by its exit code
        code = 1
        try:
            signal.signal(signal.SIGALRM, lambda *_: wakeup.set())
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            started = time.monotonic()
            woken = wakeup.wait(10)
            code = 0 if woken and time.monotonic() - started < 5 else 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + 15
    while (status := os.waitpid(child, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    if status[0] == 0:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    assert status[0] == child and os.waitstatus_to_exitcode(status[1]) == 0
