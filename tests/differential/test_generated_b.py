"""The breadth suite's chunk files 3 to 5 (generated_replay.py says how they are replayed)."""

from tests.differential.generated_replay import slice_test

test_generated_slice = slice_test(range(3, 6))
