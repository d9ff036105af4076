import { expect } from "vitest";
import { ManifestError, type ManifestIssue, parseManifest } from "../../src/manifest/index.ts";

/**
 * The issues of a manifest that must fail, as `line path: message` strings.
 * @example expect(issuesOf("version: v9\n")).toEqual(["1 version: …"])
 */
export function issuesOf(text: string): string[] {
  try {
    parseManifest(text);
  } catch (e) {
    expect(e).toBeInstanceOf(ManifestError);
    return (e as ManifestError).issues.map(
      (i: ManifestIssue) => `${i.line} ${i.path}: ${i.message}`,
    );
  }
  throw new Error("expected a ManifestError");
}

/**
 * A manifest's text from its lines.
 * @example lines("version: v2", "project:", "  name: demo")
 */
export const lines = (...l: string[]) => `${l.join("\n")}\n`;
