import { appWebhookSecret } from "./github-app.ts";
import {
  type ConnectionVars,
  hubSignature,
  type InboundEvent,
  type InboundRequest,
  isObject,
  mediaType,
  parseForm,
  parseJson,
  refuse,
  type Verdict,
} from "./verdict.ts";

/** A command line of a comment, issue or pull request body, as AutoKitteh hands it over. */
export interface SlashCommand {
  name: string;
  args: string[];
  raw: string;
}

/** Commands read from one text at most, the rest left (AutoKitteh's bound). */
export const MAX_SLASH_COMMANDS = 16;

/**
 * The lines of a Markdown text that start with `/<name>`, outside fenced code blocks (``` or
 * ~~~, each fence toggling), with trailing space cut, the first 16: AutoKitteh's rule, so its
 * projects' `slash_command` triggers see the same commands.
 * @example slashCommands("LGTM\n/deploy staging") // [{ name: "deploy", args: ["staging"], raw: "/deploy staging" }]
 */
export function slashCommands(markdown: string): SlashCommand[] {
  const out: SlashCommand[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (out.length === MAX_SLASH_COMMANDS) break;
    const trimmed = line.trim();
    if (trimmed.startsWith("```") || trimmed.startsWith("~~~")) {
      fenced = !fenced;
      continue;
    }
    if (fenced || !line.startsWith("/")) continue;
    const raw = line.trimEnd();
    const [first, ...args] = raw.split(/\s+/);
    if (!first || first === "/") continue;
    out.push({ name: first.slice(1), args, raw });
  }
  return out;
}

/** Where each GitHub event that carries Markdown keeps it (others carry no commands). */
const MARKDOWN: Record<string, [string, string]> = {
  issue_comment: ["comment", "body"],
  pull_request_review_comment: ["comment", "body"],
  pull_request_review: ["review", "body"],
  pull_request: ["pull_request", "body"],
  issues: ["issue", "body"],
  discussion: ["discussion", "body"],
  discussion_comment: ["comment", "body"],
  commit_comment: ["comment", "body"],
};

function markdownOf(eventType: string, payload: Record<string, unknown>): string | null {
  const at = MARKDOWN[eventType];
  if (!at) return null;
  const holder = payload[at[0]];
  const text = isObject(holder) ? holder[at[1]] : undefined;
  return typeof text === "string" ? text : "";
}

/**
 * The events one verified delivery makes, as AutoKitteh makes them: the payload under its
 * `X-GitHub-Event` (with `slash_commands` when the event carries Markdown), then one
 * `slash_command` event per command line, whose data is `{command, actual_data,
 * actual_event_type}`: the command, and the delivery's own data and event type.
 * @example githubEvents("issue_comment", { comment: { body: "/retry" } })[1]?.data
 *   // { command: { name: "retry", args: [], raw: "/retry" }, actual_data: { comment: …, slash_commands: […] }, actual_event_type: "issue_comment" }
 */
export function githubEvents(eventType: string, payload: Record<string, unknown>): InboundEvent[] {
  const md = markdownOf(eventType, payload);
  if (md === null) return [{ event_type: eventType, data: payload }];
  const commands = slashCommands(md.replaceAll("\r\n", "\n"));
  const data = { ...payload, slash_commands: commands };
  return [
    { event_type: eventType, data },
    ...commands.map((command) => ({
      event_type: "slash_command",
      data: { command, actual_data: data, actual_event_type: eventType },
    })),
  ];
}

/**
 * A repository webhook's delivery, checked as GitHub documents it: `X-Hub-Signature-256` is
 * `sha256=` + hex HMAC-SHA256 of the raw body under the connection's `pat_secret` (AutoKitteh's
 * name) or `webhook_secret` (a GitHub App's; for a connection to the service's own App,
 * `auth_type` `oauthDefault`, the service's `SVC_GITHUB_WEBHOOK_SECRET`: github-app.ts). No
 * secret set refuses everything. JSON and form (`payload=`)
 * bodies; `ping` is answered and stored nowhere.
 * @example verifyGithub(req, (n) => (n === "webhook_secret" ? "It's a Secret to Everybody" : undefined))
 */
export function verifyGithub(req: InboundRequest, vars: ConnectionVars): Verdict {
  const secret = vars("pat_secret") || appWebhookSecret(vars);
  if (!secret) {
    return refuse(
      403,
      "this connection has no pat_secret or webhook_secret: deliveries are refused",
    );
  }
  const problem = hubSignature(req, "x-hub-signature-256", secret);
  if (problem) return refuse(401, problem);
  const type = mediaType(req.headers);
  let text: string | undefined;
  if (type === "application/json") text = Buffer.from(req.body).toString("utf8");
  else if (type === "application/x-www-form-urlencoded") text = parseForm(req.body).payload;
  else return refuse(400, `content type "${type}": use application/json or a form`);
  const payload = text === undefined ? undefined : parseJson(text);
  if (!isObject(payload)) return refuse(400, "the body is not a JSON object");
  const eventType = req.headers.get("x-github-event")?.trim();
  if (!eventType) return refuse(400, "X-GitHub-Event is missing");
  if (eventType === "ping") {
    return { kind: "answer", status: 200, body: '{"ok":true}', contentType: "application/json" };
  }
  const delivery = req.headers.get("x-github-delivery")?.trim() || null;
  return { kind: "events", delivery, events: githubEvents(eventType, payload) };
}
