import type { SessionRecord } from "../data.ts";

/**
 * A duration for people: "850 ms", "12 s", "3 min 4 s".
 * @example duration(65_000) // "1 min 5 s"
 */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/**
 * How long a session ran, or null while it has not started.
 * @example sessionDuration({ started_at: null } as SessionRecord) // null
 */
export function sessionDuration(rec: SessionRecord): number | null {
  if (!rec.started_at) return null;
  const end = rec.ended_at ? Date.parse(rec.ended_at) : Date.now();
  return end - Date.parse(rec.started_at);
}

/**
 * An ISO time as "2026-11-26 07:40:12" (UTC), short enough for a table.
 * @example shortTime("2026-11-26T07:40:12.345Z") // "2026-11-26 07:40:12"
 */
export function shortTime(iso: string | null): string {
  return iso
    ? iso
        .replace("T", " ")
        .replace(/\.\d+Z$/, "Z")
        .replace(/Z$/, "")
    : "—";
}

/**
 * A body as text for display: pretty JSON when it parses, else the text, else a note.
 * @example prettyBody('{"a":1}') // '{\n  "a": 1\n}'
 */
export function prettyBody(text: string | null): string {
  if (text === null) return "(binary body)";
  if (text === "") return "(empty)";
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * Base64 bytes as display text (see prettyBody); null for none.
 * @example bodyFromBase64(Buffer.from("hi").toString("base64")) // "hi"
 */
export function bodyFromBase64(b64: string | null): string | null {
  if (b64 === null) return null;
  const bytes = Buffer.from(b64, "base64");
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
