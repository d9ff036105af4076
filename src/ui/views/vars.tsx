import type { VarRow } from "../data.ts";

/**
 * A project's vars: name, value (a secret's never: projectView leaves it out), who set it, and
 * the manifest's description of it.
 */
export function Vars({ vars }: { vars: VarRow[] }) {
  return (
    <>
      <h2 id="vars">Vars</h2>
      {vars.length === 0 ? (
        <p>No vars.</p>
      ) : (
        <table aria-labelledby="vars">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
              <th scope="col">Set by</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {vars.map((v) => (
              <tr>
                <td class="mono">{v.name}</td>
                {/* A secret comes without its value (projectView): the view only says so. */}
                <td class="mono">{v.value ?? <em>secret (not shown)</em>}</td>
                <td>{v.source === "cli" ? "cli var set" : "manifest"}</td>
                <td>{v.description || "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
