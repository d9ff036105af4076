"""Connection events as a handler gets them: GitHub, Slack and HTTP connections.

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

__all__ = [
    "INBOUND_ID",
    "github_event",
    "github_events",
    "http_event",
    "slack_event",
    "slack_interaction",
    "slack_slash_command",
    "slash_commands",
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
_SLACK_DEFAULTS = ("subtype", "thread_ts", "bot_id")
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


def slash_commands(markdown):
    """The slash commands in Markdown: each line that starts with `/word`, outside code fences.

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
    command line, whose `data` is the delivery's plus `slash_command` ({name, args, raw})."""
    first = github_event(event_type, payload)
    data = _github_data(event_type, payload)
    more = [
        _wire("slash_command", {**data, "slash_command": c}, None, None)
        for c in data.get("slash_commands", [])
    ]
    return [first, *more]


def slack_event(inner, *, event_id=None, session_id=None):
    """A Slack Events API delivery: `event_type` = the inner event's `type`; `data` = that inner
    event, with `subtype`, `thread_ts` and `bot_id` as `""` when Slack left them out."""
    data = _mapping(inner, "slack_event: the inner event")
    if not isinstance(data.get("type"), str) or not data["type"]:
        raise ValueError("slack_event: the inner event needs its 'type' (e.g. 'app_mention', 'message')")
    for name in _SLACK_DEFAULTS:
        data.setdefault(name, "")
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


def http_event(method="POST", path="", *args, inbound_id=INBOUND_ID, **kwargs):
    """A request to an HTTP connection: `event_type` the lower-case method, `data` a webhook
    trigger's, built by `testing.event` with the same arguments (`headers`, `body`, `json`,
    `query`, `event_id`, `session_id`) but under the connection's inbound URL, as the service
    builds it: `path` is below `/inbound/<inbound_id>` (`data.url.path_suffix`), or a full
    `/inbound/<id>/…`.

    >>> e = http_event("POST", "/hooks/a?x=1", json={"n": 1})
    >>> e.event_type, e.data.url.path_suffix, e.data.raw_url
    ('post', '/hooks/a', '/inbound/0000000000000000000000conn/hooks/a?x=1')
    """
    return webhook_event(method, path, *args, webhook_id=inbound_id, _root="/inbound", **kwargs)
