import { defineCommand } from "citty";
import { clientFromEnv } from "./client.ts";
import type { Io } from "./io.ts";

export default function envCommand(io: Io) {
  const list = defineCommand({
    meta: { name: "list", description: "List environments (ids for --env)" },
    async run() {
      const res = await clientFromEnv(io.env).get<{
        envs: { id: string; project: string; name: string }[];
      }>("/api/v1/envs");
      if (res.envs.length === 0) io.out("no environments");
      for (const env of res.envs) io.out(`${env.id}  ${env.project}/${env.name}`);
    },
  });
  return defineCommand({
    meta: { name: "env", description: "Environments" },
    subCommands: { list },
  });
}
