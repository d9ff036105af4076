import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { preinstall } from "../runtime/python/preinstall.ts";

/** `<target>/.hookline-preinstall.json`: which list was installed there, and what pip lacked. */
interface Marker {
  list: string;
  missing: string[];
}

/**
 * The container's pre-installed packages, once per data volume: AutoKitteh's set
 * (`python-runtime/preinstalled.txt`) installed with `pip install --target <target>` from whatever
 * index the container reaches (pip's `PIP_*` variables), each package pip cannot get named
 * through `say`. The image's venv has `<target>` on its path (a `.pth` file), so sessions import
 * them. Done again only when the list changes. Resolves to the packages left out.
 * @example await preinstallOnce({ python, listFile, target: "/data/hookline/python", say });
 */
export async function preinstallOnce(o: {
  python: string;
  listFile: string;
  target: string;
  say: (line: string) => void;
}): Promise<string[]> {
  const list = createHash("sha256")
    .update(await readFile(o.listFile))
    .digest("hex");
  const markerFile = join(o.target, ".hookline-preinstall.json");
  const marker = await readFile(markerFile, "utf8").then(
    (t) => JSON.parse(t) as Marker,
    () => null,
  );
  if (marker?.list === list) return marker.missing;
  await mkdir(o.target, { recursive: true });
  const log = join(o.target, "preinstall.log"); // pip's errors for those left out
  const missing = await preinstall(o.python, o.listFile, o.say, log, ["--target", o.target]);
  await writeFile(markerFile, JSON.stringify({ list, missing } satisfies Marker));
  return missing;
}
