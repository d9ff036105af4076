import * as v from "valibot";

/** valibot pieces for JSON that crosses a boundary, where its built-ins fall short. */

/**
 * Padded standard base64, as valibot's `base64()` accepts it, checked in linear time: that
 * action's regex repeats a group, and V8 overflows its stack on a few MB of input (a RangeError,
 * answered 500), where deploy files and session outcomes may be 16 MiB and 8 MiB.
 * @example isBase64("aGk=") // true
 */
export function isBase64(text: string): boolean {
  return text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);
}

/** A base64 string; the JSON Schema made from it says `contentEncoding: base64`. */
export const Base64 = v.pipe(
  v.string(),
  v.check(isBase64, "Invalid Base64"),
  v.metadata({ contentEncoding: "base64" }),
);

/**
 * Not a JSON array: valibot's `object()` and `record()` take arrays too (`["a"]` reads as
 * `{"0": "a"}`), so this is checked before them.
 * @example v.pipe(v.unknown(), v.check(notArray, "expected an object"), v.record(v.string(), v.string()))
 */
export const notArray = (value: unknown): boolean => !Array.isArray(value);

/** A JSON object whose members are all strings (HTTP headers). */
export const StringMap = v.pipe(
  v.unknown(),
  v.check(notArray, "expected an object"),
  v.record(v.string(), v.string()),
);

/**
 * An HTTP header name: an RFC 9110 token (no space, colon, CR or LF).
 * @example isHeaderName("X-Hub-Signature-256") // true
 */
export const isHeaderName = (name: string): boolean => /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name);

/**
 * An HTTP header value: visible characters, spaces and tabs, Latin-1; never CR, LF or NUL.
 * @example isHeaderValue("a\r\nX-Injected: 1") // false
 */
export const isHeaderValue = (value: string): boolean => /^[\t\x20-\x7e\x80-\xff]*$/.test(value);

/**
 * Response headers from a session: checked here too, not only by the SDK, so that a malformed
 * header can never reach the wire (a message that fails ends the session in error).
 */
export const HeaderMap = v.pipe(
  v.unknown(),
  v.check(notArray, "expected an object"),
  v.record(
    v.pipe(v.string(), v.check(isHeaderName, "header name is not an HTTP token")),
    v.pipe(
      v.string(),
      v.check(isHeaderValue, "header value holds CR, LF or another control character"),
    ),
  ),
);
