"""The memory floor: an idle interpreter and one forked idle child of it.

Prints {"parent": pid, "child": pid} and exits (killing the child) when stdin closes.
"""

import json
import os
import signal
import sys

child = os.fork()
if child == 0:
    signal.pause()
    os._exit(0)
print(json.dumps({"parent": os.getpid(), "child": child}), flush=True)
try:
    while os.read(0, 4096):
        pass
finally:
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    sys.exit(0)
