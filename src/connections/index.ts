export { githubEvents, type SlashCommand, slashCommands, verifyGithub } from "./github.ts";
export { signingKey, verifyHttp } from "./http.ts";
export {
  type ConnectionStatus,
  connectionStatus,
  connectionVar,
  EVENT_SOURCES,
  type EventSource,
  eventTypeMatches,
  isEventSource,
  statusText,
} from "./integrations.ts";
export { verifySlack } from "./slack.ts";
export { connectionVars, statusOf } from "./status.ts";
export type { ConnectionVars, InboundEvent, InboundRequest, Verdict } from "./verdict.ts";
