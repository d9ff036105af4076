"""A tiny fake service: starts the real fork server and plays the service side of the protocol."""

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap

from .scripted import SDK_KINDS, ScriptedSdk

RUNTIME_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_event(body=b'{"a": 1}', headers=None, method="POST", session_id="ses_test"):
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    return {
        "event_id": "evt_test",
        "session_id": session_id,
        "event_type": method.lower(),
        "data": {
            "method": method,
            "raw_url": "/webhooks/x/a?b=1",
            "url": {"path": "/webhooks/x/a", "query": {"b": "1"}, "path_suffix": "a"},
            "headers": headers or {"Content-Type": "application/json"},
            "body": {"bytes": base64.b64encode(body).decode(), "text": text, "json": parsed, "form": None},
        },
    }


def write_project(files, testcase=None):
    """Write files into a fresh directory (removed with the test when `testcase` is given)."""
    root = tempfile.mkdtemp(prefix="hl-project-")
    if testcase is not None:
        testcase.addCleanup(shutil.rmtree, root, True)
    for name, text in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
    return root


def recorded_reply(msg, step):
    """What the service answers a replayed step with: its record (src/sessions/steps.ts)."""
    if msg["type"] == "replay_activity":
        return {"ok": True, "value": {k: v for k, v in step.items() if k != "parts"}}
    if "error" in step and step["kind"] != "activity":
        return {"ok": False, "error": step["error"], "message": step.get("message", "")}
    return {"ok": True, "value": step.get("value")}


class Result:
    def __init__(self, messages, pid, replies=None, replayed=()):
        self.messages = messages  # what the child sent, but for the steps answered from the journal
        self.pid = pid
        self.replies = replies or {}
        self.replayed = list(replayed)  # the replayed steps the child sent, answered from the journal

    def journal(self):
        """The journal a service would keep for this (durable) run, in step order."""
        steps = []
        for m in self.messages:
            if m["type"] == "step":
                steps.append({k: v for k, v in m.items() if k != "type"})
                if m.get("apart"):  # its value came before it, in parts: kept with the step here
                    steps[-1]["parts"] = [p["data"] for p in self.of("part") if p["seq"] == m["seq"]]
            elif m["type"] == "outcome" and "seq" in m:
                steps.append({"seq": m["seq"], "kind": "outcome"})
            elif "req" in m and "seq" in m:
                reply = self.replies[m["req"]]
                step = {"seq": m["seq"], "kind": m["type"]}
                if reply["ok"]:
                    step["value"] = reply.get("value")
                else:
                    step.update(error=reply["error"], message=reply["message"])
                steps.append(step)
        return sorted(steps, key=lambda s: s["seq"])

    def of(self, kind):
        return [m for m in self.messages if m["type"] == kind]

    @property
    def prints(self):
        return [m["text"] for m in self.of("print")]

    @property
    def done(self):
        done = self.of("done")
        return done[-1] if done else None

    @property
    def outcomes(self):
        return self.of("outcome")


class FakeService(ScriptedSdk):
    """Answers requests: subscribe → sub_N (or an error for unknown names), next_event → queued
    events, and the SDK requests as `ScriptedSdk` does."""

    def __init__(self, events=(), triggers=("t",), signals=()):
        ScriptedSdk.__init__(self, signals)
        self.events = list(events)
        self.triggers = set(triggers)
        self.subs = 0

    def answer(self, msg):
        kind = msg["type"]
        if kind in SDK_KINDS:
            return self.answer_sdk(msg)
        if kind == "subscribe":
            if msg["name"] not in self.triggers:
                return {"ok": False, "error": "ValueError", "message": f"unknown source {msg['name']!r}"}
            self.subs += 1
            return {"ok": True, "value": f"sub_{self.subs}"}
        if kind == "next_event":
            return {"ok": True, "value": self.events.pop(0) if self.events else None}
        return {"ok": True, "value": None}


