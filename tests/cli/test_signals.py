"""SIGTERM and SIGINT are taken on a thread of their own (eventsched/cli/signals.py).

The scheduler loop waits for its inbox in `SimpleQueue.get(timeout=...)`. When
a Python signal handler ran on the main thread inside that wait and ran past
its deadline, CPython 3.11 went on waiting with a negative timeout, that is,
until something was put: `eventsched run` logged "stopping" and did not stop
(seen in two of six full runs of this suite). These tests run the wait in a
child process, as the loop does, and stop it with a signal.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

import pytest

from eventsched.cli.signals import StopSignals

#: The loop's wait in miniature: short waits on a SimpleQueue until stopped. The stop takes
#: longer than a wait (as a log line and more can), and a watchdog puts an item after 20 s,
#: so a wait that never ends shows as "late" instead of hanging the test.
CHILD = """
import queue, sys, threading, time
from eventsched.cli.signals import StopSignals

stop = threading.Event()
inbox = queue.SimpleQueue()

def stopping(signum):
    time.sleep(0.2)
    print("stopping on", threading.current_thread().name, signum.name, flush=True)
    stop.set()

with StopSignals(stopping):
    watchdog = threading.Timer(20, lambda: inbox.put("late"))
    watchdog.daemon = True
    watchdog.start()
    print("ready", flush=True)
    while not stop.is_set():
        try:
            print("got", inbox.get(timeout=0.01), flush=True)
            break
        except queue.Empty:
            pass
print("stopped", flush=True)
sys.exit(0)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_the_loops_wait_stops_it(signum: signal.Signals) -> None:
    for _ in range(5):  # each a fresh process: the signal lands at a different point
        child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        child.send_signal(signum)
        out, _ = child.communicate(timeout=15)
        assert child.returncode == 0, out
        assert out.splitlines() == [f"stopping on signals {signum.name}", "stopped"]


def test_the_mask_is_given_back_and_the_thread_ends() -> None:
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    taken: list[signal.Signals] = []
    with StopSignals(taken.append):
        inside = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        assert {signal.SIGTERM, signal.SIGINT} <= inside
        assert any(t.name == "signals" for t in threading.enumerate())
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before
    assert not any(t.name == "signals" for t in threading.enumerate())
    assert taken == []  # the signal that ends the thread is not passed on
