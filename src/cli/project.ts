import { defineCommand } from "citty";
import { clientFromEnv } from "./client.ts";
import type { Io } from "./io.ts";
import { table } from "./output.ts";

export default function projectCommand(io: Io) {
  const list = defineCommand({
    meta: { name: "list", description: "List projects" },
    async run() {
      const res = await clientFromEnv(io.env).get<{
        projects: { id: string; name: string; active_deployment_id: string | null }[];
      }>("/api/v1/projects");
      if (res.projects.length === 0) return io.out("no projects");
      const rows = res.projects.map((p) => [p.name, p.id, p.active_deployment_id ?? "-"]);
      for (const line of table(["NAME", "ID", "ACTIVE_DEPLOYMENT"], rows)) io.out(line);
    },
  });
  return defineCommand({
    meta: { name: "project", description: "Projects" },
    subCommands: { list },
  });
}
