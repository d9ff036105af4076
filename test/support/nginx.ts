import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { repoRoot } from "./python.ts";

/**
 * Debian's nginx as the platform router in front of a fleet, with the rules operators get
 * (deploy/nginx.conf): round robin, the forwarded headers (the upstream gets `Host:` the
 * upstream's name, so a service must read `X-Forwarded-Host`), a refused connection or a 503 of a
 * draining instance tried on the next one. Here the upstreams are `upstreams` (ports on
 * 127.0.0.1), it listens on `port`, and it logs which upstream answered each request.
 */
export function routerConfig(dir: string, port: number, upstreams: number[]): string {
  const conf = readFileSync(join(repoRoot, "deploy/nginx.conf"), "utf8");
  const servers = upstreams.map((p) => `    server 127.0.0.1:${p} max_fails=0;`).join("\n");
  const local = `
  log_format upstream '$status|$upstream_addr|$upstream_status|$request';
  access_log ${dir}/access.log upstream;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;`;
  const out = conf
    .replace(
      /^worker_processes .*$/m,
      `worker_processes 1;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log warn;`,
    )
    .replace(/^(\s*)server hookline-[ab]:8080 max_fails=0;\n/gm, "")
    .replace(/upstream hookline \{\n/, (m) => `${m}${servers}\n`)
    .replace(/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${port};`)
    .replace(/^http \{$/m, (m) => `${m}${local}`);
  if (!out.includes(servers) || !out.includes(`listen 127.0.0.1:${port};`)) {
    throw new Error("deploy/nginx.conf changed shape: test/support/nginx.ts cannot adapt it");
  }
  return out;
}

export interface Router {
  url: string;
  /** The access log: each request's status, the upstreams tried (the last one answered), path. */
  accessLog(): { status: number; tried: string[]; request: string }[];
  dispose(): Promise<void>;
}

/** Starts nginx in the foreground on `port` with {@link routerConfig}; resolves once it answers. */
export async function startRouter(dir: string, port: number, upstreams: number[]): Promise<Router> {
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, "nginx.conf");
  writeFileSync(conf, routerConfig(dir, port, upstreams));
  const child: ResultPromise = execa("nginx", ["-p", dir, "-c", conf, "-g", "daemon off;"], {
    reject: false,
    all: true,
  });
  const url = `http://127.0.0.1:${port}`;
  const end = Date.now() + 10_000;
  while ((await fetch(`${url}/healthz`).catch(() => null)) === null) {
    if (Date.now() > end || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`nginx did not start: ${(await child).all}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    accessLog: () =>
      readFileSync(join(dir, "access.log"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [status, tried, , request] = line.split("|");
          return {
            status: Number(status),
            tried: (tried ?? "").split(", "),
            request: request ?? "",
          };
        }),
    async dispose() {
      child.kill("SIGQUIT");
      await child;
    },
  };
}
