import * as v from "valibot";
import type { RetryPolicy } from "../model/records.ts";
import { strict } from "./fields.ts";

// A trigger's `retry:`: the retry policy of its sessions' activities that have none of their
// own, with the keys and bounds of Python's `workflow_sdk.RetryPolicy` (python-runtime/
// workflow_sdk/retry.py) and its defaults for the keys left out.

/** The most attempts a policy may make, and the longest wait (a durable timer's bound). */
export const MAX_ATTEMPTS = 1000;
export const MAX_INTERVAL_S = 366 * 24 * 3600;

const seconds = (key: string, min: number, max: number) =>
  v.pipe(
    v.number(),
    v.check((n: number) => Number.isFinite(n), `${key} must be a number`),
    v.minValue(min, `${key} must be from ${min} to ${max}`),
    v.maxValue(max, `${key} must be from ${min} to ${max}`),
  );

/** A Python exception's name, plain (`PermissionError`) or dotted (`requests.exceptions.HTTPError`). */
const exceptionName = v.pipe(
  v.string(),
  v.regex(
    /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/,
    (i) =>
      `"${i.input}" is not an exception's name: write its class, as PermissionError or requests.exceptions.HTTPError`,
  ),
);

/**
 * `retry:` of a trigger, checked key by key (file:line errors name the key) and filled in with
 * RetryPolicy's defaults: 3 attempts, 1 s, ×2, at most 60 s, no error left out.
 * @example v.parse(retry, { max_attempts: 5 }) // { max_attempts: 5, initial_interval: 1, backoff: 2, max_interval: 60, non_retryable: [] }
 */
export const retry = v.pipe(
  strict({
    max_attempts: v.optional(
      v.pipe(
        v.number(),
        v.integer("max_attempts must be a whole number"),
        v.minValue(1, `max_attempts must be from 1 to ${MAX_ATTEMPTS}`),
        v.maxValue(MAX_ATTEMPTS, `max_attempts must be from 1 to ${MAX_ATTEMPTS}`),
      ),
    ),
    initial_interval: v.optional(seconds("initial_interval", 0, MAX_INTERVAL_S)),
    backoff: v.optional(seconds("backoff", 1, 100)),
    max_interval: v.optional(seconds("max_interval", 0, MAX_INTERVAL_S)),
    non_retryable: v.optional(v.array(exceptionName)),
  }),
  v.forward(
    v.partialCheck(
      [["initial_interval"], ["max_interval"]],
      (r) => r.max_interval === undefined || r.max_interval >= (r.initial_interval ?? 1),
      "max_interval must not be below initial_interval",
    ),
    ["max_interval"],
  ),
  v.transform(
    (r): RetryPolicy => ({
      max_attempts: r.max_attempts ?? 3,
      initial_interval: r.initial_interval ?? 1,
      backoff: r.backoff ?? 2,
      max_interval: r.max_interval ?? Math.max(60, r.initial_interval ?? 1),
      non_retryable: r.non_retryable ?? [],
    }),
  ),
);
