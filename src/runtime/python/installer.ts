import type { BuildFiles } from "../../model/records.ts";
import { materializeBuild } from "./builds.ts";
import { installRequirements } from "./pip.ts";

/** Builds remembered as installed; an older one forgotten is installed again if it comes back. */
const MAX_INSTALLED = 64;

export interface InstallerOptions {
  /** Data home: builds are materialized under `<dataHome>/builds/<id>`. */
  dataHome: string;
  /** The environment's Python executable (pip runs on it). */
  python: () => Promise<string>;
  /** Extra `pip install` arguments for requirements.txt (an index URL, say). */
  pipArgs?: string[];
  /** Progress of pip: one line a call. */
  onProgress?: (line: string) => void;
}

/**
 * Builds into this instance's Python environment: each build's files in its folder, its
 * requirements.txt installed by one pip at a time (two deploys must not install into the same
 * environment at once), and the last MAX_INSTALLED builds remembered as installed.
 * @example const installer = createInstaller({ dataHome, python }); const dir = await installer.installed(build);
 */
export function createInstaller(options: InstallerOptions) {
  let pipQueue: Promise<unknown> = Promise.resolve();
  const builds = new Map<string, Promise<string>>();

  /** Materializes a build and installs its requirements.txt, every time it is called. */
  async function install(build: BuildFiles): Promise<string> {
    const exe = await options.python();
    const dir = await materializeBuild(options.dataHome, build);
    const requirements = build.files["requirements.txt"];
    if (requirements !== undefined) {
      const text = Buffer.from(requirements, "base64").toString("utf8");
      const pip = pipQueue.then(() =>
        installRequirements(exe, text, {
          pipArgs: options.pipArgs,
          onProgress: options.onProgress,
        }),
      );
      pipQueue = pip.catch(() => {}); // a failed install does not stop the next one
      await pip;
    }
    return dir;
  }

  /**
   * A build's folder once it is installed here, done once per build: a deploy made on another
   * instance installed its requirements there, not into this instance's environment.
   */
  function installed(build: BuildFiles): Promise<string> {
    let done = builds.get(build.id);
    if (!done) {
      done = install(build);
      done.catch(() => builds.delete(build.id)); // retried by the next session or prepare
      if (builds.size >= MAX_INSTALLED) builds.delete(builds.keys().next().value!);
      builds.set(build.id, done);
    }
    return done;
  }

  /** Remembers a build installed by `install` (a deploy's check), so sessions skip pip. */
  function remember(buildId: string, dir: string): void {
    builds.set(buildId, Promise.resolve(dir));
  }

  return { install, installed, remember };
}
