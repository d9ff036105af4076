"""Per-session resource limits: set in each forked child before its session arrives.

Memory is address space (RLIMIT_AS: Linux does not enforce RLIMIT_RSS), files are open
descriptors (RLIMIT_NOFILE), CPU is seconds of CPU time (RLIMIT_CPU: SIGXCPU at the soft limit,
SIGKILL a second later). Processes: RLIMIT_NPROC counts per user (and root ignores it), so each
child leads its own process group (the fork server kills the group when the child ends) and, where
a cgroup `pids` controller is writable, joins a cgroup of its own whose `pids.max` bounds it
(processes and threads) while it runs. See docs/limits.md.
"""

import errno
import os
import resource
import signal

# A cgroup v1 `pids` hierarchy (cgroup v2 is used when it offers the pids controller).
V1_PIDS = "/sys/fs/cgroup/pids"
V2_ROOT = "/sys/fs/cgroup/unified"


class Limits:
    def __init__(self, memory_mib=0, files=0, cpu_seconds=0, processes=0):
        self.memory_mib = memory_mib
        self.files = files
        self.cpu_seconds = cpu_seconds
        self.processes = processes


# What this process was limited to (set in the child; read when an error is reported).
current = Limits()
_cgroup = None


def _pids_root():
    for root in (V1_PIDS, V2_ROOT):
        if os.path.exists(os.path.join(root, "cgroup.procs")) and os.access(root, os.W_OK):
            if root == V2_ROOT:
                try:
                    with open(os.path.join(root, "cgroup.subtree_control")) as f:
                        if "pids" not in f.read().split():
                            continue
                except OSError:
                    continue
            return root
    return None


def _remove_stale(root):
    """Folders of fork servers that are gone (killed before they could remove their own)."""
    try:
        names = [n for n in os.listdir(root) if n.startswith("hookline-")]
    except OSError:
        return
    for name in names:
        try:
            os.kill(int(name[len("hookline-") :]), 0)
            continue  # its server still runs
        except ProcessLookupError:
            pass
        except (ValueError, PermissionError):
            continue
        folder = os.path.join(root, name)
        try:
            for sub in os.listdir(folder):
                if sub.isdigit():
                    # Only empty ones go: nothing is killed on the word of a pid (pid namespaces).
                    try:
                        os.rmdir(os.path.join(folder, sub))
                    except OSError:
                        pass
            os.rmdir(folder)
        except OSError:
            pass  # still in use, or removed by another server meanwhile


def server_cgroups(server_pid):
    """The fork server's folder of per-session cgroups, or None where none can be made."""
    root = _pids_root()
    if root is None:
        return None
    _remove_stale(root)
    path = os.path.join(root, f"hookline-{server_pid}")
    try:
        os.makedirs(path, exist_ok=True)
        return path
    except OSError:
        return None


def apply(limits, cgroups):
    """In the child right after fork: its own process group, its cgroup, its rlimits."""
    global current, _cgroup
    current = limits
    os.setpgid(0, 0)
    if limits.processes and cgroups:
        path = os.path.join(cgroups, str(os.getpid()))
        try:
            os.mkdir(path)
            with open(os.path.join(path, "pids.max"), "w") as f:
                f.write(str(limits.processes))
            with open(os.path.join(path, "cgroup.procs"), "w") as f:
                f.write("0")
            _cgroup = path
        except OSError:
            pass  # the process group still ends with the session
    if limits.memory_mib:
        n = limits.memory_mib * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (n, n))
    if limits.files:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.files, limits.files))
    if limits.cpu_seconds:
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))


def _processes_hit():
    if _cgroup is None:
        return False
    try:
        with open(os.path.join(_cgroup, "pids.events")) as f:
            return any(line.split()[1] != "0" for line in f if line.startswith("max "))
    except (OSError, IndexError):
        return False


def explain(err, text):
    """The error text of a session, naming the limit that caused `err` when one did."""
    if isinstance(err, MemoryError) and current.memory_mib:
        return f"{text} (the session reached its memory limit of {current.memory_mib} MiB)"
    if isinstance(err, OSError) and err.errno in (errno.EMFILE, errno.ENFILE) and current.files:
        return f"{text} (the session reached its open files limit of {current.files})"
    if isinstance(err, OSError) and err.errno == errno.EAGAIN and _processes_hit():
        return f"{text} (the session reached its process limit of {current.processes})"
    return text


def end_group(pid, cgroups):
    """In the server once child `pid` has ended: kill what it left behind (its group, its cgroup)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if cgroups is None:
        return None
    path = os.path.join(cgroups, str(pid))
    if not os.path.isdir(path):
        return None
    return path


def sweep_cgroup(path):
    """Kills what remains in a session's cgroup and removes it; False while it is not yet empty."""
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            left = [int(p) for p in f.read().split()]
    except FileNotFoundError:
        return True
    except OSError:
        return False
    for p in left:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.rmdir(path)
        return True
    except OSError:  # zombies still counted until reaped
        return False
