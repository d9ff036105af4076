import type { ProjectView } from "../data.ts";
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
