"""What this machine charges for what a session's process pays: `python calibrate.py` prints one
JSON object, each figure the median of several runs (docs/performance.md, "The machine").

  cow_fault_us    one copy-on-write fault: a child forked from a process holding 64 MiB writes one
                  byte into each of 1,200 of the pages it shares with its parent
  zero_fault_us   one zero-fill fault: a process writes one byte into each of 1,200 pages of
                  anonymous memory it has never touched
  fork_exit_ms    fork + exit + wait of a warm interpreter (the fork server's imports, frozen heap)
  pipe_rtt_us     one byte to another process and one back, over two pipes

Faults are counted (getrusage), not assumed: each figure is the time over the faults taken.
"""

import gc
import json
import mmap
import os
import resource
import statistics
import sys
import time

PAGE = mmap.PAGESIZE
PAGES = 1200
RUNS = 5


def _faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _touch(buf, pages):
    """µs per fault of writing one byte into each of `pages` pages of `buf` (spread over it)."""
    step = (len(buf) // pages) // PAGE * PAGE
    f0, t0 = _faults(), time.perf_counter()
    for i in range(pages):
        buf[i * step] = 1
    t1, f1 = time.perf_counter(), _faults()
    return (t1 - t0) * 1e6 / max(1, f1 - f0)


def in_child(fn):
    """Runs `fn` in a forked child; its float result comes back over a pipe."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, repr(fn()).encode())
        os._exit(0)
    os.close(w)
    value = float(os.read(r, 64))
    os.close(r)
    os.waitpid(pid, 0)
    return value


def cow_fault_us():
    buf = bytearray(64 * 1024 * 1024)
    for i in range(0, len(buf), PAGE):  # every page made, and the parent's own
        buf[i] = 1
    return statistics.median(in_child(lambda: _touch(buf, PAGES)) for _ in range(RUNS))


def zero_fault_us():
    def fresh():
        with mmap.mmap(-1, PAGES * PAGE) as m:
            return _touch(m, PAGES)

    return statistics.median(in_child(fresh) for _ in range(RUNS))


def fork_exit_ms():
    import workflow_sdk.runner.forkserver  # noqa: F401  the fork server's imports

    gc.collect()
    gc.freeze()
    times = []
    for _ in range(40):
        t = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def pipe_rtt_us(rounds=2000):
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(a_w)  # else the child holds its own pipe open and never sees the end
        os.close(b_r)
        while os.read(a_r, 1):
            os.write(b_w, b"x")
        os._exit(0)
    os.close(a_r)
    os.close(b_w)
    batches = []
    for _ in range(RUNS):
        t = time.perf_counter()
        for _ in range(rounds // RUNS):
            os.write(a_w, b"x")
            os.read(b_r, 1)
        batches.append((time.perf_counter() - t) * 1e6 / (rounds // RUNS))
    os.close(a_w)
    os.waitpid(pid, 0)
    os.close(b_r)
    return statistics.median(batches)


if __name__ == "__main__":
    out = {
        "cow_fault_us": cow_fault_us(),
        "zero_fault_us": zero_fault_us(),
        "fork_exit_ms": fork_exit_ms(),
        "pipe_rtt_us": pipe_rtt_us(),
        "python": sys.version.split()[0],
    }
    print(json.dumps(out))
