import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { recordingHost, testEvent, testSpec } from "../../../test/support/test-host.ts";
import { HooklineError } from "../../errors.ts";
import { SessionSocket, type SocketOptions } from "./session-socket.ts";

/** The Python end of a session socket, driven by the test. */
interface FakePython {
  socket: net.Socket;
  received: Array<Record<string, unknown>>;
  send(message: unknown): void;
  /** Resolves with the next message of `type` the service sends. */
  next(type: string): Promise<Record<string, unknown>>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function socketPair(): Promise<[net.Socket, net.Socket]> {
  const dir = await mkdtemp(join(tmpdir(), "hl-chan-"));
  const path = join(dir, "s.sock");
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(path, r));
  const accepted = new Promise<net.Socket>((r) => server.once("connection", r));
  const client = net.createConnection(path);
  await new Promise((r) => client.once("connect", r));
  const serverSide = await accepted;
  cleanups.push(async () => {
    client.destroy();
    serverSide.destroy();
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });
  return [serverSide, client];
}

async function setup(over: Parameters<typeof testSpec>[0] = {}, options: SocketOptions = {}) {
  const [service, python] = await socketPair();
  const spec = testSpec(over);
  const host = recordingHost(spec);
  const killed: number[] = [];
  const channel = new SessionSocket(service, spec, "/data/builds/bld_01", host, {
    stopGraceMs: 100,
    kill: (pid) => {
      killed.push(pid);
      python.destroy();
    },
    ...options,
  });
  const received: Array<Record<string, unknown>> = [];
  const waiters: Array<{ type: string; resolve: (m: Record<string, unknown>) => void }> = [];
  let partial = "";
  python.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      const m = JSON.parse(line) as Record<string, unknown>;
      received.push(m);
      const i = waiters.findIndex((w) => w.type === m.type);
      if (i !== -1) waiters.splice(i, 1)[0]?.resolve(m);
    }
  });
  python.on("error", () => {});
  const fake: FakePython = {
    socket: python,
    received,
    send: (m) => python.write(typeof m === "string" ? m : `${JSON.stringify(m)}\n`),
    next: (type) => {
      const seen = received.find((m) => m.type === type && !m.__taken);
      if (seen) {
        seen.__taken = true;
        return Promise.resolve(seen);
      }
      return new Promise((resolve) =>
        waiters.push({
          type,
          resolve: (m) => {
            m.__taken = true;
            resolve(m);
          },
        }),
      );
    },
  };
  return { channel, host, fake, killed };
}

