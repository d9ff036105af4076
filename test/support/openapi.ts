import { Ajv2020 } from "ajv/dist/2020.js";

/** Checking answers against an OpenAPI 3.1 document: its schemas compiled with ajv. */

export type Doc = { paths: Record<string, Record<string, Operation>> };
export type Operation = {
  operationId: string;
  responses: Record<string, { content?: Record<string, unknown>; "x-events"?: object }>;
};

/**
 * A validator for any schema of the document, by its path of members.
 * @example const check = compileDocument(doc)(["components", "schemas", "Session"]); check(body)
 */
export function compileDocument(doc: object) {
  // The document is not itself a schema: its OpenAPI members are declared as inert keywords,
  // and its schemas are reached by JSON pointer, `#/components/schemas/…` resolving inside it.
  const ajv = new Ajv2020({ strict: true });
  ajv.addVocabulary(["openapi", "info", "servers", "security", "paths", "components"]);
  ajv.addFormat("date-time", (s: string) => /^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(s));
  ajv.addSchema({ ...doc, $id: "doc" });
  const pointer = (...parts: string[]) =>
    parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");
  return (parts: string[]) => ajv.compile({ $ref: `doc#/${pointer(...parts)}` });
}

/**
 * The documented operation for a concrete request path, with its template.
 * @example findOperation(doc, "get", "/sessions/ses_1")?.template // "/sessions/{id}"
 */
export function findOperation(doc: Doc, method: string, path: string) {
  for (const [template, item] of Object.entries(doc.paths)) {
    const re = new RegExp(`^${template.replaceAll(/\{\w+\}/g, "[^/]+")}$`);
    const op = item[method];
    if (re.test(path) && op) return { template, op };
  }
  return null;
}

/**
 * `data:` payloads of a server-sent event stream, by event name (`message` when unnamed).
 * @example sseEvents('event: end\ndata: {"id":1}\n\n') // [{ name: "end", data: { id: 1 } }]
 */
export function sseEvents(text: string) {
  return text
    .split("\n\n")
    .filter((block) => block.trim())
    .map((block) => {
      const lines = block.split("\n");
      const name =
        lines
          .find((l) => l.startsWith("event:"))
          ?.slice(6)
          .trim() ?? "message";
      const data = lines
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart())
        .join("\n");
      return { name, data: JSON.parse(data) as unknown };
    });
}

/**
 * ajv's complaints in one line.
 * @example expect(check(body), ajvErrors(check)).toBe(true)
 */
export function ajvErrors(check: { errors?: { instancePath: string; message?: string }[] | null }) {
  return (check.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");
}
