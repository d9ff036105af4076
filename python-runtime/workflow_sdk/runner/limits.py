"""Per-session resource limits: set in each forked child before its session arrives.

Memory is memory where a cgroup can bound it (`memory.max` on cgroup v2, `memory.limit_in_bytes`
on v1; see cgroups.py): the pages a session touches, and the kernel's OOM killer ends it at the
limit. Elsewhere it falls back to address space (RLIMIT_AS: Linux does not enforce RLIMIT_RSS)
above what the process had at fork, with room for its threads: thread stacks of THREAD_STACK
and one malloc arena (glibc reserves 64 MiB of address space per extra arena and 8 MiB per
default stack, which once made a 256 MiB limit fail every session that started an activity).
Files are open descriptors (RLIMIT_NOFILE), CPU is seconds of CPU time (RLIMIT_CPU: SIGXCPU at
the soft limit, SIGKILL a second later). Processes: RLIMIT_NPROC counts per user (and root ignores
it), so each child leads its own process group (the fork server kills the group when the child
ends) and, where a cgroup `pids` controller is writable, joins a cgroup of its own whose `pids.max`
bounds it (processes and threads) while it runs. CPU priority: the fork server lowers its own
(`server_priority`, inherited by every child) and, at `idle`, each child takes the SCHED_IDLE
policy, so a session runs on what the service leaves. See docs/limits.md.
"""

import ctypes
import errno
import os
import resource
import signal
import threading

from . import cgroups as cgroups_module

# Address-space fallback only. 512 KiB was measured to be enough for Python's default recursion
# limit through C calls in a thread (256 KiB segfaults); twice that, for extensions.
THREAD_STACK = 1024 * 1024
# Threads of a session: reader, two capture pumps, watchdog, activity lane, 8 activity workers,
# and room for a few the handler starts itself.
THREADS_ROOM = 24 * (THREAD_STACK + 64 * 1024)
M_ARENA_MAX = -8
# The fork server's niceness at each priority, at least (its children inherit it): a server started
# lower already, as by a session host that runs below its front door, stays where it is. `idle`
# sessions also take SCHED_IDLE where the OS has it, and keep nice 19 where it does not (macOS).
NICENESS = {"idle": 19, "low": 5, "normal": 0}


class Limits:
    def __init__(self, memory_mib=0, files=0, cpu_seconds=0, processes=0, priority="low"):
        self.memory_mib = memory_mib
        self.files = files
        self.cpu_seconds = cpu_seconds
        self.processes = processes
        self.priority = priority


# What this process was limited to (set in the child; read when an error is reported).
current = Limits()
_joined = {}  # controller -> the cgroup bounding this process


def server_cgroups(server_pid, limits):
    """The fork server's folders of per-session cgroups ({} where none can be made)."""
    wanted = {c for c, n in (("pids", limits.processes), ("memory", limits.memory_mib)) if n}
    return cgroups_module.server_folders(server_pid, wanted)


def _vm_size():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _address_space(memory_mib):
    """The fallback: a bound on address space that leaves `memory_mib` to the session's data."""
    try:
        ctypes.CDLL(None).mallopt(M_ARENA_MAX, 1)  # threads share the main arena
    except (OSError, AttributeError):
        pass
    threading.stack_size(THREAD_STACK)
    n = _vm_size() + memory_mib * 1024 * 1024 + THREADS_ROOM
    resource.setrlimit(resource.RLIMIT_AS, (n, n))


def server_priority(limits):
    """In the fork server before its first fork: its niceness (NICENESS at least), which its
    children inherit."""
    try:
        os.nice(max(0, NICENESS[limits.priority] - os.nice(0)))
    except OSError:
        pass


def apply(limits, cgroups):
    """In the child right after fork: its own process group, its cgroups, its rlimits, and at
    priority `idle` the SCHED_IDLE policy (before any thread starts: threads inherit it)."""
    global current, _joined
    current = limits
    os.setpgid(0, 0)
    if limits.priority == "idle" and hasattr(os, "SCHED_IDLE"):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    values = {"pids": limits.processes, "memory": limits.memory_mib * 1024 * 1024}
    _joined = cgroups_module.join(cgroups, {c: n for c, n in values.items() if n})
    if limits.memory_mib and "memory" not in _joined:
        _address_space(limits.memory_mib)
    if limits.files:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.files, limits.files))
    if limits.cpu_seconds:
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))


def _hit(controller):
    return controller in _joined and cgroups_module.hit(controller, _joined[controller])


def _thread_start_failed(err):
    return isinstance(err, RuntimeError) and "can't start new thread" in str(err)


def explain(err, text):
    """The error text of a session, naming the limit that caused `err` when one did."""
    memory = f"{text} (the session reached its memory limit of {current.memory_mib} MiB)"
    if isinstance(err, MemoryError) and current.memory_mib:
        return memory
    if isinstance(err, OSError) and err.errno in (errno.EMFILE, errno.ENFILE) and current.files:
        return f"{text} (the session reached its open files limit of {current.files})"
    no_thread = _thread_start_failed(err)
    if (no_thread or isinstance(err, OSError) and err.errno == errno.EAGAIN) and _hit("pids"):
        return f"{text} (the session reached its process limit of {current.processes})"
    if no_thread and current.memory_mib and ("memory" not in _joined or _hit("memory")):
        return memory  # address space (or a cgroup's memory) left no room for a thread's stack
    return text


def end_group(pid, cgroups):
    """In the server once child `pid` has ended: kill what it left behind in its group; returns
    its cgroups, to be swept (cgroups.sweep) once they are empty."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return cgroups_module.session_paths(cgroups, pid) if cgroups else []


sweep_cgroup = cgroups_module.sweep
oom_killed = cgroups_module.oom_killed
remove_cgroups = cgroups_module.remove_folders
