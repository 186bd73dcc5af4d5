"""A command run with its stderr on a pseudo-terminal, for tests of what it draws there."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import termios
from collections.abc import Sequence


def on_a_terminal(argv: Sequence[str], columns: int = 100, timeout: float = 600) -> bytes:
    """What `argv` drew on a terminal of 24 x `columns` (stdout discarded); it must exit 0.

    A terminal of no width gets nothing from tqdm, hence the size."""
    main_fd, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    done = subprocess.Popen(
        list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=terminal
    )
    os.close(terminal)
    drawn = b""
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        drawn += chunk
    os.close(main_fd)
    assert done.wait(timeout=timeout) == 0
    return drawn
