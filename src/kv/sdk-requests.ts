import * as v from "valibot";
import type { TriggerRecord } from "../model/records.ts";
import type { ProjectKv } from "./project-kv.ts";
import { StoreError, type Wire } from "./values.ts";

/**
 * The `store` request from Python (python-runtime/README.md, "SDK requests"):
 * `{"type":"store","req":n,"seq"?:k,"op":…,"key"?:…,"args":[…]}`.
 */
const Key = v.pipe(v.string(), v.minLength(1));
const StoreRequest = v.variant("op", [
  v.object({ op: v.literal("get"), key: Key, args: v.strictTuple([]) }),
  v.object({ op: v.literal("set"), key: Key, args: v.strictTuple([v.unknown()]) }),
  v.object({ op: v.literal("del"), key: Key, args: v.strictTuple([]) }),
  v.object({ op: v.literal("add"), key: Key, args: v.strictTuple([v.unknown()]) }),
  v.object({
    op: v.literal("check_and_set"),
    key: Key,
    args: v.strictTuple([v.unknown(), v.unknown()]),
  }),
  v.object({ op: v.literal("list_keys"), args: v.strictTuple([]) }),
  v.object({ op: v.literal("publish"), key: Key, args: v.strictTuple([]) }),
  v.object({ op: v.literal("unpublish"), key: Key, args: v.strictTuple([]) }),
  v.object({ op: v.literal("public_url"), args: v.strictTuple([]) }),
]);
export type StoreRequest = v.InferOutput<typeof StoreRequest>;

/** The reply for a request: its value, or the Python error the handler raises (never thrown). */
export type SdkReply =
  | { ok: true; value: Wire }
  | {
      ok: false;
      error: "ValueError" | "TypeError" | "AutoKittehError" | "RuntimeError";
      message: string;
    };

export interface SdkContext {
  kv: ProjectKv;
  /** The project of the session that sent the request. */
  projectId: string;
  /** The service's external base URL, for `get_store_public_url` and `get_webhook_url`. */
  publicBaseUrl: string;
  /** The project's triggers: given, `webhook_url` requests are served from them. */
  triggers?: readonly Pick<TriggerRecord, "name" | "webhook_id">[];
}

const WebhookUrlRequest = v.object({ trigger: v.pipe(v.string(), v.minLength(1)) });

/** Where published values are served: `<base>/store/<project_id>/<key>` (storePublicRoutes). */
export function storePublicUrl(publicBaseUrl: string, projectId: string): string {
  return `${publicBaseUrl.replace(/\/+$/, "")}/store/${projectId}`;
}

async function serveStore(m: StoreRequest, ctx: SdkContext): Promise<Wire> {
  const { kv: store, projectId } = ctx;
  switch (m.op) {
    case "get":
      return store.get(projectId, m.key);
    case "set":
      await store.set(projectId, m.key, m.args[0]);
      return null;
    case "del":
      await store.del(projectId, m.key);
      return null;
    case "add":
      return store.add(projectId, m.key, m.args[0]);
    case "check_and_set":
      return store.checkAndSet(projectId, m.key, m.args[0], m.args[1]);
    case "list_keys":
      return store.listKeys(projectId);
    case "publish":
      await store.publish(projectId, m.key);
      return null;
    case "unpublish":
      await store.unpublish(projectId, m.key);
      return null;
    case "public_url":
      return storePublicUrl(ctx.publicBaseUrl, projectId);
  }
}

/**
 * Serves one SDK request from a session's Python process and returns its reply: the session's
 * SdkService (src/sessions/sdk.ts) routes `store` and `webhook_url` requests here (the host
 * journals the reply in a durable session). `webhook_url` is served when the context has the
 * project's triggers. The other kinds (start, signal, next_signal, outcome_value) are the
 * session core's; here they get a RuntimeError reply.
 * @example
 * await handleSdkRequest("store", { op: "add", key: "hits", args: [1] }, ctx); // { ok: true, value: 1 }
 */
export async function handleSdkRequest(
  kind: string,
  args: unknown,
  ctx: SdkContext,
): Promise<SdkReply> {
  if (kind === "webhook_url" && ctx.triggers) {
    const parsed = v.safeParse(WebhookUrlRequest, args);
    if (!parsed.success)
      return { ok: false, error: "ValueError", message: "webhook_url: trigger must be a name" };
    const name = parsed.output.trigger;
    const trigger = ctx.triggers.find((t) => t.name === name);
    if (!trigger) {
      return {
        ok: false,
        error: "ValueError",
        message: `get_webhook_url: no trigger named "${name}" in this project`,
      };
    }
    if (!trigger.webhook_id) {
      const message = `get_webhook_url: trigger "${name}" is not a webhook (it has no URL)`;
      return { ok: false, error: "ValueError", message };
    }
    return {
      ok: true,
      value: `${ctx.publicBaseUrl.replace(/\/+$/, "")}/webhooks/${trigger.webhook_id}`,
    };
  }
  if (kind !== "store") {
    return {
      ok: false,
      error: "RuntimeError",
      message: `${kind}: not supported by this service yet`,
    };
  }
  const parsed = v.safeParse(StoreRequest, args);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = issue.path?.map((p) => String(p.key)).join(".") ?? "";
    return {
      ok: false,
      error: "ValueError",
      message: `store: ${path ? `${path}: ` : ""}${issue.message}`,
    };
  }
  try {
    return { ok: true, value: await serveStore(parsed.output, ctx) };
  } catch (e) {
    if (e instanceof StoreError) return { ok: false, error: e.python, message: e.message };
    throw e;
  }
}
