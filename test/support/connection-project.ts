import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { DeployResult } from "../../src/deploy/index.ts";
import type { SessionRecord } from "../../src/model/records.ts";
import { type EmulatorHandle, folderFiles } from "./emulator.ts";

/**
 * What a connection suite does to its project on an emulator, over the API: deploy its
 * AutoKitteh folder (a manifest given, or the folder's own `autokitteh.yaml`), read and set a
 * connection's vars, and count the project's events and sessions.
 * @example const p = connectionProject(emu, "telegram_events", FIXTURE); await p.deploy();
 */
export function connectionProject(emu: EmulatorHandle, project: string, fixture: string) {
  return {
    deploy(manifest = readFileSync(join(fixture, "autokitteh.yaml"), "utf8")) {
      const files = folderFiles(fixture);
      delete files["autokitteh.yaml"];
      return emu.api<DeployResult>("/deploy", {
        method: "POST",
        body: JSON.stringify({ manifest, manifest_file: "autokitteh.yaml", files }),
      });
    },
    /** A connection's vars, named without their `<connection>__`. */
    async vars(connection: string): Promise<Record<string, string>> {
      const { vars } = await emu.api<{ vars: { name: string; value: string }[] }>(
        `/envs/${project}/vars`,
      );
      const mine = vars.filter((x) => x.name.startsWith(`${connection}__`));
      return Object.fromEntries(mine.map((x) => [x.name.slice(connection.length + 2), x.value]));
    },
    setVar(connection: string, name: string, value: string, secret = false) {
      return emu.api(`/envs/${project}/vars/${connection}__${name}`, {
        method: "PUT",
        body: JSON.stringify({ value, secret }),
      });
    },
    /** The project's events and sessions, counted. */
    async counts(): Promise<number[]> {
      const q = `project=${project}&limit=1000`;
      return [
        (await emu.api<{ events: unknown[] }>(`/events?${q}`)).events.length,
        (await emu.api<{ sessions: SessionRecord[] }>(`/sessions?${q}`)).sessions.length,
      ];
    },
  };
}
