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
   * once the requests in flight (held sync requests) have been answered and `also` (the sessions
   * running here) has resolved, or after `graceMs`, whichever comes first.
   */
  drain(graceMs: number, also?: Promise<void>): Promise<void>;
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
 * no more, requests already in (a held sync webhook) and the sessions running here (a sync one
 * still at work after its answer) may finish within the grace period.
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
        if (inFlight === 0) {
          for (const wake of idle) wake();
          idle.clear();
        }
      }
    },
    drain(graceMs, also = Promise.resolve()) {
      draining = true;
      const answered =
        inFlight === 0 ? Promise.resolve() : new Promise<void>((wake) => idle.add(wake));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      });
      return Promise.race([Promise.all([answered, also]).then(() => {}), grace]).finally(() =>
        clearTimeout(timer),
      );
    },
  };
}
