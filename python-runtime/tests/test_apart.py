"""Activity values too big for one message (runner/apart.py): sent in parts, replayed from parts."""

import base64
import os
import pickle
import tempfile
import unittest

from workflow_sdk.runner import apart

from .harness import ForkServer, make_event

HANDLER = """
import hashlib
import workflow_sdk

@workflow_sdk.activity
def big(n, counter):
    with open(counter, "a") as f:
        f.write("x")
    if n < 0:
        raise ValueError("e" * -n)
    return b"y" * n

def on_post(event):
    counter = event.data.body.text.split()[0]
    n = int(event.data.body.text.split()[1])
    try:
        value = big(n, counter)
    except ValueError as e:
        value = str(e).encode()
    print(len(value), hashlib.sha256(value).hexdigest()[:12])
"""


class ApartTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ForkServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def setUp(self):
        fd, self.counter = tempfile.mkstemp()
        os.close(fd)

    def tearDown(self):
        os.unlink(self.counter)

    def run_big(self, n, journal=()):
        event = make_event(body=f"{self.counter} {n}".encode())
        return self.server.run({"handlers.py": HANDLER}, durable=True, event=event, journal=journal)

    def runs(self):
        with open(self.counter) as f:
            return len(f.read())

    def test_a_value_over_1_mib_goes_in_parts_and_replays_from_them(self):
        n = 3 * 1024 * 1024 + 5
        live = self.run_big(n)
        self.assertEqual(live.done, {"type": "done", "ok": True}, live.messages[-1:])
        parts = live.of("part")
        size = len(pickle.dumps(b"y" * n, pickle.HIGHEST_PROTOCOL))
        self.assertEqual(
            [len(base64.b64decode(p["data"])) for p in parts], [apart.PART] * 3 + [size - 3 * apart.PART]
        )
        (step,) = live.of("step")
        self.assertNotIn("result", step)
        self.assertEqual(step["apart"], {"field": "result", "parts": 4, "bytes": size})
        self.assertEqual(b"".join(base64.b64decode(p["data"]) for p in parts), pickle.dumps(b"y" * n, 5))
        # Replayed: the service sends the parts back before its reply; the activity does not run.
        replay = self.run_big(n, journal=live.journal())
        self.assertEqual(replay.done, {"type": "done", "ok": True}, replay.messages[-1:])
        self.assertEqual(self.runs(), 1)
        self.assertEqual(replay.prints, live.prints)
        self.assertEqual(live.prints[0].split()[0], str(n))

    def test_an_exception_over_1_mib_goes_apart_too(self):
        live = self.run_big(-2 * 1024 * 1024)
        (step,) = live.of("step")
        self.assertEqual(step["apart"]["field"], "error")
        replay = self.run_big(-2 * 1024 * 1024, journal=live.journal())
        self.assertEqual(replay.prints, live.prints)
        self.assertEqual(self.runs(), 1)

    def test_a_value_up_to_1_mib_stays_in_its_step(self):
        live = self.run_big(1000)
        self.assertEqual(live.of("part"), [])
        self.assertIn("result", live.of("step")[0])

    def test_a_value_over_64_mib_fails_the_session_naming_the_limit(self):
        live = self.run_big(apart.MAX + 1)
        self.assertFalse(live.done["ok"])
        self.assertIn("the result of activity handlers.big is 671088", live.done["error"])
        self.assertIn("over 67108864 bytes (64 MiB), the most a journaled value may hold", live.done["error"])
        self.assertEqual(live.of("part"), [])
        self.assertEqual(live.of("step"), [])


if __name__ == "__main__":
    unittest.main()
