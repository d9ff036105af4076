import type net from "node:net";
import { ForkServer } from "../emulator/python/fork-server.ts";
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
