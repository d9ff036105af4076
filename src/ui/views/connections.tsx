import type { OAuthMissing, ProjectView } from "../data.ts";
import { WebhookUrl } from "./url-field.tsx";

/**
 * A project's connections: integration, status (ready, or the vars it needs, set as
 * `<connection>__<var>`) and the inbound URL its provider posts to, with a copy button.
 */
export function Connections({ view, origin }: { view: ProjectView; origin: string }) {
  const connections = view.connections ?? [];
  if (connections.length === 0) return null;
  return (
    <>
      <h2 id="connections">Connections</h2>
      <table aria-labelledby="connections">
        <thead>
          <tr>
            <th scope="col">Connection</th>
            <th scope="col">Integration</th>
            <th scope="col">Status</th>
            <th scope="col">Inbound URL</th>
          </tr>
        </thead>
        <tbody>
          {connections.map((c) => (
            <tr>
              <td class="mono">{c.name}</td>
              <td>{c.integration}</td>
              <td class={c.ready ? "ok" : "warn"}>
                {c.status}
                {c.authorize && c.id ? (
                  <>
                    {" "}
                    <a
                      class="button"
                      id={`authorize-${c.name}`}
                      href={`/ui/authorize/${c.integration}/${encodeURIComponent(c.id)}`}
                    >
                      {c.authorize}
                    </a>
                  </>
                ) : null}
                {c.oauth_missing && <OAuthHint m={c.oauth_missing} id={`oauth-hint-${c.name}`} />}
              </td>
              <td>
                {c.inbound_path ? (
                  <WebhookUrl
                    id={`inbound-${c.name}`}
                    name={c.name}
                    what="Inbound URL"
                    url={origin + c.inbound_path}
                  />
                ) : (
                  "—"
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/**
 * What to do when no OAuth app is configured for a connection: the service's two environment
 * names (then a restart), or the connection's own app with `cli var set --connection`; names
 * only, never a value.
 * @example <OAuthHint m={{ provider: "Google", env: ["GOOGLE_CLIENT_ID", "GOOGLE_CLIENT_SECRET"], connection: "shop/gmail" }} id="hint" />
 */
export function OAuthHint({ m, id }: { m: OAuthMissing; id: string }) {
  return (
    <div class="hint" id={id}>
      <p>
        <strong>No OAuth app is configured for {m.provider}</strong>, so this connection cannot be
        authorized yet. Either set <code>{m.env[0]}</code> and <code>{m.env[1]}</code> in the
        service's environment and restart it (the service reads them at start), or give this
        connection its own app (no restart):
      </p>
      <pre>
        {`npx cli var set --connection ${m.connection} private_client_id <client id>\n` +
          `npx cli var set --secret --connection ${m.connection} private_client_secret`}
      </pre>
      <p class="muted">
        Where to register the app and which redirect URL to give it: <code>docs/oauth.md</code>,
        "Setting it up".
      </p>
    </div>
  );
}
