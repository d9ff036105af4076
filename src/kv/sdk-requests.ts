import * as v from "valibot";
import { HooklineError } from "../errors.ts";
import type { TriggerRecord } from "../model/records.ts";
import type { ProjectKv } from "./project-kv.ts";
import type { Wire } from "./values.ts";

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
 * Serves one SDK request from a session's Python process and resolves with its value: the
 * session's SdkService (src/sessions/sdk.ts) routes `store` and `webhook_url` requests here
 * (the host journals the reply in a durable session). `webhook_url` is served when the context
 * has the project's triggers. A request the store refuses rejects with a HooklineError whose
 * code says why (the session core turns it into the Python exception); the other kinds (start,
 * signal, next_signal, outcome_value) are the session core's, and reject here with a plain Error.
 * @example
 * await handleSdkRequest("store", { op: "add", key: "hits", args: [1] }, ctx); // 1
 */
export async function handleSdkRequest(
  kind: string,
  args: unknown,
  ctx: SdkContext,
): Promise<Wire> {
  if (kind === "webhook_url" && ctx.triggers) return webhookUrl(args, ctx);
  if (kind !== "store") throw new Error(`${kind}: not supported by this service yet`);
  const parsed = v.safeParse(StoreRequest, args);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const path = issue.path?.map((p) => String(p.key)).join(".") ?? "";
    throw new HooklineError("bad_request", `store: ${path ? `${path}: ` : ""}${issue.message}`);
  }
  return serveStore(parsed.output, ctx);
}

/** `get_webhook_url(trigger)`: the public URL of one of the project's webhook triggers. */
function webhookUrl(args: unknown, ctx: SdkContext): string {
  const parsed = v.safeParse(WebhookUrlRequest, args);
  if (!parsed.success)
    throw new HooklineError("bad_request", "webhook_url: trigger must be a name");
  const name = parsed.output.trigger;
  const trigger = ctx.triggers?.find((t) => t.name === name);
  if (!trigger) {
    throw new HooklineError(
      "bad_request",
      `get_webhook_url: no trigger named "${name}" in this project`,
    );
  }
  if (!trigger.webhook_id) {
    throw new HooklineError(
      "bad_request",
      `get_webhook_url: trigger "${name}" is not a webhook (it has no URL)`,
    );
  }
  return `${ctx.publicBaseUrl.replace(/\/+$/, "")}/webhooks/${trigger.webhook_id}`;
}
