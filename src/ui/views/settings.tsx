import type { AboutView } from "../about.ts";
import { Layout, type Viewer } from "./layout.tsx";

/**
 * The settings page (read-only): how this service runs, which OAuth apps it has, which
 * pre-installed packages are missing and why. Names of variables only, never their values.
 * @example c.html(<SettingsPage viewer={viewer} about={about} />)
 */
export function SettingsPage(p: { viewer: Viewer; about: AboutView }) {
  const { about } = p;
  const h = about.host;
  return (
    <Layout title="Settings" nav="settings" viewer={p.viewer}>
      <h1>Settings</h1>
      <p class="muted">
        Read-only: they come from flags and <code>SVC_*</code> variables at start (
        <code>npx cli config where</code> prints the same places).
      </p>
      <dl class="facts" id="facts">
        <dt>Version</dt>
        <dd id="version">hookline {about.version}</dd>
        <dt>Mode</dt>
        <dd id="mode">
          {h
            ? h.mode === "dev"
              ? "dev (no token; 127.0.0.1 only)"
              : "prod (the API token is needed)"
            : "—"}
        </dd>
        <dt>Storage</dt>
        <dd class="mono" id="storage">
          {h?.storage ?? "—"}
        </dd>
        <dt>Data home</dt>
        <dd class="mono" id="data-home">
          {h?.dataHome ?? "—"}
        </dd>
        <dt>Python</dt>
        <dd class="mono" id="python">
          {h?.python ?? "—"}
        </dd>
      </dl>
      <h2 id="oauth">OAuth apps</h2>
      <p class="muted">
        The service's own app per provider, from its environment (read at start: a change needs a
        restart). A connection may have its own instead (<code>private_client_id</code>).
      </p>
      <table aria-labelledby="oauth" id="oauth-apps">
        <thead>
          <tr>
            <th>Provider</th>
            <th>Environment</th>
            <th>Configured</th>
          </tr>
        </thead>
        <tbody>
          {about.oauth.map((o) => (
            <tr data-provider={o.provider}>
              <td>{o.provider}</td>
              <td class="mono">
                {o.env[0]}, {o.env[1]}
              </td>
              <td class={o.configured ? "ok" : "muted"}>{o.configured ? "yes" : "no"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2 id="packages">Pre-installed packages</h2>
      {about.missing === null ? (
        <p id="no-venv" class="muted">
          No environment made by the service to look at (it is made at the first deploy, or the
          service runs <code>SVC_WORKER_PYTHON</code>).
        </p>
      ) : about.missing.length === 0 ? (
        <p id="all-installed">Every package of python-runtime/preinstalled.txt is installed.</p>
      ) : (
        <table id="missing-packages" aria-labelledby="packages">
          <thead>
            <tr>
              <th>Missing package</th>
              <th>Why</th>
            </tr>
          </thead>
          <tbody>
            {about.missing.map((m) => (
              <tr>
                <td class="mono">{m.name}</td>
                <td>{m.why}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Layout>
  );
}
