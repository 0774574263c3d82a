"""The cyclic garbage collector paused while a run builds its records (they hold no cycles).

A replay allocates millions of small objects (parsed cassettes, decisions, records)
and frees nearly all of them by reference counting, while the collector would walk
the growing heap of records again and again: about a sixth of a check's time.
Forked replay workers inherit the pause.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection inside; afterwards the collector runs as before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # What was built moves to the oldest generation without being walked, as if it
        # had survived collections: the next young collections stay small.
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()


def skip_final_collection() -> None:
    """Spare an exiting process the collection over everything it built."""
    gc.freeze()
