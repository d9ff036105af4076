import type net from "node:net";
import { ForkServer } from "../src/runtime/python/fork-server.ts";
import { type Summary, summarize } from "./stats.ts";

/** Resolves once the first line (the child's `hello`) arrives, then drops the connection. */
function hello(socket: net.Socket): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.on("data", (chunk: Buffer) => {
      if (chunk.includes(10)) {
        socket.destroy(); // EOF before `start`: the child exits at once
        resolve();
      }
    });
    socket.once("error", reject);
    socket.once("close", () => reject(new Error("closed before hello")));
    socket.resume(); // ForkServer hands out connections made ahead paused
  });
}

/**
 * The floor under one session per process: a fork server of our own (same Python, same runner)
 * asked to fork children that say `hello` and exit. Latency of connect → hello at concurrency 1,
 * and connect → hello → exit at `concurrency`.
 * @example const f = await forkFloor(python, { count: 500, concurrency: 32 });
 */
export async function forkFloor(
  python: string,
  opts: { count: number; concurrency: number },
): Promise<{ latency: Summary; rps: number }> {
  const server = new ForkServer(python);
  try {
    const one = async () => hello(await server.connect());
    for (let i = 0; i < 20; i++) await one(); // warm-up, and the server's start
    const samples: number[] = [];
    for (let i = 0; i < Math.min(300, opts.count); i++) {
      const t = process.hrtime.bigint();
      await one();
      samples.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    let next = 0;
    const t0 = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: opts.concurrency }, async () => {
        while (next++ < opts.count) await one();
      }),
    );
    const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
    return { latency: summarize(samples), rps: opts.count / elapsed };
  } finally {
    await server.dispose();
  }
}

/** Wall clock in ms with µs digits, comparable with Python's `time.time_ns()`. */
const wall = () => performance.timeOrigin + performance.now();

/** Reads NDJSON lines from a socket; resolves with them, each stamped, when it closes. */
function lines(socket: net.Socket, onLine: (msg: Record<string, unknown>) => void): Promise<void> {
  let buffered = "";
  socket.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
      onLine(JSON.parse(buffered.slice(0, nl)));
      buffered = buffered.slice(nl + 1);
    }
  });
  socket.resume(); // ForkServer hands out connections made ahead paused
  return new Promise((resolve) => socket.once("close", () => resolve()));
}

/**
 * One session's life in its process, driven the way the service drives it but without the
 * service: connect → hello, start → the handler module starts importing (the probe fixture stamps
 * it) → outcome → done → the socket closes (the process exits). Medians over `count` sessions.
 * @example const t = await childTimeline(python, "/abs/bench/fixtures/probe", event, 50);
 */
export async function childTimeline(
  python: string,
  projectDir: string,
  data: unknown,
  count: number,
): Promise<Record<string, number>> {
  const server = new ForkServer(python);
  const seg: Record<string, number[]> = { hello: [], setup: [], handler: [], done: [], exit: [] };
  try {
    for (let i = 0; i < count + 5; i++) {
      const t0 = wall();
      const socket = await server.connect();
      const at: Record<string, number> = {};
      let stamps: Record<string, number> = {};
      const closed = lines(socket, (m) => {
        at[String(m.type)] ??= wall();
        if (m.type === "hello") {
          const start = {
            type: "start",
            session_id: `ses_probe${i}`,
            project_dir: projectDir,
            entry: "handlers.py:on_probe",
            event: {
              event_id: `evt_probe${i}`,
              session_id: `ses_probe${i}`,
              event_type: "post",
              data,
            },
            env: {},
            durable: false,
            journal: [],
            workflow_timeout: 10,
          };
          at.start = wall();
          socket.write(`${JSON.stringify(start)}\n`);
        }
        if (m.type === "outcome")
          stamps = JSON.parse(Buffer.from(String(m.body), "base64").toString("utf8"));
        if (m.type === "done") socket.end(); // the service answers done with stop; EOF does as well
      });
      await closed;
      if (i < 5) continue; // warm-up
      const closedAt = wall();
      seg.hello!.push(at.hello! - t0);
      seg.setup!.push(stamps.import_started! / 1e6 - at.start!);
      seg.handler!.push(at.outcome! - stamps.import_started! / 1e6);
      seg.done!.push(at.done! - at.outcome!);
      seg.exit!.push(closedAt - at.done!);
    }
  } finally {
    await server.dispose();
  }
  return Object.fromEntries(Object.entries(seg).map(([k, v]) => [k, summarize(v).p50]));
}
