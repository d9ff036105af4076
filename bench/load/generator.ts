import http from "node:http";
import { type Summary, summarize } from "../stats.ts";

/** One load phase: `count` measured requests after `warmup` unmeasured ones, `concurrency` at once. */
export interface LoadSpec {
  url: string;
  method?: string;
  /** Sent with `content-type: application/json` when given. */
  body?: string;
  concurrency: number;
  count: number;
  warmup?: number;
  /** Stop issuing requests past this long (the result says `truncated`). */
  maxMs?: number;
  /** Keep each request's wall-clock start/end and body (small phases only). */
  detail?: boolean;
}

export interface RequestDetail {
  /** Wall clock, ms since the epoch with µs digits (`performance.timeOrigin + now()`). */
  start: number;
  end: number;
  status: number;
  body: string;
}

export interface LoadResult {
  url: string;
  concurrency: number;
  /** Measured requests that got an answer. */
  completed: number;
  errors: number;
  /** Status code → count. */
  statuses: Record<string, number>;
  elapsedMs: number;
  rps: number;
  latency: Summary;
  /** Wall clock at the first measured request. */
  startedAt: number;
  truncated: boolean;
  details?: RequestDetail[];
}

const wall = () => performance.timeOrigin + performance.now();

function send(
  agent: http.Agent,
  url: URL,
  method: string,
  body: Buffer | null,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = body
      ? { "content-type": "application/json", "content-length": body.byteLength }
      : {};
    const req = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body ?? undefined);
  });
}

/**
 * Runs one phase over keep-alive connections (one agent per phase, `maxSockets = concurrency`).
 * Latency is measured per request with `process.hrtime.bigint()`.
 * @example const r = await runLoad({ url: "http://127.0.0.1:8080/", concurrency: 1, count: 100 });
 */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const url = new URL(spec.url);
  const method = spec.method ?? (spec.body === undefined ? "GET" : "POST");
  const body = spec.body === undefined ? null : Buffer.from(spec.body);
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.concurrency });
  try {
    const workers = (total: number, each: (i: number) => Promise<void>) => {
      let next = 0;
      const worker = async () => {
        while (next < total) await each(next++);
      };
      return Promise.all(Array.from({ length: Math.min(spec.concurrency, total) }, worker));
    };
    await workers(spec.warmup ?? 0, async () => {
      await send(agent, url, method, body).catch(() => {});
    });

    const latencies: number[] = [];
    const statuses: Record<string, number> = {};
    const details: RequestDetail[] = [];
    let errors = 0;
    let truncated = false;
    const deadline = spec.maxMs ? Date.now() + spec.maxMs : Number.POSITIVE_INFINITY;
    const startedAt = wall();
    const t0 = process.hrtime.bigint();
    await workers(spec.count, async () => {
      if (Date.now() > deadline) {
        truncated = true;
        return;
      }
      const start = wall();
      const t = process.hrtime.bigint();
      try {
        const res = await send(agent, url, method, body);
        latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (spec.detail) details.push({ start, end: wall(), status: res.status, body: res.body });
      } catch {
        errors++;
      }
    });
    const elapsedMs = Number(process.hrtime.bigint() - t0) / 1e6;
    return {
      url: spec.url,
      concurrency: spec.concurrency,
      completed: latencies.length,
      errors,
      statuses,
      elapsedMs,
      rps: latencies.length / (elapsedMs / 1000),
      latency: summarize(latencies),
      startedAt,
      truncated,
      ...(spec.detail ? { details } : {}),
    };
  } finally {
    agent.destroy();
  }
}
