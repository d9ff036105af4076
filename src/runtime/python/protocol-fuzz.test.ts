import { Duplex } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { recordingHost, testSpec } from "../../../test/support/test-host.ts";
import type { SessionEnd } from "../../model/records.ts";
import { parseMessage } from "./protocol.ts";
import { SessionSocket } from "./session-socket.ts";

/**
 * Protocol fuzzing: whatever a Python process writes on its session socket — malformed JSON,
 * unknown or ill-typed messages, out-of-order ones, oversized lines — the session ends, once, and
 * a malformed or out-of-order message ends it in `error`; the service (this process) never throws
 * and another session on its own socket runs to its end. The real-process case is in
 * test/faults.test.ts.
 */

const MAX_LINE = 4096;
const TYPES = [
  "hello",
  "print",
  "activity",
  "outcome",
  "subscribe",
  "next_event",
  "unsubscribe",
  "sleep",
  "store",
  "start_session",
  "signal",
  "next_signal",
  "outcome_value",
  "webhook_url",
  "replay_activity",
  "step",
  "done",
  "start",
  "reply",
  "ack",
  "stop",
];
const FIELDS = ["pid", "req", "seq", "text", "stream", "ok", "error", "status_code", "headers"];

/** A line as a process could write it: any JSON, message-shaped JSON, any text, any bytes. */
const line = fc
  .oneof(
    fc.json(),
    fc.string({ maxLength: 200 }),
    fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString("latin1")),
    fc
      .record({
        type: fc.constantFrom(...TYPES),
        rest: fc.dictionary(fc.constantFrom(...FIELDS), fc.jsonValue({ maxDepth: 2 })),
      })
      .map(({ type, rest }) => JSON.stringify({ ...rest, type })),
  )
  .map((l) => l.replaceAll("\n", " "));

/** A session socket whose Python end is the test. */
function fakeSocket() {
  const socket = new Duplex({
    read() {},
    write(_chunk, _encoding, done) {
      done();
    },
  });
  return socket;
}

function session(durable = false) {
  const spec = testSpec({ durable, journal: [] });
  const host = recordingHost(spec);
  const socket = fakeSocket();
  const channel = new SessionSocket(socket, spec, "/data/builds/bld_01", host, {
    stopGraceMs: 20,
    helloTimeoutMs: 5000,
    maxLineBytes: MAX_LINE,
    kill: () => socket.destroy(),
  });
  const write = (text: string) => socket.push(`${text}\n`);
  // The process goes away (if the service has not already made it).
  const exit = () => setImmediate(() => socket.destroy());
  return { channel, write, exit, host };
}

function settle(done: Promise<SessionEnd>): Promise<SessionEnd> {
  return Promise.race([
    done,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error("the session never ended")), 5000),
    ),
  ]);
}

describe("protocol fuzzing", () => {
  it("any malformed message after hello ends that session in error, and only that one", async () => {
    await fc.assert(
      fc.asyncProperty(
        line.filter((l) => l.trim() !== "" && !parseMessage(l).ok),
        fc.array(line, { maxLength: 5 }),
        async (bad, after) => {
          const fuzzed = session();
          const other = session();
          fuzzed.write(JSON.stringify({ type: "hello", pid: 4242 }));
          other.write(JSON.stringify({ type: "hello", pid: 4343 }));
          fuzzed.write(bad);
          for (const l of after) fuzzed.write(l);
          other.write(JSON.stringify({ type: "done", ok: true }));
          fuzzed.exit();
          other.exit();
          const end = await settle(fuzzed.channel.done);
          expect(end.state).toBe("error");
          expect((end as { message: string }).message).toMatch(/^bad message from Python: /);
          expect(await settle(other.channel.done)).toEqual({ state: "completed" });
        },
      ),
      { numRuns: 300 },
    );
  });

  it("any sequence of lines ends the session exactly once, without a throw", async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(line, { maxLength: 20 }), async (durable, lines) => {
        const s = session(durable);
        s.write(JSON.stringify({ type: "hello", pid: 4242 }));
        for (const l of lines) s.write(l);
        s.exit();
        const end = await settle(s.channel.done);
        expect(["completed", "error", "crashed", "stopped"]).toContain(end.state);
        if (lines.some((l) => l.trim() !== "" && !parseMessage(l).ok)) {
          // The first broken line decides, unless an earlier `done` ended the session.
          const first = lines.findIndex((l) => l.trim() !== "" && !parseMessage(l).ok);
          const doneBefore = lines
            .slice(0, first)
            .some(
              (l) =>
                parseMessage(l).ok &&
                (parseMessage(l) as { message: { type: string } }).message.type === "done",
            );
          if (!doneBefore) expect(end.state).toBe("error");
        }
      }),
      { numRuns: 300 },
    );
  });

  it("out of order: anything before hello, a second hello, a step in a plain session", async () => {
    const cases: Array<[boolean, string[]]> = [
      [false, [JSON.stringify({ type: "print", text: "x", stream: "stdout" })]],
      [
        false,
        [
          JSON.stringify({ type: "hello", pid: 4242 }),
          JSON.stringify({ type: "hello", pid: 4242 }),
        ],
      ],
      [
        false,
        [
          JSON.stringify({ type: "hello", pid: 4242 }),
          JSON.stringify({
            type: "step",
            seq: 0,
            kind: "activity",
            function: "m.f",
            result: "gA==",
          }),
        ],
      ],
    ];
    for (const [durable, lines] of cases) {
      const s = session(durable);
      for (const l of lines) s.write(l);
      s.exit();
      const end = await settle(s.channel.done);
      expect(end.state, lines.join(" | ")).toBe("error");
    }
  });

  it("an oversized line ends the session in error", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: MAX_LINE + 1, max: MAX_LINE * 4 }), async (size) => {
        const s = session();
        s.write(JSON.stringify({ type: "hello", pid: 4242 }));
        s.write(JSON.stringify({ type: "print", text: "x".repeat(size), stream: "stdout" }));
        s.exit();
        const end = await settle(s.channel.done);
        expect(end).toMatchObject({
          state: "error",
          message: expect.stringMatching(/longer than/),
        });
      }),
      { numRuns: 20 },
    );
  });
});
