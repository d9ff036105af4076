"""Connection events as a handler gets them: GitHub, Slack, HTTP, Jira, Confluence and Telegram
connections.

The shapes are the service's (docs/connection-clients.md, "Testing"): a GitHub delivery's
`event_type` is its `X-GitHub-Event` header and `data` its JSON payload, plus `slash_commands`;
a Slack Events API delivery's `event_type` is the inner `event.type` and `data` the inner event
(`subtype`, `thread_ts`, `bot_id` read as `""` when absent); a Slack slash command is
`slash_command` with the form's fields; an interaction is `interaction` with its payload; an
HTTP connection's request is a webhook event (`testing.event`) under `/inbound/<id>`.

>>> e = github_event("pull_request", {"action": "opened", "pull_request": {"number": 7, "body": "/lgtm now"}})
>>> e.event_type, e.data.action, e.data.slash_commands[0].name
('pull_request', 'opened', 'lgtm')
>>> m = slack_event({"type": "app_mention", "text": "<@U1> hi", "ts": "1.2"})
>>> m.event_type, m.data.thread_ts, m.data.bot_id
('app_mention', '', '')
"""

import copy
from collections.abc import Mapping

from ..event import event_from_wire
from .events import event as webhook_event
from .events import new_id
from .slack_fields import slack_event_data

__all__ = [
    "INBOUND_ID",
    "confluence_event",
    "discord_event",
    "github_event",
    "github_events",
    "http_event",
    "jira_event",
    "slack_event",
    "slack_interaction",
    "slack_slash_command",
    "slash_commands",
    "telegram_event",
]

# Where each GitHub event type keeps the Markdown that may hold slash commands (AutoKitteh's list).
_MARKDOWN = {
    "issue_comment": "comment",
    "pull_request_review_comment": "comment",
    "pull_request_review": "review",
    "pull_request": "pull_request",
    "issues": "issue",
    "discussion": "discussion",
    "discussion_comment": "comment",
    "commit_comment": "comment",
}
INBOUND_ID = "0000000000000000000000conn"  # 26 characters, like a real inbound id


def _wire(event_type, data, event_id, session_id):
    wire = {
        "event_id": event_id or new_id("evt"),
        "session_id": session_id,
        "event_type": event_type,
        "data": data,
    }
    return event_from_wire(wire)


def _mapping(value, what):
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a dict (the JSON payload), got {type(value).__name__}")
    return copy.deepcopy(dict(value))


_MAX_SLASH_COMMANDS = 16  # AutoKitteh's bound: later command lines are left


def slash_commands(markdown):
    """The slash commands in Markdown: each line that starts with `/word`, outside code fences,
    the first 16.

    >>> slash_commands("LGTM\\n/deploy prod now\\n```\\n/not-this\\n```\\n / nor this")
    [{'name': 'deploy', 'args': ['prod', 'now'], 'raw': '/deploy prod now'}]
    """
    commands, fenced = [], False
    for line in (markdown or "").split("\n"):
        if line.strip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not line.startswith("/"):
            continue
        line = line.rstrip()
        parts = line.split()
        if parts and parts[0] != "/":
            commands.append({"name": parts[0][1:], "args": parts[1:], "raw": line})
        if len(commands) == _MAX_SLASH_COMMANDS:
            break
    return commands


def _github_data(event_type, payload):
    data = _mapping(payload, "github_event: payload")
    holder = _MARKDOWN.get(event_type)
    if holder is not None:
        body = (data.get(holder) or {}).get("body") if isinstance(data.get(holder), Mapping) else None
        data["slash_commands"] = slash_commands(body if isinstance(body, str) else "")
    return data


def github_event(event_type, payload, *, event_id=None, session_id=None):
    """One GitHub delivery: `event_type` is the `X-GitHub-Event` value, `data` the payload.

    For issue, pull request, review, discussion and commit comments (and their bodies), `data`
    also holds `slash_commands`: one `{name, args, raw}` per command line, `[]` when none.
    """
    if not isinstance(event_type, str) or not event_type:
        raise ValueError("github_event: event_type is the X-GitHub-Event header's value, e.g. 'pull_request'")
    return _wire(event_type, _github_data(event_type, payload), event_id, session_id)


def github_events(event_type, payload):
    """Every event one GitHub delivery makes: the delivery's, then one `slash_command` event per
    command line, whose `data` is AutoKitteh's `{command: {name, args, raw}, actual_data: the
    delivery's data, actual_event_type: its event type}`."""
    first = github_event(event_type, payload)
    data = _github_data(event_type, payload)
    more = [
        _wire(
            "slash_command", {"command": c, "actual_data": data, "actual_event_type": event_type}, None, None
        )
        for c in data.get("slash_commands", [])
    ]
    return [first, *more]


def slack_event(inner, *, event_id=None, session_id=None):
    """A Slack Events API delivery: `event_type` = the inner event's `type`; `data` = that inner
    event as AutoKitteh hands it: every field of its type's Go struct that Slack left out with its
    zero value (`""`, `0`, `False`, `[]`, `None`), nested ones included, and `subtype`, `thread_ts`
    and `bot_id` as `""` (slack_fields.py)."""
    data = _mapping(inner, "slack_event: the inner event")
    if not isinstance(data.get("type"), str) or not data["type"]:
        raise ValueError("slack_event: the inner event needs its 'type' (e.g. 'app_mention', 'message')")
    data = slack_event_data(data)
    return _wire(data["type"], data, event_id, session_id)


def slack_slash_command(command, text="", *, event_id=None, session_id=None, **fields):
    """A Slack slash command: `event_type` `slash_command`, `data` the form's fields (strings),
    e.g. `slack_slash_command("/deploy", "prod", user_id="U1", channel_id="C1")`."""
    data = {"command": command, "text": text, **fields}
    for name, value in data.items():
        if not isinstance(value, str):
            raise TypeError(
                f"slack_slash_command: {name} must be a str (a form field), got {type(value).__name__}"
            )
    return _wire("slash_command", data, event_id, session_id)


