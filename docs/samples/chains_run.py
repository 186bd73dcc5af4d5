"""The logs of docs/audit.md's gates and gang samples, in ./eventsched.db, made by the real
Scheduler over the simulated cluster (tests/chainlogs.py, as the tests make them):

    python chains_run.py gates            default/train: two gates lifted one after the
                                          other, then placed
    python chains_run.py gang LINE...     gang ml/ring stuck (two members wait at Permit, the
                                          third fits nowhere); each shell LINE is run while
                                          its scheduler still runs, printed as `$ LINE` and
                                          its output
"""

from __future__ import annotations

import subprocess
import sys

from eventsched.events import upgrade
from eventsched.logs import configure_logging
from tests.chainlogs import blocked_gang, gated_pod

URL = "sqlite:///eventsched.db"


def main(argv: list[str]) -> int:
    configure_logging(level="warning")  # on stderr: stdout is the sample
    upgrade(URL)
    if argv[:1] == ["gates"]:
        gated_pod(URL)
        return 0
    if argv[:1] == ["gang"]:
        with blocked_gang(URL):
            for line in argv[1:]:
                done = subprocess.run(
                    ["sh", "-c", line], capture_output=True, text=True, check=False
                )
                print(f"$ {line}\n{done.stdout}", end="")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
