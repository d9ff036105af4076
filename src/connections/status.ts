import type { ConnectionRecord, ProjectDoc } from "../model/records.ts";
import { presetOf } from "../providers/oauth-presets.ts";
import { appWebhookSecret } from "./github-app.ts";
import { type ConnectionStatus, connectionStatus } from "./integrations.ts";
import type { ConnectionVars } from "./verdict.ts";

/**
 * A connection's vars, by short name, from the project's env (`<connection>__<var>`), secrets
 * opened with `open`. An empty value counts as unset.
 * @example connectionVars(doc, "gh", (s) => secrets.open(s))("pat_secret")
 */
export function connectionVars(
  doc: ProjectDoc,
  connection: string,
  open: (sealed: string) => string,
): ConnectionVars {
  const prefix = `${connection}__`;
  return (name) => {
    const rec = doc.vars.find((x) => x.name === prefix + name);
    if (!rec) return undefined;
    return (rec.secret ? open(rec.value) : rec.value) || undefined;
  };
}

/**
 * The status of one of a project's connections, from the vars set now.
 * @example statusOf(doc, doc.connections[0], (s) => secrets.open(s)) // { state: "ready", needs: [] }
 */
export function statusOf(
  doc: ProjectDoc,
  conn: ConnectionRecord,
  open: (sealed: string) => string,
): ConnectionStatus {
  const vars = connectionVars(doc, conn.name, open);
  // The provider refused the refresh token (invalid_grant, src/oauth/refresh.ts): the user must
  // authorize the connection again, whatever else is set.
  if (vars("oauth_status") === "needs_authorization") {
    return { state: "needs", needs: ["authorization"] };
  }
  const prefix = `${conn.name}__`;
  const have = new Set(
    doc.vars
      .filter((x) => x.name.startsWith(prefix))
      .map((x) => x.name.slice(prefix.length))
      .filter((n) => vars(n) !== undefined),
  );
  // A connection to the service's own GitHub App is verified with the service's secret.
  if (conn.integration === "github" && appWebhookSecret(vars)) have.add("webhook_secret");
  if (neverAuthorized(conn.integration, vars)) {
    // What is still missing once the authorization has set its token and the site it reaches.
    const after = connectionStatus(conn.integration, new Set([...have, ...AUTHORIZED]));
    return { state: "needs", needs: ["authorization", ...after.needs] };
  }
  return connectionStatus(conn.integration, have);
}

/** The vars a user pastes instead of authorizing: a token, an API key, a service account's JSON. */
const PASTED = [
  ...["JSON", "pat", "private_bot_token", "BotToken", "Token", "APIKeyOrPAT"],
  ...["api_key", "private_app_token"],
];
/** The vars an authorization sets (the token, and Atlassian's site) that a status may need. */
const AUTHORIZED = ["oauth_AccessToken", "oauth_access_token", "AccessID", "AccessURL"];

/**
 * Whether a connection of an integration with an OAuth preset has no token yet, neither from an
 * authorization nor pasted. An `auth_type` other than OAuth's (a service account, a daemon app,
 * a server-to-server app) is a set-up without authorization.
 */
function neverAuthorized(integration: string, vars: ConnectionVars): boolean {
  if (!presetOf(integration)) return false;
  const authType = vars("auth_type");
  if (authType && !authType.startsWith("oauth")) return false;
  return ![...AUTHORIZED.slice(0, 2), ...PASTED].some((name) => vars(name) !== undefined);
}
