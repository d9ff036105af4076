import type { ProjectDoc } from "../model/records.ts";
import { MASK, type SecretBox } from "../secrets.ts";

/** Secret values shorter than this are not masked in prints: too likely to match other text. */
const MIN_REDACTED = 4;

/**
 * A session's environment (vars, secrets opened) and the redaction of its secret values.
 * @example const { env, redact } = sessionEnv(doc, secrets); redact("token=s3cret") // "token=********"
 */
export function sessionEnv(doc: ProjectDoc, secrets: SecretBox) {
  const env: Record<string, string> = {};
  const values: string[] = [];
  for (const v of doc.vars) {
    const value = v.secret ? secrets.open(v.value) : v.value;
    env[v.name] = value;
    if (v.secret && value.length >= MIN_REDACTED) values.push(value);
  }
  // Longest first, so a secret that contains another is masked whole.
  values.sort((a, b) => b.length - a.length);
  const redact = values.length
    ? (text: string) => values.reduce((t, s) => t.replaceAll(s, MASK), text)
    : (text: string) => text;
  return { env, redact };
}
