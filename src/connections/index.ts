export { githubEvents, type SlashCommand, slashCommands, verifyGithub } from "./github.ts";
export { signingKey, verifyHttp } from "./http.ts";
export {
  type ConnectionStatus,
  connectionStatus,
  connectionVar,
  EVENT_SOURCES,
  type EventSource,
  eventSourcesText,
  eventTypeMatches,
  isEventSource,
  statusText,
  type Verifier,
  verifierOf,
} from "./integrations.ts";
export { jiraEventType, verifyJira } from "./jira.ts";
export { verifySlack } from "./slack.ts";
export { connectionVars, statusOf } from "./status.ts";
export type { ConnectionVars, InboundEvent, InboundRequest, Pulled, Verdict } from "./verdict.ts";
