/** An id of ours (`ses_…`, `prj_…`, …): 26 base32 characters after the prefix. */
const ID = /^(prj|trg|bld|dep|env|ses|evt)_[a-z0-9]{26}$/;

/**
 * A request path as a route template, for span names and attributes: ids become `:id`, a
 * webhook's id and suffix (a secret capability, and unbounded) become `/webhooks/:id`, anything
 * outside the service's own prefixes is null (unbounded).
 * @example requestRoute("/api/v1/sessions/ses_01jd…") // "/api/v1/sessions/:id"
 */
export function requestRoute(path: string): string | null {
  if (path === "/webhooks" || path.startsWith("/webhooks/")) return "/webhooks/:id";
  if (path.startsWith("/store/")) return "/store/:path";
  if (
    path === "/healthz" ||
    path === "/readyz" ||
    path === "/metrics" ||
    path.startsWith("/api/") ||
    path.startsWith("/ui")
  ) {
    const parts = path.split("/").map((p) => (ID.test(p) ? ":id" : p));
    // Names under a project (vars, store keys) are user text: only the first levels are kept.
    return parts.slice(0, 6).join("/");
  }
  return null;
}
