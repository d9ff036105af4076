import * as v from "valibot";
import { inList, inMap } from "./kinds.ts";

/**
 * A trigger's `reuse_process: true` (docs/manifest.md): its sessions may run in a process an
 * earlier session of the deployment left, module state kept. Never with a durable trigger (a
 * replay must start from fresh module state), whose default hangs on the manifest's version
 * (durable under v1), and only with `call:` (else no session starts).
 */
export function reuseNotDurable<T>() {
  return v.rawCheck<T>(({ dataset, addIssue }) => {
    const top = dataset.value as Record<string, unknown> | null;
    const project = top?.project as Record<string, unknown> | null | undefined;
    const at = top?.triggers != null ? top : project;
    const list = at?.triggers;
    if (!Array.isArray(list)) return;
    for (const [i, item] of list.entries()) {
      const t = item as Record<string, unknown> | null;
      if (t?.reuse_process !== true) continue;
      const durable = t.is_durable ?? top?.version === "v1";
      const message =
        durable === true
          ? `reuse_process is only for non-durable triggers: a durable session is replayed from fresh module state${
              t.is_durable === undefined
                ? ' (under version: v1 triggers are durable unless "is_durable: false")'
                : ""
            }`
          : t.call == null
            ? "reuse_process: true needs call: a trigger without call starts no session"
            : null;
      if (message === null) continue;
      const path: [v.IssuePathItem, ...v.IssuePathItem[]] = [
        inMap(at!, "triggers"),
        inList(list, i),
        inMap(t, "reuse_process"),
      ];
      addIssue({ message, path: at === top ? path : [inMap(top!, "project"), ...path] });
    }
  });
}
