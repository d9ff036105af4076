"""A replay check (`cli deploy --check-replay`, a re-run from a step): the handler runs against a
journal with nothing outside reached.

The service decides the check (src/sessions/replay-check.ts): it answers every step from the
journal and ends the process at the first step past it. Here the runner only makes sure nothing
runs for real meanwhile: every activity is asked of the service instead of run (so one past the
journal never runs), prints stay quiet, and the network is refused to workflow code and module
import alike.
"""

import socket

from .replay import Replay

# Past any journal: every step of a check is "on record", the service's to answer.
_EVERY_STEP = 1 << 62


def begin():
    """The check's replay, and the network refused from now on in this process."""
    _refuse_network()
    return Replay(_EVERY_STEP)


def _refused(*_args, **_kwargs):
    raise ConnectionRefusedError("no network during a replay check: activities answer from the journal")


def _refuse_network():
    socket.socket.connect = _refused
    socket.socket.connect_ex = _refused
    socket.create_connection = _refused
    socket.getaddrinfo = _refused
