import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A stand-in API that fails a caller's first calls: `GET /calls/<key>?fail=N&status=S`. */
export interface FlakyApi {
  url: string;
  /** Calls received per key (a session's id, in the retry fixture). */
  calls(key: string): number;
  close(): Promise<void>;
}

/**
 * An HTTP API on loopback for retry tests: each key's first `fail` calls answer 503, then every
 * call answers 200 with `{"calls": n}` (or `status`, when given, every time). It counts every
 * call per key, so a test sees how often a session really called out.
 * @example const api = await flakyApi(); await fetch(`${api.url}/calls/k?fail=2`); api.calls("k") // 1
 */
export async function flakyApi(): Promise<FlakyApi> {
  const counts = new Map<string, number>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const key = url.pathname.replace(/^\/calls\//, "");
    const n = (counts.get(key) ?? 0) + 1;
    counts.set(key, n);
    const fail = Number(url.searchParams.get("fail") ?? 0);
    const status = Number(url.searchParams.get("status") ?? (n <= fail ? 503 : 200));
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(status === 200 ? { calls: n } : { error: "try later" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: (key) => counts.get(key) ?? 0,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