def slack_interaction(payload, *, event_id=None, session_id=None):
    """A Slack interaction (a button, a modal): `event_type` `interaction`, `data` the payload."""
    return _wire("interaction", _mapping(payload, "slack_interaction: payload"), event_id, session_id)


def jira_event(payload, *, event_id=None, session_id=None):
    """A Jira webhook delivery: `event_type` its `webhookEvent` without the `jira:` prefix
    (`jira:issue_created` is `issue_created`, `comment_created` stays), `data` the payload.

    >>> e = jira_event({"webhookEvent": "jira:issue_created", "issue": {"key": "OPS-7"}})
    >>> e.event_type, e.data.issue.key
    ('issue_created', 'OPS-7')
    """
    data = _mapping(payload, "jira_event: payload")
    kind = data.get("webhookEvent")
    if not isinstance(kind, str) or not kind:
        raise ValueError("jira_event: the payload needs its 'webhookEvent' (e.g. 'jira:issue_created')")
    return _wire(kind.removeprefix("jira:"), data, event_id, session_id)


# The payload keys that name a Confluence event's entity, in AutoKitteh's order.
_CONFLUENCE_ENTITIES = (
    "attachment blog blueprint_page comment content group label page relation space".split()
)
CONFLUENCE_CATEGORIES = "added archived copied created deleted moved removed trashed updated".split()


def confluence_event(category, payload, *, event_id=None, session_id=None):
    """A delivery of the Confluence webhook of `category` (`created`, `updated`, …):
    `event_type` `<entity>_<category>`, the entity the payload holds, `data` the payload.

    >>> e = confluence_event("created", {"page": {"id": 7, "title": "Runbook"}})
    >>> e.event_type, e.data.page.title
    ('page_created', 'Runbook')
    """
    data = _mapping(payload, "confluence_event: payload")
    if category not in CONFLUENCE_CATEGORIES:
        raise ValueError(f"confluence_event: category must be one of {', '.join(CONFLUENCE_CATEGORIES)}")
    entity = next((e for e in _CONFLUENCE_ENTITIES if e in data), None)
    if entity is None and "attachments" in data:
        entity = "attachment"
    if entity is None and "relationData" in data:
        entity = "relation"
    if entity is None and isinstance(data.get("type"), str) and "content" in data["type"]:
        entity = "content"
    if entity is None:
        raise ValueError("confluence_event: the payload names no Confluence entity (e.g. 'page')")
    return _wire(f"{entity}_{category}", data, event_id, session_id)


# The update fields a Telegram event type is taken from, in AutoKitteh's order.
_TELEGRAM_TYPES = """message callback_query edited_message inline_query chosen_inline_result
    channel_post edited_channel_post shipping_query pre_checkout_query poll poll_answer
    my_chat_member chat_member chat_join_request message_reaction message_reaction_count""".split()


def telegram_event(update, *, event_id=None, session_id=None):
    """A Telegram update: `event_type` its first update field in AutoKitteh's order (`message`,
    `callback_query`, …; none: `unknown telegram event`), `data` the update.

    >>> e = telegram_event({"update_id": 1, "message": {"text": "hi"}})
    >>> e.event_type, e.data.message.text
    ('message', 'hi')
    """
    data = _mapping(update, "telegram_event: update")
    kind = next((t for t in _TELEGRAM_TYPES if t in data), "unknown telegram event")
    return _wire(kind, data, event_id, session_id)


def http_event(method="POST", path="", *args, inbound_id=INBOUND_ID, **kwargs):
    """A request to an HTTP connection: `event_type` the lower-case method, `data` a webhook
    trigger's, built by `testing.event` with the same arguments (`headers`, `body`, `json`,
    `query`, `event_id`, `session_id`) but under the connection's inbound URL, as the service
    builds it: `path` is below `/inbound/<inbound_id>` (`data.url.path_suffix`, without its
    leading slash), or a full `/inbound/<id>/…`.

    >>> e = http_event("POST", "/hooks/a?x=1", json={"n": 1})
    >>> e.event_type, e.data.url.path_suffix, e.data.raw_url
    ('post', 'hooks/a', '/inbound/0000000000000000000000conn/hooks/a?x=1')
    """
    return webhook_event(method, path, *args, webhook_id=inbound_id, _root="/inbound", **kwargs)


# The gateway dispatches the service forwards (AutoKitteh's nine), by Discord's name.
_DISCORD_TYPES = (
    "MESSAGE_CREATE MESSAGE_UPDATE MESSAGE_DELETE MESSAGE_REACTION_ADD MESSAGE_REACTION_REMOVE "
    "PRESENCE_UPDATE THREAD_CREATE THREAD_UPDATE THREAD_DELETE"
).split()


def discord_event(dispatch, data, *, event_id=None, session_id=None):
    """A Discord gateway dispatch as the service delivers it: `event_type` AutoKitteh's name for
    it (`MESSAGE_CREATE` or `message_create` → `message_create`), `data` the dispatch's data.

    >>> e = discord_event("MESSAGE_CREATE", {"content": "hi", "author": {"id": "7"}})
    >>> e.event_type, e.data.content
    ('message_create', 'hi')
    """
    kind = str(dispatch).upper()
    if kind not in _DISCORD_TYPES:
        raise ValueError(
            f"discord_event: {dispatch!r} is not a forwarded dispatch ({', '.join(_DISCORD_TYPES)})"
        )
    return _wire(kind.lower(), _mapping(data, "discord_event: data"), event_id, session_id)
