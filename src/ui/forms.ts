import type { Context } from "hono";
import * as v from "valibot";
import { HooklineError } from "../errors.ts";
import { MAX_INPUTS, ManualRunFields } from "../sessions/manual.ts";
import type { TestRequest } from "./data.ts";

/** Form fields every state-changing UI form carries. */
const Csrf = v.object({ _csrf: v.optional(v.string(), "") });

const TestForm = v.object({
  _csrf: v.optional(v.string(), ""),
  method: v.picklist(["GET", "POST", "PUT", "PATCH", "DELETE"], "method: choose one of the list"),
  suffix: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^(?:[/?][^\s#]*)?$/, 'path: start with "/" or "?", no spaces'),
      v.maxLength(2000),
    ),
    "",
  ),
  headers: v.optional(v.pipe(v.string(), v.maxLength(64 * 1024)), ""),
  body: v.optional(v.string(), ""),
});

export type TestFormInput = v.InferOutput<typeof TestForm>;

async function formOf(c: Context): Promise<Record<string, unknown>> {
  const type = c.req.header("content-type") ?? "";
  if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(type)) {
    throw new HooklineError("bad_request", "expected a form");
  }
  const body = await c.req.parseBody();
  // Repeated fields would come as arrays: none of these forms has any.
  return Object.fromEntries(Object.entries(body).filter(([, val]) => typeof val === "string"));
}

function check<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (!result.success) throw new HooklineError("bad_request", result.issues[0].message);
  return result.output;
}

/**
 * The CSRF field of a plain form (stop, re-run, sign-out).
 * @example const { _csrf } = await csrfForm(c)
 */
export async function csrfForm(c: Context): Promise<{ _csrf: string }> {
  return check(Csrf, await formOf(c));
}

/**
 * The sign-in form.
 * @example const { token } = await signInForm(c)
 */
export async function signInForm(c: Context): Promise<{ token: string; next: string }> {
  const form = await formOf(c);
  const token = typeof form.token === "string" ? form.token : "";
  return { token, next: safeNext(typeof form.next === "string" ? form.next : "") };
}

/**
 * A page of the UI to go to after sign-in; anything else (another site) becomes /ui.
 * @example safeNext("//evil.example") // "/ui"
 */
export function safeNext(next: string): string {
  const page = /^\/ui(?:[/?][^\\\s]*)?$/.test(next) && !next.startsWith("/ui/sign-");
  return page ? next : "/ui";
}

/**
 * The test-request form, checked; its headers parsed from "Name: value" lines.
 * @example const { input, request } = await testForm(c)
 */
export async function testForm(
  c: Context,
): Promise<{ input: TestFormInput; request: Omit<TestRequest, "origin"> }> {
  const input = check(TestForm, await formOf(c));
  const headers: [string, string][] = [];
  for (const [i, raw] of input.headers.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (!line) continue;
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon).trim() : "";
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new HooklineError("bad_request", `headers line ${i + 1}: expected "Name: value"`);
    }
    headers.push([name, line.slice(colon + 1).trim()]);
  }
  return {
    input,
    request: { method: input.method, suffix: input.suffix, headers, body: input.body },
  };
}

const RunForm = v.object({
  _csrf: v.optional(v.string(), ""),
  entrypoint: v.pipe(v.string("choose a function to run"), v.minLength(1, "choose a function")),
  inputs: v.optional(v.pipe(v.string(), v.maxLength(MAX_INPUTS, "inputs: too long")), ""),
  durable: v.optional(v.string()),
});

/**
 * The Run form, checked: the form as typed (to show again) and the manual run it asks for;
 * inputs that are not a JSON object are refused here, before anything starts.
 * @example const { input, fields } = await runForm(c)
 */
export async function runForm(c: Context): Promise<{
  csrf: string;
  input: { entrypoint: string; inputs: string; durable: boolean };
  fields: ManualRunFields;
}> {
  const form = check(RunForm, await formOf(c));
  const input = {
    entrypoint: form.entrypoint,
    inputs: form.inputs,
    durable: Boolean(form.durable),
  };
  let inputs: unknown = {};
  if (form.inputs.trim()) {
    try {
      inputs = JSON.parse(form.inputs);
    } catch (e) {
      throw new HooklineError("bad_request", `inputs: not JSON: ${(e as Error).message}`);
    }
  }
  const fields = v.safeParse(ManualRunFields, { ...input, inputs });
  if (!fields.success) {
    const issue = fields.issues[0];
    const at = issue.path?.[0]?.key === "inputs" ? "inputs: " : "";
    throw new HooklineError("bad_request", `${at}${issue.message}`);
  }
  return { csrf: form._csrf, input, fields: fields.output };
}
