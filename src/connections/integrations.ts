import { verifyConfluence } from "./confluence.ts";
import { verifyDiscord } from "./discord-events.ts";
import { verifyGithub } from "./github.ts";
import { verifyGooglePush } from "./google-push.ts";
import { verifyHttp } from "./http.ts";
import { verifyJira } from "./jira.ts";
import { verifySlack } from "./slack.ts";
import { verifyTelegram } from "./telegram.ts";
import { type ConnectionVars, type InboundRequest, refuse, type Verdict } from "./verdict.ts";

/**
 * The integrations whose inbound events reach handlers, and what each needs before it is
 * ready. Every other integration deploys with its vars set and its triggers inactive.
 */
export const EVENT_SOURCES = [
  "github",
  "slack",
  "http",
  "jira",
  "confluence",
  "telegram",
  "googlecalendar",
  "googledrive",
  "gmail",
  "googleforms",
  "discord",
] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];

export const isEventSource = (integration: string): integration is EventSource =>
  (EVENT_SOURCES as readonly string[]).includes(integration);

/**
 * The event sources in words, for the lines that name them.
 * @example eventSourcesText() // "github, slack, http, jira, confluence, telegram, googlecalendar, googledrive, gmail, googleforms and discord"
 */
export const eventSourcesText = () =>
  `${EVENT_SOURCES.slice(0, -1).join(", ")} and ${EVENT_SOURCES.at(-1)}`;

/**
 * One integration's check of an inbound request: the request and the connection's vars in, a
 * verdict out, nothing stored. `webhook` makes a webhook trigger's data of the request, for an
 * integration whose events carry it (http).
 */
export type Verifier = (
  req: InboundRequest,
  vars: ConnectionVars,
  webhook: () => unknown,
) => Verdict;

/** Gmail's and Forms' events come through Pub/Sub to one shared route, never to `/inbound`. */
const pubsubOnly =
  (route: string): Verifier =>
  () =>
    refuse(403, `this connection's events come through Cloud Pub/Sub to ${route}`);

const VERIFIERS: Record<EventSource, Verifier> = {
  github: verifyGithub,
  slack: verifySlack,
  http: (req, vars, webhook) => verifyHttp(req, vars, webhook()),
  jira: verifyJira,
  confluence: verifyConfluence,
  telegram: verifyTelegram,
  googlecalendar: verifyGooglePush("googlecalendar"),
  googledrive: verifyGooglePush("googledrive"),
  gmail: pubsubOnly("/google/pubsub/gmail"),
  googleforms: pubsubOnly("/google/pubsub/forms"),
  // Its events come over the gateway (src/platform/discord-gateways.ts), never to its address.
  discord: verifyDiscord,
};

/**
 * The verifier of an event source's inbound requests.
 * @example verifierOf("jira")(req, vars, () => data).kind // "events", "answer" or "refuse"
 */
export const verifierOf = (integration: EventSource): Verifier => VERIFIERS[integration];

/**
 * What a connection needs, each item one var or a choice of vars (any one will do): the
 * verification secret its inbound events are checked with, and what its client helper reads.
 */
const NEEDS: Record<EventSource, string[][]> = {
  // A personal access token, or a GitHub App installation (github-app.ts).
  github: [
    ["pat_secret", "webhook_secret"],
    ["pat", "install_id"],
  ],
  slack: [["private_signing_secret", "signing_secret"]],
  http: [["auth", "signing_secret"]],
  // The admin webhook's secret or an OAuth token (whose dynamic webhook the service registers),
  // then what its client helper (autokitteh.atlassian) reads.
  jira: [
    ["webhook_secret", "oauth_AccessToken"],
    ["Token", "APIKeyOrPAT", "oauth_AccessToken"],
    ["BaseURL", "base_url", "AccessURL"],
  ],
  // The site and an API token (or a PAT), which register its webhooks (confluence-webhooks.ts).
  confluence: [
    ["Token", "APIKeyOrPAT"],
    ["BaseURL", "base_url"],
  ],
  // The bot's token; the service sets its webhook and its SecretToken (telegram-webhooks.ts).
  telegram: [["BotToken"]],
  // The OAuth token the service watches with, then the watch channel it made (google-watch.ts).
  googlecalendar: [["oauth_AccessToken"], ["CalendarEventsWatchID"]],
  googledrive: [["oauth_AccessToken"], ["DriveEventsWatchID"]],
  // The OAuth token the service watches with, then the watch it made (google-pubsub.ts).
  gmail: [["oauth_AccessToken"], ["GmailWatchExpiration"]],
  googleforms: [["oauth_AccessToken"], ["FormID"], ["FormWatchesExpiration"]],
  // The bot's token, which the service opens the bot's gateway with (discord-gateway.ts).
  discord: [["BotToken"]],
};

/** A connection's state as `cli connection list`, the API and the UI show it. */
export interface ConnectionStatus {
  /** `ready`; `needs` (see `needs`); `no_events` for integrations that are not event sources. */
  state: "ready" | "needs" | "no_events";
  /** The missing vars by name, a choice written `a or b`. */
  needs: string[];
}

/**
 * The status of a connection whose vars (short names, set and non-empty) are `have`.
 * @example connectionStatus("github", new Set(["pat"])) // { state: "needs", needs: ["pat_secret or webhook_secret"] }
 */
export function connectionStatus(integration: string, have: Set<string>): ConnectionStatus {
  if (!isEventSource(integration)) return { state: "no_events", needs: [] };
  const needs = NEEDS[integration]
    .filter((choice) => !choice.some((name) => have.has(name)))
    .map((choice) => choice.join(" or "));
  return { state: needs.length ? "needs" : "ready", needs };
}

/**
 * How a status reads in one line (`ready`, `needs pat_secret or webhook_secret, pat`).
 * @example statusText({ state: "needs", needs: ["pat"] }) // "needs pat"
 */
export function statusText(s: ConnectionStatus): string {
  if (s.state === "no_events") return "no inbound events (vars only)";
  return s.state === "ready" ? "ready" : `needs ${s.needs.join(", ")}`;
}

/**
 * The env var that holds a connection's var: `<connection>__<var>`.
 * @example connectionVar("gh", "pat") // "gh__pat"
 */
export const connectionVar = (connection: string, name: string) => `${connection}__${name}`;

/** Event types that fire a trigger of another name: the spec's `message_posted` is Slack's `message`. */
const ALIASES: Record<string, Record<string, string>> = { slack: { message_posted: "message" } };

/**
 * Whether a connection trigger's `event_type` takes an event: exact (an http method in any
 * case), "" or "*" for all, or an alias.
 * @example eventTypeMatches("slack", "message_posted", "message") // true
 */
export function eventTypeMatches(integration: string, wanted: string, got: string): boolean {
  // An http connection's event types are methods, which any case names (as a webhook's).
  const want = integration === "http" ? wanted.toLowerCase() : wanted;
  if (want === "" || want === "*" || want === got) return true;
  return ALIASES[integration]?.[want] === got;
}