describe("SessionSocket", () => {
  it("sends start after hello and passes prints, activities and outcomes to the host", async () => {
    const { channel, host, fake } = await setup();
    fake.send({ type: "hello", pid: 4242 });
    const start = await fake.next("start");
    expect(start).toMatchObject({
      session_id: "ses_01",
      project_dir: "/data/builds/bld_01",
      entry: "handlers.py:on_post",
      env: { GREETING: "hi" },
      durable: false,
      journal: [],
      workflow_timeout: 10,
      event: testEvent(),
    });
    fake.send({ type: "print", text: "hi there", stream: "stdout" });
    fake.send({ type: "activity", function: "requests.get", duration_ms: 12.5, ok: true });
    // A start told at 50 ms, and the report that ends it (an older runner sends neither id).
    fake.send({ type: "activity_started", id: 2, function: "f", running_ms: 50 });
    fake.send({
      type: "activity",
      id: 2,
      function: "f",
      duration_ms: 1,
      ok: false,
      error: "ValueError: x",
    });
    fake.send({
      type: "outcome",
      status_code: 201,
      headers: { "X-A": "b" },
      body: Buffer.from("made").toString("base64"),
      more: false,
    });
    fake.send({ type: "done", ok: true });
    // After `done` the process leaves by itself; the service sends no `stop`.
    fake.socket.end();
    expect(await channel.done).toEqual({ state: "completed" });
    expect(fake.received.some((m) => m.type === "stop")).toBe(false);
    expect(channel.pid).toBe(4242);
    expect(host.prints).toEqual([{ text: "hi there", stream: "stdout" }]);
    expect(host.activities).toEqual([
      { function: "requests.get", duration_ms: 12.5, ok: true },
      { id: 2, function: "f", duration_ms: 1, ok: false, error: "ValueError: x" },
    ]);
    expect(host.activityStarts).toEqual([{ id: 2, function: "f", running_ms: 50 }]);
    expect(host.outcomes).toEqual([
      { status_code: 201, headers: { "X-A": "b" }, body: Buffer.from("made"), more: false },
    ]);
    expect(host.journaled).toEqual([]); // not durable
  });

  it("hands the SDK's requests to the host and an outcome's event_id along", async () => {
    const sdkData = { n: { $int: "9007199254740993" } };
    const event = { ...testEvent(), event_type: "start", sdk_data: sdkData };
    const { channel, fake, host } = await setup({ event });
    fake.send({ type: "hello", pid: 7 });
    // A session made by start(): its data in the wire form, marked for the runner to decode.
    const start = (await fake.next("start")).event as Record<string, unknown>;
    expect(start).toMatchObject({ event_type: "start", data: sdkData, data_encoding: "sdk" });
    expect(start).not.toHaveProperty("sdk_data");
    const requests = [
      { type: "store", op: "add", key: "k", args: [1] },
      { type: "start_session", loc: "a.py:f", data: {}, memo: {}, project: "" },
      { type: "signal", session_id: "ses_2", name: "go", payload: null },
      { type: "next_signal", names: ["go"], timeout: 1 },
      { type: "outcome_value", value: 3 },
      { type: "webhook_url", trigger: "hook" },
    ];
    for (const [i, m] of requests.entries()) {
      fake.send({ ...m, req: i + 1 });
      expect(await fake.next("reply")).toMatchObject({
        req: i + 1,
        ok: true,
        value: { kind: m.type },
      });
    }
    expect(host.calls).toEqual(
      requests.map(({ type, ...fields }) => `${type} ${JSON.stringify(fields)}`),
    );
    fake.send({
      type: "outcome",
      status_code: 200,
      headers: {},
      body: null,
      more: false,
      event_id: "evt_9",
    });
    fake.send({ type: "done", ok: true });
    fake.socket.end();
    expect(await channel.done).toEqual({ state: "completed" });
    expect(host.outcomes).toEqual([
      { status_code: 200, headers: {}, body: null, more: false, event_id: "evt_9" },
    ]);
  });

  it("reports a failed handler with its traceback", async () => {
    const { channel, fake } = await setup();
    fake.send({ type: "hello", pid: 7 });
    fake.send({ type: "done", ok: false, error: "KeyError: 'x'", traceback: "Traceback …" });
    fake.socket.end();
    expect(await channel.done).toEqual({
      state: "error",
      message: "KeyError: 'x'",
      traceback: "Traceback …",
    });
  });

  it("answers subscribe, next_event and unsubscribe, and maps host errors to Python ones", async () => {
    const { fake, host } = await setup();
    host.events.push(testEvent("second"), null);
    fake.send({ type: "hello", pid: 7 });
    fake.send({ type: "subscribe", req: 1, name: "hook", filter: "data.method == 'POST'" });
    expect(await fake.next("reply")).toMatchObject({ req: 1, ok: true, value: "sub_1" });
    fake.send({ type: "next_event", req: 2, ids: ["sub_1"], timeout: 1.5 });
    expect(await fake.next("reply")).toMatchObject({
      req: 2,
      ok: true,
      value: testEvent("second"),
    });
    fake.send({ type: "next_event", req: 3, ids: ["sub_1"], timeout: null });
    expect(await fake.next("reply")).toMatchObject({ req: 3, ok: true, value: null });
    fake.send({ type: "unsubscribe", req: 4, id: "sub_1" });
    expect(await fake.next("reply")).toMatchObject({ req: 4, ok: true, value: null });
    fake.send({ type: "subscribe", req: 5, name: "nope", filter: "" });
    expect(await fake.next("reply")).toEqual({
      type: "reply",
      req: 5,
      ok: false,
      error: "ValueError",
      message: 'unknown source "nope"',
      __taken: true,
    });
    fake.send({ type: "next_event", req: 6, ids: ["sub_1"], timeout: 0 });
    expect(await fake.next("reply")).toMatchObject({
      req: 6,
      ok: false,
      error: "RuntimeError",
      message: "no events left",
    });
    expect(host.calls).toEqual([
      "subscribe hook data.method == 'POST'",
      "next_event sub_1 1500",
      "next_event sub_1 null",
      "unsubscribe sub_1",
      "subscribe nope ",
      "next_event sub_1 0",
    ]);
  });

  it("journals durable steps in order, numbering from the journal's length, before replying", async () => {
    const journal = [{ seq: 0, kind: "outcome" as const }];
    const { fake, host } = await setup({ durable: true, journal });
    host.events.push(testEvent("e"));
    fake.send({ type: "hello", pid: 7 });
    expect(await fake.next("start")).toMatchObject({ durable: true, journal });
    const pickled = Buffer.from("pickle").toString("base64");
    fake.send({ type: "step", seq: 1, kind: "activity", function: "lib.fetch", result: pickled });
    expect(await fake.next("ack")).toMatchObject({ seq: 1 });
    fake.send({ type: "subscribe", req: 1, name: "hook", filter: "" });
    await fake.next("reply");
    fake.send({ type: "next_event", req: 2, ids: ["sub_1"], timeout: null });
    await fake.next("reply");
    fake.send({ type: "step", seq: 4, kind: "activity", function: "lib.boom", error: pickled });
    await fake.next("ack");
    fake.send({ type: "outcome", status_code: 200, headers: {}, body: null, more: false });
    fake.send({ type: "unsubscribe", req: 3, id: "sub_1" });
    await fake.next("reply");
    expect(host.journaled).toEqual([
      { seq: 1, kind: "activity", function: "lib.fetch", result: pickled },
      { seq: 2, kind: "subscribe", name: "hook", filter: "", value: "sub_1" },
      { seq: 3, kind: "next_event", value: testEvent("e") },
      { seq: 4, kind: "activity", function: "lib.boom", error: pickled },
      { seq: 5, kind: "outcome" },
      { seq: 6, kind: "unsubscribe", id: "sub_1" },
    ]);
  });

  it("fails the session when the journal cannot be stored, without acking", async () => {
    const { channel, fake, host, killed } = await setup({ durable: true });
    host.journalError = new Error("disk full");
    fake.send({ type: "hello", pid: 99 });
    fake.send({ type: "step", seq: 0, kind: "activity", function: "f", result: "AA==" });
    expect(await channel.done).toEqual({
      state: "error",
      message: "could not store journal step 0: disk full",
    });
    expect(killed).toEqual([99]);
    expect(fake.received.map((m) => m.type)).not.toContain("ack");
  });

  it.each([
    ["not JSON", "{nope\n", /bad message from Python: not JSON/],
    ["an unknown type", { type: "launch", x: 1 }, /bad message from Python: .*launch/],
    ["a malformed print", { type: "print", text: 3, stream: "stdout" }, /text: Invalid type/],
    ["a bad stream", { type: "print", text: "x", stream: "tty" }, /stream/],
    [
      "a bad status",
      { type: "outcome", status_code: 99, headers: {}, body: null, more: false },
      /status_code/,
    ],
    [
      "a body that is not base64",
      { type: "outcome", status_code: 200, headers: {}, body: "%%", more: false },
      /body/,
    ],
    [
      "a step outside durable sessions",
      { type: "step", seq: 0, kind: "activity", function: "f", result: "" },
      /non-durable/,
    ],
    ["a second hello", { type: "hello", pid: 8 }, /second "hello"/],
  ])("ends the session with an error on %s, and kills the process", async (_, message, error) => {
    const { channel, fake, killed } = await setup();
    fake.send({ type: "hello", pid: 7 });
    fake.send(message);
    const end = await channel.done;
    expect(end.state).toBe("error");
    expect(end.state === "error" && end.message).toMatch(error);
    expect(killed).toEqual([7]);
  });

  it("refuses a step in a non-durable session itself, before the host sees it", async () => {
    const { channel, fake, host, killed } = await setup();
    // A host that would take the step: the refusal is the socket's, not the journal's.
    const reached: string[] = [];
    host.step = async (request) => {
      reached.push(request.kind);
      return { ok: true, value: null };
    };
    fake.send({ type: "hello", pid: 7 });
    fake.send({ type: "step", seq: 0, kind: "activity", function: "f", result: "AA==" });
    // Whichever comes first: the session's end, or an ack (the step taken).
    const first = await Promise.race([
      channel.done,
      fake.next("ack").then(() => "the step was acked"),
    ]);
    expect(first, 'a "step" in a non-durable session ends it as a protocol error').toEqual({
      state: "error",
      message: 'bad message from Python: "step" in a non-durable session',
    });
    expect(reached, "the step must not reach the host").toEqual([]);
    expect(killed).toEqual([7]);
  });

  it("refuses any message before hello", async () => {
    const { channel, fake } = await setup();
    fake.send({ type: "print", text: "x", stream: "stdout" });
    expect(await channel.done).toEqual({
      state: "error",
      message: 'bad message from Python: "print" before "hello"',
    });
  });

  it("ends the session when a line is longer than the limit, across chunks", async () => {
    const { channel, fake, host } = await setup({}, { maxLineBytes: 1024 });
    fake.send({ type: "hello", pid: 7 });
    fake.send({ type: "print", text: "x".repeat(900), stream: "stdout" });
    fake.send(`{"type":"print","text":"${"y".repeat(600)}`);
    fake.send(`${"y".repeat(600)}","stream":"stdout"}\n`);
    const end = await channel.done;
    expect(end).toMatchObject({
      state: "error",
      message: expect.stringMatching(/longer than 1024 bytes/),
    });
    expect(host.prints).toHaveLength(1);
  });

  it("reports crashed when the socket closes without done", async () => {
    const { channel, fake } = await setup();
    fake.send({ type: "hello", pid: 1234 });
    await fake.next("start");
    fake.socket.destroy();
    expect(await channel.done).toEqual({
      state: "crashed",
      message: "the Python process 1234 exited before the session finished",
    });
  });

  it("stop() sends stop and ends as stopped when the process leaves", async () => {
    // A grace no test outlives: stop() returns on the process leaving (an event), or never.
    const { channel, fake, killed } = await setup({}, { stopGraceMs: 3_600_000 });
    fake.send({ type: "hello", pid: 7 });
    await fake.next("start");
    const order: string[] = [];
    void fake.next("stop").then(() => {
      order.push("left");
      fake.socket.end();
    });
    await channel.stop();
    order.push("stop() returned");
    expect(order).toEqual(["left", "stop() returned"]);
    expect(await channel.done).toEqual({ state: "stopped" });
    expect(killed).toEqual([]);
    await channel.stop(); // idempotent
  });

  it("stop() kills the process after the grace period when it does not leave", async () => {
    const { channel, fake, killed } = await setup({}, { stopGraceMs: 150 });
    fake.send({ type: "hello", pid: 77 });
    await fake.next("start");
    const t0 = Date.now();
    await Promise.all([channel.stop(), channel.stop()]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(killed).toEqual([77]);
    expect(await channel.done).toEqual({ state: "stopped" });
  });

  it("a done after stop() still ends as stopped", async () => {
    const { channel, fake } = await setup({}, { stopGraceMs: 5000 });
    fake.send({ type: "hello", pid: 7 });
    await fake.next("start");
    const stopping = channel.stop();
    fake.send({ type: "done", ok: true });
    fake.socket.end();
    await stopping;
    expect(await channel.done).toEqual({ state: "stopped" });
  });

  it("fails when hello does not come in time", async () => {
    const { channel } = await setup({}, { helloTimeoutMs: 50 });
    expect(await channel.done).toEqual({
      state: "error",
      message: "the Python process did not start in time",
    });
  });

  it("a host that throws ends the session, not the service", async () => {
    const { channel, fake, host } = await setup();
    host.print = () => {
      throw new HooklineError("internal", "boom");
    };
    fake.send({ type: "hello", pid: 7 });
    fake.send({ type: "print", text: "x", stream: "stdout" });
    expect(await channel.done).toEqual({
      state: "error",
      message: 'the service failed handling "print": boom',
    });
  });
});

describe("SessionSocket step numbers", () => {
  it("journals a failed request before replying, since Python counted it", async () => {
    const { fake, host } = await setup({ durable: true });
    fake.send({ type: "hello", pid: 7 });
    fake.send({ type: "subscribe", req: 1, name: "nope", filter: "" });
    expect(await fake.next("reply")).toMatchObject({ ok: false, error: "ValueError" });
    fake.send({ type: "subscribe", req: 2, name: "hook", filter: "" });
    await fake.next("reply");
    expect(host.journaled).toEqual([
      {
        seq: 0,
        kind: "subscribe",
        name: "nope",
        filter: "",
        error: "ValueError",
        message: 'unknown source "nope"',
      },
      { seq: 1, kind: "subscribe", name: "hook", filter: "", value: "sub_1" },
    ]);
  });

  it("uses the child's seq when a journaled request carries one", async () => {
    const { fake, host } = await setup({ durable: true });
    fake.send({ type: "hello", pid: 7 });
    fake.send({ type: "outcome", status_code: 200, headers: {}, body: null, more: true, seq: 3 });
    fake.send({ type: "subscribe", req: 1, name: "hook", filter: "" });
    await fake.next("reply");
    expect(host.journaled.map((s) => [s.seq, s.kind])).toEqual([
      [3, "outcome"],
      [4, "subscribe"],
    ]);
  });

  it("ends the session when the host refuses a step: a repeated seq", async () => {
    const { channel, fake, killed } = await setup({ durable: true });
    fake.send({ type: "hello", pid: 7 });
    fake.send({ type: "step", seq: 0, kind: "activity", function: "f", result: "AA==" });
    await fake.next("ack");
    fake.send({ type: "subscribe", req: 1, name: "hook", filter: "", seq: 0 });
    expect(await channel.done).toEqual({ state: "error", message: "step 0 was taken twice" });
    expect(killed).toEqual([7]);
  });

  it("forwards a step inside the replayed journal to the host, which answers it from there", async () => {
    const journal = [
      { seq: 0, kind: "subscribe" as const, name: "hook", filter: "", value: "sub_9" },
    ];
    const { channel, fake, host } = await setup({ durable: true, journal });
    fake.send({ type: "hello", pid: 7 });
    fake.send({ type: "subscribe", req: 1, name: "hook", filter: "", seq: 0 });
    expect(await fake.next("reply")).toMatchObject({ req: 1, ok: true, value: "sub_9" });
    expect(host.calls).toEqual([]);
    fake.send({ type: "next_event", req: 2, ids: ["sub_9"], timeout: 0, seq: 0 });
    const end = await channel.done;
    expect(end).toMatchObject({ state: "error", message: expect.stringMatching(/step 0/) });
  });
});

describe("SessionSocket with a reused process (reuse.ts)", () => {
  it("sends start at once to a greeted process, and gives the socket back at a done that stays", async () => {
    const { channel, host, fake, killed } = await setup({}, { greeted: 77, reuse: true });
    const start = await fake.next("start");
    expect(start).toMatchObject({ session_id: "ses_01", reuse: true });
    expect([host.starts, channel.pid]).toEqual([1, 77]);
    fake.send({ type: "print", text: "second session", stream: "stdout" });
    fake.send({ type: "done", ok: true, reuse: true });
    // Settled without the socket closing: the process stays, nothing more goes to it.
    expect(await channel.done).toEqual({ state: "completed" });
    expect(channel.reusable).toBe(true);
    await channel.stop();
    await new Promise((r) => setTimeout(r, 150)); // past the grace: no stop, no kill
    expect(fake.received.map((m) => m.type)).toEqual(["start"]);
    expect([killed, fake.socket.destroyed]).toEqual([[], false]);
    expect(host.prints).toEqual([{ text: "second session", stream: "stdout" }]);
  });

  it("does not give back a process that said more after done, or a done it was not asked", async () => {
    const more = await setup({}, { greeted: 77, reuse: true });
    await more.fake.next("start");
    more.fake.send(
      '{"type":"done","ok":true,"reuse":true}\n{"type":"print","text":"x","stream":"stdout"}\n',
    );
    expect(await more.channel.done).toEqual({ state: "completed" });
    expect(more.channel.reusable).toBe(false);

    const unasked = await setup();
    unasked.fake.send({ type: "hello", pid: 5 });
    expect(await unasked.fake.next("start")).not.toHaveProperty("reuse");
    unasked.fake.send({ type: "done", ok: true, reuse: true });
    // Taken as any done: the process is expected to exit, and is killed past the grace.
    expect(await unasked.channel.done).toEqual({ state: "completed" });
    expect([unasked.channel.reusable, unasked.killed]).toEqual([false, [5]]);
  });

  it("refuses a hello from a greeted process", async () => {
    const { channel, fake } = await setup({}, { greeted: 77, reuse: true });
    await fake.next("start");
    fake.send({ type: "hello", pid: 77 });
    expect(await channel.done).toMatchObject({
      state: "error",
      message: expect.stringContaining('a second "hello"'),
    });
  });
});
