/**
 * A URL in a read-only field (select it without JavaScript) and a copy button: a trigger's
 * webhook URL, a connection's inbound URL.
 * @example <WebhookUrl id="url-hook" name="hook" url="http://127.0.0.1:9980/webhooks/…" />
 */
export function WebhookUrl({
  id,
  url,
  name,
  what = "Webhook URL",
}: {
  id: string;
  url: string;
  name: string;
  what?: string;
}) {
  return (
    <div class="row">
      <label class="sr-only" for={id}>
        {what} of {name}
      </label>
      <input id={id} class="url mono" type="text" readonly value={url} />
      <button
        type="button"
        class="secondary"
        data-copy={id}
        aria-label={`Copy the ${what[0]!.toLowerCase()}${what.slice(1)} of ${name}`}
      >
        Copy
      </button>
    </div>
  );
}
