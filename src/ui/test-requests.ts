/**
 * The test-request form of a trigger's page: the request goes through the service's own webhook
 * route, and a nonce header names the session it started, so the page can link to it.
 */
import { randomUUID } from "node:crypto";
import { HooklineError } from "../errors.ts";
import type { SessionRecord } from "../model/records.ts";
import type { Stores } from "../storage/records.ts";
import type { TestRequest, TestResponse } from "./data.ts";

/** The header a test request carries, so the session it starts can be found. */
export const TEST_HEADER = "X-Hookline-Test";
/** Characters of a test request's response body the page shows. */
const MAX_SHOWN = 256 * 1024;

export interface TestRequests {
  /** Told of every session that starts here: one a test request started claims its nonce. */
  started(record: SessionRecord): void;
  send(projectId: string, triggerName: string, req: TestRequest): Promise<TestResponse>;
}

/**
 * @example const tests = createTestRequests(stores, (r) => app.fetch(r)); sessions.onStarted(tests.started);
 */
export function createTestRequests(
  stores: Stores,
  fetch: (req: Request) => Promise<Response>,
): TestRequests {
  const pending = new Map<string, (sessionId: string) => void>();
  return {
    started(record) {
      if (!pending.size) return;
      void stores.events.get(record.event_id).then((event) => {
        const data = event?.data;
        const headers = (data && "headers" in data ? data.headers : {}) as Record<string, string>;
        const nonce = Object.entries(headers).find(
          ([k]) => k.toLowerCase() === TEST_HEADER.toLowerCase(),
        )?.[1];
        if (nonce) pending.get(nonce)?.(record.id);
      });
    },
    async send(projectId, triggerName, req) {
      const doc = await stores.projects.get(projectId);
      const trigger = doc?.triggers.find((t) => t.name === triggerName);
      if (!trigger) throw new HooklineError("not_found", `trigger "${triggerName}" not found`);
      // A schedule or connection trigger has no webhook id: never post to a bare /webhooks/.
      if (!trigger.webhook_id) {
        throw new HooklineError(
          "conflict",
          `trigger "${triggerName}" is a ${trigger.type} trigger: it has no webhook URL to send a test request to`,
        );
      }
      const nonce = randomUUID();
      let sessionId: string | null = null;
      pending.set(nonce, (id) => {
        sessionId = id;
      });
      try {
        const headers = new Headers(req.headers);
        headers.set(TEST_HEADER, nonce);
        const hasBody = !["GET", "HEAD"].includes(req.method);
        const url = `${req.origin}/webhooks/${trigger.webhook_id}${req.suffix}`;
        const res = await fetch(
          new Request(url, { method: req.method, headers, body: hasBody ? req.body : undefined }),
        );
        const body = await shownBody(res.body);
        sessionId ??= res.status === 202 ? namedSession(body) : null;
        return {
          status: res.status,
          headers: [...res.headers.entries()],
          body,
          session_id: sessionId,
        };
      } finally {
        pending.delete(nonce);
      }
    },
  };
}

/**
 * The response body as the page shows it: its first MAX_SHOWN characters (UTF-8), then
 * "… [cut at 256 KiB]" if there is more. Reading stops there and the rest of the body is
 * cancelled, never read nor held (the session keeps the whole answer).
 */
async function shownBody(body: ReadableStream<Uint8Array> | null): Promise<string> {
  if (!body) return "";
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text + decoder.decode();
      // A character takes at most 3 bytes per UTF-16 unit: this many bytes pass the limit.
      const room = (MAX_SHOWN + 1 - text.length) * 3 + 4;
      text += decoder.decode(value.subarray(0, room), { stream: true });
      if (text.length > MAX_SHOWN) {
        // Not awaited: a source slow to wind down does not hold the page.
        void reader.cancel().catch(() => {});
        return `${text.slice(0, MAX_SHOWN)}… [cut at 256 KiB]`;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** The session the webhook route's 202 names, if the body is that route's JSON. */
function namedSession(text: string): string | null {
  try {
    return (JSON.parse(text) as { session_id?: string | null }).session_id ?? null;
  } catch {
    return null; // a handler's own 202 that is not the webhook route's JSON: no session named
  }
}
