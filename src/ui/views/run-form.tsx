import type { ProjectView } from "../data.ts";
import { Csrf, type Viewer } from "./layout.tsx";

/** What the Run form shows: the chosen entry point, the inputs as JSON text, durable or not. */
export interface RunFormInput {
  entrypoint: string;
  inputs: string;
  durable: boolean;
}

export const emptyRunForm: RunFormInput = { entrypoint: "", inputs: "{}", durable: false };

/**
 * A project's "Run" form: start a session by hand (as `cli session start` does), choosing a
 * top-level function of a file of the active deployment, with inputs (a JSON object, the
 * session's `event.data`). Posts to the project's `/run`, which opens the new session.
 */
export function RunForm(p: {
  viewer: Viewer;
  view: ProjectView;
  form: RunFormInput;
  error?: string;
}) {
  const files = p.view.entry_points ?? [];
  const action = `/ui/projects/${encodeURIComponent(p.view.project.id)}/run`;
  return (
    <>
      <h2 id="run">Run</h2>
      {files.length === 0 ? (
        <p id="no-run">
          {p.view.project.active_deployment_id === null
            ? "Nothing to run: the project has no active deployment."
            : "Nothing to run: no top-level function of the deployment takes an event or is called by a trigger."}
        </p>
      ) : (
        <form method="post" action={`${action}#run`} aria-labelledby="run">
          <Csrf viewer={p.viewer} />
          <p>Start a session by hand: no trigger, the inputs are its event.data.</p>
          <label for="entrypoint">Function</label>
          <select id="entrypoint" name="entrypoint" class="mono">
            {files.map((f) => (
              <optgroup label={f.file}>
                {f.functions.map((fn) => {
                  const loc = `${f.file}:${fn}`;
                  return (
                    <option value={loc} selected={loc === p.form.entrypoint}>
                      {loc}
                    </option>
                  );
                })}
              </optgroup>
            ))}
          </select>
          <label for="inputs">Inputs, a JSON object</label>
          <textarea id="inputs" name="inputs" class="mono">
            {p.form.inputs}
          </textarea>
          <label>
            <input type="checkbox" name="durable" value="on" checked={p.form.durable} /> Durable
          </label>
          <p>
            <button type="submit">Run</button>
          </p>
        </form>
      )}
      <NotOffered others={p.view.not_entry_points ?? []} />
      {p.error && (
        <p id="run-error" class="bad" role="alert">
          {p.error}
        </p>
      )}
    </>
  );
}

/** The functions the form leaves out, named apart: helpers and activities are no entry points. */
function NotOffered({ others }: { others: { loc: string; kind: "helper" | "activity" }[] }) {
  if (others.length === 0) return null;
  const list = (kind: "helper" | "activity") => others.filter((o) => o.kind === kind);
  const line = (label: string, items: { loc: string }[], id: string) =>
    items.length > 0 && (
      <p id={id} class="muted">
        {label}:{" "}
        {items.map((o, i) => (
          <>
            {i > 0 && ", "}
            <code>{o.loc}</code>
          </>
        ))}
      </p>
    );
  return (
    <details id="not-entry-points">
      <summary>Not offered: helpers and activities</summary>
      <p class="muted">
        The list holds the functions a trigger calls and those whose first parameter takes an event
        (<code>event</code>, <code>e</code>, or typed <code>Event</code>).
      </p>
      {line("Helpers", list("helper"), "helpers")}
      {line("Activities (they run inside a session)", list("activity"), "activities")}
    </details>
  );
}
