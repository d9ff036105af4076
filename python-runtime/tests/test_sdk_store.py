"""The store functions, through the real runner against the scripted service side."""

import unittest

from .harness import FakeService, ForkServer

STORE_HANDLER = """
    import autokitteh
    from autokitteh import store
    from autokitteh.errors import AutoKittehError
    def on_post(event):
        print(autokitteh.get_value("missing"))
        autokitteh.set_value("n", 41)
        print(autokitteh.add_values("n", 1), autokitteh.get_value("n"))
        print(autokitteh.add_values("big", 2**70), autokitteh.add_values("big", 2**70) == 2**71)
        print(repr(autokitteh.add_values("f", 0.5)), repr(autokitteh.add_values("f", 0.5)))
        first = autokitteh.check_and_set_value("c", None, "first")
        print(first, autokitteh.check_and_set_value("c", None, "x"))
        print(autokitteh.check_and_set_value("c", "first", "second"), autokitteh.get_value("c"))
        autokitteh.set_value("t", (1, b"raw", {"k": [1.0]}))
        print(autokitteh.get_value("t"))
        print(autokitteh.mutate_value("m", "set", 5), autokitteh.mutate_value("m", autokitteh.Op.ADD, 2),
              autokitteh.mutate_value("m", "get"), autokitteh.mutate_value("m", "check_and_set", 7, 8),
              autokitteh.mutate_value("m", "del"), autokitteh.mutate_value("m", "get"))
        store["d"] = {"a": 1}
        print(store["d"], "d" in store, "zz" in store, store.get("zz", "dflt"), store["zz"])
        del store["d"]
        autokitteh.set_value("n", None)
        autokitteh.del_value("nothing-there")
        print(autokitteh.list_values_keys(), sorted(store.keys()), len(store))
        autokitteh.publish_value("c")
        print(autokitteh.get_store_public_url())
        autokitteh.unpublish_value("c")
        try:
            autokitteh.set_value("huge", "x" * 500)
        except AutoKittehError as e:
            print("too large:", e)
        try:
            autokitteh.add_values("c", 1)
        except TypeError as e:
            print("TypeError:", e)
        try:
            autokitteh.set_value("", 1)
        except ValueError as e:
            print("ValueError:", e)
    """

EXPECTED_PRINTS = [
    "None",
    "42 42",
    "1180591620717411303424 True",
    "0.5 1.0",
    "True False",
    "True second",
    "(1, b'raw', {'k': [1.0]})",
    "None 7 7 True None None",
    "{'a': 1} True False dflt None",
    "['big', 'c', 'f', 't'] ['big', 'c', 'f', 't'] 4",
    "http://127.0.0.1:9980/store/prj_x",
    "too large: store: value of 'huge' is 502 bytes, over the limit of 200",
    "TypeError: store: 'c' holds a str, not a number",
    "ValueError: store: a key is a non-empty string of at most 256 characters, got ''",
]


class StoreTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ForkServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def run_store(self, service=None, **start):
        service = service or FakeService()
        r = self.server.run({"handlers.py": STORE_HANDLER}, service=service, **start)
        self.assertEqual(r.done, {"type": "done", "ok": True}, r.messages)
        return r, service

    def test_every_function_non_durable(self):
        r, service = self.run_store()
        self.assertEqual(r.prints, EXPECTED_PRINTS)
        self.assertEqual(service.kv["big"], {"$int": str(2**71)})  # exact on the wire
        self.assertEqual(service.kv["f"], {"$float": "1.0"})  # a float stays a float
        self.assertEqual(service.published, set())
        requests = r.of("store")
        self.assertTrue(all("seq" not in m for m in requests))
        first_add = next(m for m in requests if m["op"] == "add")
        self.assertEqual((first_add["key"], first_add["args"]), ("n", [1]))
        big = [m for m in requests if m.get("key") == "big"][0]
        self.assertEqual(big["args"], [{"$int": str(2**70)}])
        listing = next(m for m in requests if m["op"] == "list_keys")
        self.assertEqual(listing, {"type": "store", "op": "list_keys", "args": [], "req": listing["req"]})
        self.assertEqual(r.of("activity"), [])  # store calls are requests, never activities

    def test_durable_requests_are_numbered_and_replay_from_the_journal(self):
        live, service = self.run_store(durable=True)
        self.assertEqual(live.prints, EXPECTED_PRINTS)
        requests = live.of("store")
        self.assertEqual([m["seq"] for m in requests], list(range(len(requests))))
        journal = live.journal()
        self.assertEqual(len(journal), len(requests))
        self.assertEqual(journal[2], {"seq": 2, "kind": "store", "value": 42})
        failed = [s for s in journal if "error" in s]
        self.assertEqual([s["error"] for s in failed], ["AutoKittehError", "TypeError"])

        fresh = FakeService()
        replay = self.server.run({"handlers.py": STORE_HANDLER}, service=fresh, durable=True, journal=journal)
        self.assertEqual(replay.done, {"type": "done", "ok": True}, replay.messages)
        self.assertEqual(replay.of("store"), [])  # nothing asked again
        self.assertEqual(fresh.kv, {})
        # Prints before the last journaled step are dropped; the last lines (after it) run live,
        # and their values come from the journal: the errors are raised again.
        self.assertEqual(replay.prints, EXPECTED_PRINTS[-2:])

    def test_partial_replay_continues_live(self):
        live, _ = self.run_store(durable=True)
        service = FakeService()
        r = self.server.run(
            {"handlers.py": STORE_HANDLER}, service=service, durable=True, journal=live.journal()[:3]
        )
        self.assertEqual(r.done, {"type": "done", "ok": True}, r.messages)
        self.assertEqual(r.of("store")[0]["seq"], 3)
        self.assertIsNone(service.kv.get("n"))  # the journaled set_value/add_values were not resent

    def test_store_calls_refused_inside_an_activity(self):
        r = self.server.run(
            {
                "handlers.py": """
                import autokitteh
                CALLS = [
                    lambda: autokitteh.get_value("k"), lambda: autokitteh.set_value("k", 1),
                    lambda: autokitteh.del_value("k"), lambda: autokitteh.add_values("k", 1),
                    lambda: autokitteh.check_and_set_value("k", None, 1),
                    lambda: autokitteh.mutate_value("k", "get"), lambda: autokitteh.list_values_keys(),
                    lambda: autokitteh.store["k"], lambda: autokitteh.publish_value("k"),
                    lambda: autokitteh.unpublish_value("k"), lambda: autokitteh.get_store_public_url(),
                ]
                @autokitteh.activity
                def inside():
                    refused = []
                    for call in CALLS:
                        try:
                            call()
                        except RuntimeError as e:
                            refused.append("inside an activity" in str(e))
                    return refused
                def on_post(event):
                    print(inside())
                """
            }
        )
        self.assertEqual(r.done, {"type": "done", "ok": True}, r.messages)
        self.assertEqual(r.prints, [str([True] * 11)])
        self.assertEqual(r.of("store"), [])


if __name__ == "__main__":
    unittest.main()
