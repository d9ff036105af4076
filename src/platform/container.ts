import { resolveSettings } from "../config.ts";

/**
 * The container's entry point: the same service as `cli up`, configured only from `SVC_*`
 * variables, in prod mode, listening on all interfaces (a platform router sits in front).
 * It refuses to start without `SVC_API_TOKEN`: a container has no config home to keep one in.
 * SIGTERM stops it cleanly (sessions flushed, Python processes reaped).
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
  const { startService } = await import("./node.ts");
  const service = await startService(settings, {
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`hookline listening on ${service.url} (container)\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) process.exit(1);
    stopping = true;
    service.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
