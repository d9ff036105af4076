"""The real fork server (`python -m tests.slow_notify serve …`), whose spares wait a second
before telling it on the notify pipe that they took a connection: the moment in which `retire`
once killed a session's process, made long enough for a test to meet every time. Tests only."""

import os
import sys
import time

from workflow_sdk.runner import forkserver
from workflow_sdk.runner.main import main

_notify_fds = set()
_init = forkserver.ForkServer.__init__


def _init_noting_notify(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    _notify_fds.add(self.notify_w)


class _SlowNotifyOs:
    """`os` as the fork server sees it, but a write to the notify pipe comes a second late."""

    def __getattr__(self, name):
        return getattr(os, name)

    @staticmethod
    def write(fd, data):
        if fd in _notify_fds:
            time.sleep(1.0)
        return os.write(fd, data)


forkserver.ForkServer.__init__ = _init_noting_notify
forkserver.os = _SlowNotifyOs()

if __name__ == "__main__":
    sys.exit(main())
