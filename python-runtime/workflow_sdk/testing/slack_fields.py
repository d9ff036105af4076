"""A Slack event's data as AutoKitteh hands it, for `testing.slack_event`: every field of the Go
struct AutoKitteh parses the event type into, nested structs included, with its zero value where
Slack left it out (`""`, `0`, `False`, `[]`; `None` for a struct held by pointer, whose own fields
are filled when it is there). What Slack sent beyond those fields is kept. The service does the
same (src/connections/slack-fields.ts); test/connection-shapes.test.ts checks they agree."""

LIST = "list"


def _ptr(shape):
    return ("ptr", shape)


def _items(shape):
    return ("list", shape)


def _edited():
    return {"user": "", "ts": ""}


def _bot_profile():
    return {"id": "", "app_id": "", "team_id": "", "name": "", "deleted": False, "updated": 0}


def _reaction():
    return {"name": "", "users": LIST, "count": 0}


def _message():
    """AutoKitteh's chat.Message: a `message` event, and the message inside an edit or a broadcast."""
    return {
        **dict.fromkeys(("type", "subtype", "text", "user", "app_id", "bot_id", "parent_user_id"), ""),
        **dict.fromkeys(("team", "channel", "channel_type", "ts", "event_ts", "permalink"), ""),
        **dict.fromkeys(("latest_reply", "last_read", "inviter", "name", "old_name", "purpose"), ""),
        **dict.fromkeys(("topic", "deleted_ts", "thread_ts", "client_msg_id"), ""),
        **dict.fromkeys(("reply_count", "reply_users_count", "unread_count", "unread_count_display"), 0),
        **dict.fromkeys(("hidden", "is_locked", "subscribed", "is_starred"), False),
        **dict.fromkeys(("blocks", "reply_users", "pinned_to"), LIST),
        "edited": _ptr(_edited),
        "bot_profile": _ptr(_bot_profile),
        "reactions": _items(_reaction),
        "message": _ptr(_message),
        "previous_message": _ptr(_message),
        "root": _ptr(_message),
    }


def _app_mention():
    fields = ("type", "user", "team", "channel", "ts", "event_ts", "thread_ts", "text", "client_msg_id")
    return {**dict.fromkeys(fields, ""), "blocks": LIST}


def _item():
    return dict.fromkeys(("type", "channel", "ts", "file", "file_comment"), "")


def _reaction_event():
    return {**dict.fromkeys(("type", "user", "reaction", "item_user", "event_ts"), ""), "item": _ptr(_item)}


def _member_event():
    fields = ("type", "channel", "channel_type", "user", "inviter", "event_ts", "team", "enterprise")
    return {**dict.fromkeys(fields, ""), "is_moved": False}


def _topic():
    return {"value": "", "creator": "", "last_set": 0}


def _channel():
    flags = (
        "is_member is_read_only is_thread_only is_archived is_channel is_frozen is_general is_group is_im "
        "is_mpim is_open is_private is_shared is_org_shared is_ext_shared is_pending_ext_shared"
    ).split()
    return {
        **dict.fromkeys(("id", "name", "name_normalized", "creator", "user", "last_read"), ""),
        **dict.fromkeys(("context_team_id", "locale"), ""),
        **dict.fromkeys(("previous_names", "shared_team_ids", "pending_connected_team_ids"), LIST),
        **dict.fromkeys(flags, False),
        **dict.fromkeys(("unread_count", "unread_count_display", "created", "updated", "unlinked"), 0),
        **dict.fromkeys(("num_members", "priority"), 0),
        "topic": _ptr(_topic),
        "purpose": _ptr(_topic),
        "latest": _ptr(_message),
    }


def _channel_created():
    return {"type": "", "channel": _ptr(_channel), "event_ts": ""}


_MEMBER = (
    "channel_archive channel_left channel_unarchive group_archive group_close group_deleted group_left "
    "group_open group_unarchive member_joined_channel member_left_channel"
).split()

SHAPES = {
    "message": _message,
    "app_mention": _app_mention,
    "reaction_added": _reaction_event,
    "reaction_removed": _reaction_event,
    "channel_created": _channel_created,
    "channel_rename": _channel_created,
    "group_rename": _channel_created,
    **dict.fromkeys(_MEMBER, _member_event),
}


def _fill(value, shape):
    out = dict(value)
    for name, field in shape().items():
        have = out.get(name)
        if field == LIST:
            out[name] = [] if have is None else have
        elif not isinstance(field, tuple):
            out[name] = field if have is None else have
        elif field[0] == "ptr":
            out[name] = _fill(have, field[1]) if isinstance(have, dict) else have
        elif isinstance(have, list):
            out[name] = [_fill(x, field[1]) if isinstance(x, dict) else x for x in have]
        else:
            out[name] = [] if have is None else have
    return out


def slack_event_data(event):
    """`event` (a dict) with AutoKitteh's zero values filled in (see the module's docstring), and
    `subtype`, `thread_ts` and `bot_id` as `""` whatever its type."""
    shape = SHAPES.get(event.get("type"))
    data = _fill(event, shape) if shape else dict(event)
    return {"subtype": "", "thread_ts": "", "bot_id": "", **data}