class ForkServer:
    def __init__(self, preload="", args=(), env=None, runner="workflow_sdk.runner", nice=0):
        self.dir = tempfile.mkdtemp(prefix="hl-srv-")
        self.socket_path = os.path.join(self.dir, "s.sock")
        cmd = [sys.executable, "-m", runner, "serve", "--socket", self.socket_path, *args]
        if preload:
            cmd += ["--preload", preload]
        extra = (env or {}).get("PYTHONPATH")  # more folders after the runtime's, e.g. a test's packages
        env = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join(filter(None, [RUNTIME_DIR, extra]))}
        # nice: started that much below this process, as a session host below its front door starts it.
        lower = (lambda: os.nice(nice)) if nice else None
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, preexec_fn=lower
        )
        self.ready = json.loads(self.proc.stdout.readline())

    def connect(self, timeout=20):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(self.socket_path)
        return sock

    def open(
        self,
        project_dir,
        entry="handlers.py:on_post",
        event=None,
        durable=False,
        journal=(),
        env=None,
        workflow_timeout=10,
        pickle_values=None,
        **more,
    ):
        """Connect, read hello, send start (`more`: more of its members, e.g. retry, check).

        Returns (sock, reader, hello)."""
        sock = self.connect()
        reader = sock.makefile("rb")
        hello = json.loads(reader.readline())
        start = {
            "type": "start",
            "session_id": "ses_test",
            "project_dir": project_dir,
            "entry": entry,
            "event": event or make_event(),
            "env": env or {},
            "durable": durable,
            "journal": list(journal),
            "workflow_timeout": workflow_timeout,
        }
        if pickle_values is not None:
            start["pickle_values"] = pickle_values
        start.update(more)
        sock.sendall((json.dumps(start) + "\n").encode())
        return sock, reader, hello

    def run(self, files, service=None, on_message=None, project_dir=None, keep_project=False, **start):
        """Run one session to its end; returns a Result with every message the child sent."""
        keep_project = keep_project or project_dir is not None and project_dir.startswith(self.dir)
        project_dir = project_dir or write_project(files)
        service = service or FakeService()
        messages = []
        replies = {}
        replayed = []
        journal = list(start.get("journal", ())) if start.get("durable") else []
        sock, reader, hello = self.open(project_dir, **start)
        try:
            for line in reader:
                msg = json.loads(line)
                # (A step is live even at a recorded number: a pending retry's last attempt.)
                if msg.get("seq", len(journal)) < len(journal) and msg["type"] != "step":
                    # A recorded step: the service answers it from its journal, like steps.ts.
                    replayed.append(msg)
                    if "req" in msg:
                        for data in journal[msg["seq"]].get("parts", ()):  # a value kept apart
                            part = {"type": "replay_part", "seq": msg["seq"], "data": data}
                            sock.sendall((json.dumps(part) + "\n").encode())
                        answer = recorded_reply(msg, journal[msg["seq"]])
                        reply = {"type": "reply", "req": msg["req"], **answer}
                        sock.sendall((json.dumps(reply) + "\n").encode())
                    continue
                messages.append(msg)
                if on_message and on_message(msg, sock):
                    continue
                if "req" in msg:
                    reply = {"type": "reply", "req": msg["req"], **service.answer(msg)}
                    replies[msg["req"]] = reply
                    sock.sendall((json.dumps(reply) + "\n").encode())
                elif msg["type"] == "step":
                    sock.sendall((json.dumps({"type": "ack", "seq": msg["seq"]}) + "\n").encode())
                elif msg["type"] == "done":
                    break
        finally:
            reader.close()
            sock.close()
            if not keep_project:
                shutil.rmtree(project_dir, ignore_errors=True)
        return Result(messages, hello["pid"], replies, replayed)

    def close(self):
        self.proc.stdin.close()
        if self.proc.poll() is None:
            self.proc.wait(10)
        self.proc.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)
