"""The two Linux process controls the fork server and its children use, through prctl(2).

Elsewhere (no glibc, not Linux) both do nothing: children then do not die with a killed server
and orphans go to init, which reaps them.
"""

import ctypes
import signal

# <linux/prctl.h>
PR_SET_PDEATHSIG = 1  # the signal this process gets when its parent dies
PR_SET_CHILD_SUBREAPER = 36  # orphans of this process's descendants come to it, not to init

try:
    _LIBC = ctypes.CDLL(None, use_errno=True)
except OSError:
    _LIBC = None


def die_with_parent(sig=signal.SIGKILL):
    """This process gets `sig` when the thread that forked it ends (a fork server's children).

    >>> die_with_parent()
    """
    try:
        _LIBC.prctl(PR_SET_PDEATHSIG, sig)
    except Exception:  # no libc to call: see the module doc
        pass


def become_subreaper():
    """Orphans of this process's descendants are reparented here (and must be reaped here).

    A session's own children outlive it when it does not wait for them; the fork server reaps
    them and ends each session's process group.
    """
    try:
        _LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1)
    except Exception:  # as above
        pass
