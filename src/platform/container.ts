import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { resolveSettings } from "../config.ts";
import { packageRoot } from "../package-root.ts";

/**
 * The container's entry point: the same service as `cli up`, configured only from `SVC_*`
 * variables, in prod mode, listening on all interfaces (a platform router sits in front).
 * It refuses to start without `SVC_API_TOKEN`: a container has no config home to keep one in.
 * SIGTERM stops it cleanly (readiness false, held requests and non-durable sessions drained,
 * durable ones left to resume, sessions flushed, Python processes reaped); a second signal
 * exits at once.
 */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (!env.SVC_API_TOKEN) {
    process.stderr.write("error: SVC_API_TOKEN must be set: the management API needs a token\n");
    process.exit(1);
  }
  let settings: ReturnType<typeof resolveSettings>;
  try {
    settings = resolveSettings({ mode: "prod", host: env.SVC_HOST || "0.0.0.0" }, env);
  } catch (e) {
    // A bad setting (an unsupported SVC_STORAGE, a port that is not a number): one line.
    process.stderr.write(`error: ${(e as Error).message}
`);
    process.exit(1);
  }
  // The image's venv names <data home>/python in a .pth file, which Python reads as each
  // interpreter starts and skips while the folder is missing: made before any Python starts, so
  // what is installed there later (the pre-install below, or by hand) is on every process's path.
  mkdirSync(join(settings.dataHome, "python"), { recursive: true });
  const { startService } = await import("./node.ts");
  const service = await startService(settings, {
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`hookline listening on ${service.url} (container)\n`);
  if (!settings.publicUrl) {
    process.stderr.write(
      "warning: SVC_PUBLIC_URL is not set: URLs sessions make (get_webhook_url) name " +
        `${service.url}; behind a router, set it to the router's URL\n`,
    );
  }
  preinstallInBackground(env, settings.dataHome);
  let stopping = false;
  const stop = () => {
    if (stopping) process.exit(1);
    stopping = true;
    service.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

/**
 * AutoKitteh's pre-installed packages into the data volume, at the first start, while the service
 * already serves (sessions that start before it ends may lack them). Not when the image has them
 * baked in (`SVC_PREINSTALL_BAKED=on`, from `--build-arg HOOKLINE_PREINSTALL=on`), nor with
 * `SVC_PREINSTALL=off`, nor on a Python other than the image's.
 */
function preinstallInBackground(env: NodeJS.ProcessEnv, dataHome: string): void {
  const python = env.SVC_WORKER_PYTHON;
  if (env.SVC_PREINSTALL === "off" || env.SVC_PREINSTALL_BAKED === "on" || !python) return;
  const say = (line: string) => process.stderr.write(`preinstall: ${line}\n`);
  import("./container-preinstall.ts")
    .then(({ preinstallOnce }) =>
      preinstallOnce({
        python,
        listFile: join(packageRoot(import.meta.url), "python-runtime", "preinstalled.txt"),
        target: join(dataHome, "python"),
        say,
      }),
    )
    .catch((e: Error) => say(`failed: ${e.message}`));
}
