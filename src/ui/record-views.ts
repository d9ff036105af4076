import { installableApp } from "../connections/github-install.ts";
import { connectionVars, statusOf, statusText } from "../connections/index.ts";
import type { ConnectionRecord, ProjectDoc } from "../model/records.ts";
import { ClientMissing, oauthClient } from "../oauth/client.ts";
import { type OAuthEnv, presetOf } from "../oauth/index.ts";
import { triggerState } from "../routes/api/views.ts";
import { inboundPath } from "../wire/deploy-result.ts";
import type { OAuthMissing, ProjectSummary, ProjectView } from "./data.ts";

/**
 * What the UI lists of a project.
 * @example projectSummary(doc).triggers // 2
 */
export const projectSummary = (doc: ProjectDoc): ProjectSummary => ({
  id: doc.project.id,
  name: doc.project.name,
  ...(doc.project.display_name && { display_name: doc.project.display_name }),
  active_deployment_id: doc.project.active_deployment_id,
  triggers: doc.triggers.length,
  updated_at: doc.project.updated_at,
});

/**
 * A project as its page shows it: triggers with what they do at `now` (whether they can fire,
 * a schedule's next firing: the API's `triggerState`), vars without any secret's value (not
 * even the ciphertext), and each connection's status in words.
 * @example projectView(doc, openSecret, new Date()).vars.find((v) => v.secret)?.value // null
 */
export function projectView(
  doc: ProjectDoc,
  openSecret: (sealed: string) => string,
  now: Date,
  settings: OAuthEnv = {},
): ProjectView {
  return {
    project: projectSummary(doc),
    triggers: doc.triggers.map((t) => ({ ...t, ...triggerState(doc, t, now) })),
    vars: doc.vars.map((v) => ({
      name: v.name,
      secret: v.secret,
      value: v.secret ? null : v.value,
      source: v.source,
      description: v.description ?? "",
    })),
    connections: (doc.connections ?? []).map((c) => {
      const status = statusOf(doc, c, openSecret);
      return {
        id: c.id,
        authorize: authorizeLabel(doc, c, openSecret),
        ...oauthMissing(doc, c, openSecret, settings),
        name: c.name,
        integration: c.integration,
        status: statusText(status),
        ready: status.state === "ready",
        inbound_path: inboundPath(c.inbound_id, c.integration),
      };
    }),
  };
}

/**
 * The connection row's button: "Authorize with <provider>" for an OAuth preset, "Install the
 * GitHub App" for a github connection whose App is known (its own, or the service's), else "".
 */
function authorizeLabel(doc: ProjectDoc, c: ConnectionRecord, open: (s: string) => string) {
  const preset = presetOf(c.integration);
  if (preset) return `Authorize with ${preset.provider}`;
  if (c.integration !== "github") return "";
  return installableApp(connectionVars(doc, c.name, open)) ? "Install the GitHub App" : "";
}

/**
 * For an OAuth connection with no OAuth app to use (neither the service's `<ENV>_CLIENT_ID` and
 * `_CLIENT_SECRET` nor the connection's own `private_client_id` and `private_client_secret`):
 * what to set, for the row's hint. Names only; no value is read into it.
 */
function oauthMissing(
  doc: ProjectDoc,
  c: ConnectionRecord,
  open: (s: string) => string,
  settings: OAuthEnv,
): { oauth_missing?: OAuthMissing } {
  const preset = presetOf(c.integration);
  if (!preset) return {};
  try {
    oauthClient(settings, preset, connectionVars(doc, c.name, open));
    return {};
  } catch (e) {
    if (!(e instanceof ClientMissing)) throw e;
    return {
      oauth_missing: {
        provider: preset.provider,
        env: [`${preset.env}_CLIENT_ID`, `${preset.env}_CLIENT_SECRET`],
        connection: `${doc.project.name}/${c.name}`,
      },
    };
  }
}
