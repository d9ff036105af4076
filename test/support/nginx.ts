import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";

/**
 * Debian's nginx as the platform router in front of a fleet: round robin over `upstreams`
 * (ports on 127.0.0.1), the forwarded headers a router sets (the upstream gets `Host:` the
 * upstream's name, so a service must read `X-Forwarded-Host`), and a request refused with 503
 * (a draining instance, which stored nothing) or a connection refused tried on the next
 * instance, POSTs too (`non_idempotent`). deploy/nginx.conf is the same router for operators.
 */
export function routerConfig(dir: string, port: number, upstreams: number[]): string {
  const servers = upstreams.map((p) => `    server 127.0.0.1:${p} max_fails=0;`).join("\n");
  return `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  log_format upstream '$status|$upstream_addr|$upstream_status|$request';
  access_log ${dir}/access.log upstream;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream hookline {
${servers}
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 2m;
    location / {
      proxy_pass http://hookline;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_next_upstream error timeout http_503 non_idempotent;
      proxy_next_upstream_tries 3;
      proxy_read_timeout 60s;
      proxy_buffering off;
    }
  }
}
`;
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
