import { HooklineError } from "../errors.ts";
import { toProblem } from "../routes/problem.ts";

type Fetch = (request: Request, env?: object) => Response | Promise<Response>;

export interface Drain {
  /** The app's fetch, counting requests in flight and refusing new work once draining. */
  fetch: Fetch;
  /** True from the first stop signal on. */
  readonly draining: boolean;
  /**
   * Stops taking work: `/readyz` answers 503 at once, new webhooks 503 with `Retry-After`; resolves
   * once the requests in flight (held sync requests) have been answered, or after `graceMs`.
   */
  drain(graceMs: number): Promise<void>;
}

function refuse(detail: string): Response {
  const problem = toProblem(new HooklineError("unavailable", detail));
  return new Response(JSON.stringify(problem), {
    status: problem.status,
    headers: { "content-type": "application/problem+json", "retry-after": "5" },
  });
}

/**
 * Graceful stop in front of the app (SIGTERM): readiness goes false at once so a router sends
 * no more, requests already in (a held sync webhook) may finish within the grace period.
 * @example const d = createDrain(app.fetch); serve({ fetch: d.fetch }); await d.drain(10_000);
 */
export function createDrain(fetch: Fetch): Drain {
  let draining = false;
  let inFlight = 0;
  const idle = new Set<() => void>();
  return {
    get draining() {
      return draining;
    },
    async fetch(request, env) {
      if (draining) {
        const path = new URL(request.url).pathname;
        if (path === "/readyz") return refuse("the service is stopping");
        if (path.startsWith("/webhooks/") || path.startsWith("/inbound/"))
          return refuse("the service is stopping; retry later");
      }
      inFlight++;
      try {
        return await fetch(request, env);
      } finally {
        inFlight--;
        if (inFlight === 0) for (const wake of idle) wake();
      }
    },
    drain(graceMs) {
      draining = true;
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          idle.delete(done);
          resolve();
        };
        const timer = setTimeout(done, graceMs);
        idle.add(done);
      });
    },
  };
}
