import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

/** nproc, the CPU model from /proc/cpuinfo, Node and Python versions: the table's context. */
export function machine(python: string) {
  const cpuinfo = readFileSync("/proc/cpuinfo", "utf8");
  return {
    nproc: availableParallelism(),
    cpu: /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1]?.trim() ?? "unknown",
    node: process.version,
    python: execFileSync(python, ["-c", "import platform; print(platform.python_version())"], {
      encoding: "utf8",
    }).trim(),
    kernel: readFileSync("/proc/sys/kernel/osrelease", "utf8").trim(),
  };
}
