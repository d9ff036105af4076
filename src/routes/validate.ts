import type { Context } from "hono";
import * as v from "valibot";
import { HooklineError } from "../errors.ts";

/** The JSON body of a request, checked against `schema`; 400 naming the first bad field. */
export async function parseBody<S extends v.GenericSchema>(
  c: Context,
  schema: S,
): Promise<v.InferOutput<S>> {
  let json: unknown;
  try {
    json = await c.req.json();
  } catch {
    throw new HooklineError("bad_request", "the request body is not JSON");
  }
  const result = v.safeParse(schema, json);
  if (!result.success) {
    const issue = result.issues[0];
    const path = issue.path?.map((p) => String(p.key)).join(".") || "body";
    throw new HooklineError("bad_request", `${path}: ${issue.message}`);
  }
  return result.output;
}
