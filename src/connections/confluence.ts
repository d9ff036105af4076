import {
  type ConnectionVars,
  hubSignature,
  type InboundRequest,
  isObject,
  mediaType,
  parseJson,
  refuse,
  type Verdict,
} from "./verdict.ts";

/**
 * The webhooks AutoKitteh registers at a Confluence site, one per category (its URL ends with
 * the category, as Confluence's payloads name no event), and the events each asks for.
 */
export const CONFLUENCE_WEBHOOK_EVENTS: Record<string, string[]> = {
  added: ["label_added"],
  archived: ["attachment_archived", "page_archived"],
  copied: ["page_copied"],
  created: [
    ...["attachment_created", "blog_created", "blueprint_page_created", "comment_created"],
    ...["content_created", "group_created", "label_created", "page_created"],
    ...["relation_created", "space_created"],
  ],
  deleted: ["label_deleted", "relation_deleted"],
  moved: ["page_moved"],
  removed: [
    ...["attachment_removed", "blog_removed", "comment_removed", "content_removed"],
    ...["group_removed", "label_removed", "page_removed", "space_removed", "user_removed"],
  ],
  trashed: ["attachment_trashed", "blog_trashed", "content_trashed", "page_trashed"],
  updated: [
    ...["attachment_updated", "blog_updated", "comment_updated", "content_updated"],
    ...["page_updated", "space_logo_updated", "space_updated"],
  ],
};

export const CONFLUENCE_CATEGORIES = Object.keys(CONFLUENCE_WEBHOOK_EVENTS);

/** The payload's keys that name its entity, in the order AutoKitteh looks for them. */
const ENTITIES = [
  ...["attachment", "blog", "blueprint_page", "comment", "content", "group", "label"],
  ...["page", "relation", "space"],
];

/**
 * The event type AutoKitteh gives a Confluence payload delivered to a category's webhook: the
 * entity the payload holds and the category (`page` + `created` → `page_created`), or null.
 * @example confluenceEventType({ page: { id: 1 } }, "created") // "page_created"
 */
export function confluenceEventType(
  payload: Record<string, unknown>,
  category: string,
): string | null {
  const entity = ENTITIES.find((e) => e in payload);
  if (entity) return `${entity}_${category}`;
  if ("attachments" in payload) return `attachment_${category}`;
  if ("relationData" in payload) return `relation_${category}`;
  const type = payload.type;
  if (typeof type === "string" && type.includes("content")) return `content_${category}`;
  return null;
}

/**
 * A delivery of one of the webhooks the service registered at the connection's Confluence site
 * (confluence-webhooks.ts), to `/inbound/<id>/<category>`: refused unless the category is one
 * of AutoKitteh's and `X-Hub-Signature` (`sha256=` + the hex HMAC-SHA256 of the raw body,
 * Atlassian's signed webhooks) holds under that webhook's secret (`WebhookSecret_<category>`),
 * else under `webhook_secret` (a webhook the user made). No secret: 403. The body is a JSON
 * object; the event is `{event_type: <entity>_<category>, data: the payload}`, as AutoKitteh
 * delivers it; `X-Atlassian-Webhook-Identifier` makes repeats one event.
 * @example verifyConfluence({ ...req, suffix: "created" }, vars)
 */
export function verifyConfluence(req: InboundRequest, vars: ConnectionVars): Verdict {
  const category = (req.suffix ?? "").replace(/^\/+|\/+$/g, "");
  if (!CONFLUENCE_CATEGORIES.includes(category)) {
    return refuse(400, `no Confluence webhook category "${category.slice(0, 40)}" in the URL`);
  }
  const secret = vars(`WebhookSecret_${category}`) ?? vars("webhook_secret");
  if (!secret) {
    return refuse(403, `this connection has no secret for its "${category}" webhook`);
  }
  const problem = hubSignature(req, "x-hub-signature", secret);
  if (problem) return refuse(401, problem);
  const type = mediaType(req.headers);
  if (type !== "application/json") {
    return refuse(400, `content type "${type}": Confluence sends application/json`);
  }
  const payload = parseJson(Buffer.from(req.body).toString("utf8"));
  if (!isObject(payload)) return refuse(400, "the body is not a JSON object");
  const eventType = confluenceEventType(payload, category);
  if (!eventType) return refuse(400, "the body names no Confluence entity");
  const delivery = req.headers.get("x-atlassian-webhook-identifier")?.trim() || null;
  return { kind: "events", delivery, events: [{ event_type: eventType, data: payload }] };
}
