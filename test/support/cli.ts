// Test helpers for the CLI's unit tests: a captured Io and a canned-answer HTTP service.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Io } from "../../src/cli/io.ts";

export interface CapturedIo {
  io: Io;
  out: string[];
  err: string[];
}

/**
 * An Io that records lines; `stdin` is what `readStdin()` returns.
 * @example const { io, out } = fakeIo({ env: { SVC_URL: url } })
 */
export function fakeIo(
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; stdin?: string } = {},
): CapturedIo {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = {
    out: (line) => void out.push(line),
    err: (line) => void err.push(line),
    env: { XDG_CONFIG_HOME: "/nonexistent-hookline-test", ...opts.env },
    cwd: opts.cwd ?? process.cwd(),
    readStdin: async () => opts.stdin ?? "",
    stdinIsTTY: false,
  };
  return { io, out, err };
}

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export type Handler = (req: Seen, res: ServerResponse) => void;

/**
 * A node:http server on a random port; `handler` answers every request, `seen` records them.
 * @example const svc = await fakeService((req, res) => json(res, 200, {})); await svc.close()
 */
export async function fakeService(handler: Handler) {
  const seen: Seen[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const s: Seen = {
      method: req.method ?? "",
      url: req.url ?? "",
      headers: req.headers,
      body: Buffer.concat(chunks).toString("utf8"),
    };
    seen.push(s);
    handler(s, res);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

export function problem(res: ServerResponse, status: number, detail: string): void {
  res.writeHead(status, { "content-type": "application/problem+json" });
  res.end(JSON.stringify({ type: "about:blank", title: "Error", status, detail }));
}
