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
            : "Nothing to run: no file of the deployment defines a top-level function."}
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
      {p.error && (
        <p id="run-error" class="bad" role="alert">
          {p.error}
        </p>
      )}
    </>
  );
}
