"""`python -m eventsched.benchmarks.failover`: see cli.py."""

import sys

from eventsched.benchmarks.failover.cli import main

if __name__ == "__main__":
    sys.exit(main())
