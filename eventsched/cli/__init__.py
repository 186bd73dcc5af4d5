"""The `eventsched` command line.

numpy's OpenBLAS starts a thread per core when numpy is imported, and each spins
a while waiting for work: about 0.1 s of CPU at every start on two cores, more
on a bigger node. eventsched never hands OpenBLAS work (its arrays are integer
and element-wise; the one product is of int64s, which numpy does without BLAS),
so the command asks for one thread before anything imports numpy. A value the
user set is kept.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
