"""Command-line interface: thin modules over the Python API."""

import os

# The commands' numerics are element-wise array work and small solves, which OpenBLAS's thread
# pool does not speed up; its threads start and spin while numpy loads, which costs every command
# about 0.1 s of CPU at start-up. A value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
