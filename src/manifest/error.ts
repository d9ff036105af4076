import { HooklineError } from "../errors.ts";

/** One problem in a manifest. `line` is 1-based; null when the problem has no place in the file. */
export interface ManifestIssue {
  line: number | null;
  /** Dotted path with list indexes, `triggers[0].is_sync`; "" for the file as a whole. */
  path: string;
  message: string;
}

/**
 * Every problem found in one manifest. The message has one line per issue, ready to print:
 * `manifest.yaml:7: triggers[0].is_sync: expected boolean`. A HooklineError (400) so the API can
 * answer with it as is; `issues` also goes into the problem body.
 * @example throw new ManifestError("manifest.yaml", [{ line: 1, path: "", message: "the manifest is empty" }])
 */
export class ManifestError extends HooklineError {
  readonly file: string;
  readonly issues: ManifestIssue[];
  constructor(file: string, issues: ManifestIssue[]) {
    super("bad_request", issues.map((i) => formatIssue(file, i)).join("\n"), { issues });
    this.name = "ManifestError";
    this.file = file;
    this.issues = issues;
  }
}

/**
 * One issue as one line of text.
 * @example formatIssue("manifest.yaml", { line: 7, path: "vars[0].value", message: "expected string" })
 * // "manifest.yaml:7: vars[0].value: expected string"
 */
export function formatIssue(file: string, issue: ManifestIssue): string {
  const where = issue.line === null ? file : `${file}:${issue.line}`;
  return issue.path ? `${where}: ${issue.path}: ${issue.message}` : `${where}: ${issue.message}`;
}
