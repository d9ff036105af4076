"""A replay check's process (`start.check`): nothing runs for real, every step is the service's."""

import json
import os
import pickle
import socket
import tempfile
import unittest
from hashlib import blake2b

from .harness import ForkServer

HANDLER = """
import os
import socket
import workflow_sdk

# Module import runs directly (no activities): a check refuses its network all the same.
try:
    socket.create_connection(("127.0.0.1", int(os.environ["PORT"]))).close()
    AT_IMPORT = "connected"
except ConnectionRefusedError:
    AT_IMPORT = "refused"


@workflow_sdk.activity
def charge(order, amount):
    open(os.path.join(os.environ["WORK"], "charged"), "w").write(str(amount))
    return "receipt"


def on_post(event):
    print("charging")
    charge("A", 10)
    charge("B", AT_IMPORT)
"""


class ReplayCheckTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ForkServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_activities_are_asked_for_never_run_and_the_network_is_refused(self):
        work = tempfile.mkdtemp(prefix="hl-check-")
        listening = socket.create_server(("127.0.0.1", 0))  # reachable, but not from a check
        self.addCleanup(listening.close)
        port = str(listening.getsockname()[1])
        asked = []

        def answer(msg, sock):
            # The service's side: every activity is answered as recorded (a result), in order.
            if msg["type"] == "replay_activity":
                asked.append(msg)
                reply = {"type": "reply", "req": msg["req"], "ok": True, "value": {"result": "gAROLg=="}}
                sock.sendall((json.dumps(reply) + "\n").encode())
                return True
            return False

        r = self.server.run(
            {"handlers.py": HANDLER},
            durable=True,
            check=True,
            env={"WORK": work, "PORT": port},
            on_message=answer,
        )
        self.assertTrue(r.done["ok"], r.messages)
        self.assertFalse(os.path.exists(os.path.join(work, "charged")))  # never ran
        self.assertEqual(
            [(m["seq"], m["function"]) for m in asked], [(0, "handlers.charge"), (1, "handlers.charge")]
        )
        self.assertEqual(len(asked[0]["args"]), 16)  # the arguments' digest, for the service to compare
        refused = pickle.dumps((("B", "refused"), {}), pickle.HIGHEST_PROTOCOL)
        self.assertEqual(asked[1]["args"], blake2b(refused, digest_size=8).hexdigest())
        self.assertEqual(r.prints, [])  # quiet, as a replay is
        self.assertEqual(r.of("step") + r.of("activity"), [])


if __name__ == "__main__":
    unittest.main()
