"""The stand-in API server's chat presets: Slack, Telegram, Discord and Twilio (their routes;
the table is stand_in_presets.py)."""

import time


def _now():
    return int(time.time())


def _slack_message_routes(api):
    def post_message(request):
        data = request.data
        ts = f"{_now()}.{api.next_id():06d}"
        message = {
            "type": "message",
            "user": "U0STANDIN",
            "bot_id": "B0STANDIN",
            "text": data.get("text", ""),
            "ts": ts,
        }
        if data.get("thread_ts"):
            message["thread_ts"] = data["thread_ts"]
        return {"ok": True, "channel": data.get("channel", ""), "ts": ts, "message": message}

    def update(request):
        data = request.data
        return {
            "ok": True,
            "channel": data.get("channel", ""),
            "ts": data.get("ts", ""),
            "text": data.get("text", ""),
        }

    ok = {"ok": True}
    return [
        ("*", "/api/chat.postMessage", post_message),
        ("*", "/api/chat.postEphemeral", {"ok": True, "message_ts": "1700000000.000001"}),
        ("*", "/api/chat.update", update),
        ("*", "/api/chat.delete", ok),
        ("*", "/api/reactions.add", ok),
        ("*", "/api/conversations.replies", {"ok": True, "messages": [], "has_more": False}),
        ("*", "/api/conversations.history", {"ok": True, "messages": [], "has_more": False}),
        ("*", "/api/views.open", ok),
        ("*", "/api/views.publish", ok),
    ]


def _slack_directory_routes(api):
    def auth(request):
        return {
            "ok": True,
            "url": api.url + "/",
            "team": "Stand-in",
            "user": "stand-in-bot",
            "team_id": "T0STANDIN",
            "user_id": "U0STANDIN",
            "bot_id": "B0STANDIN",
        }

    def user(request):
        uid = request.data.get("user", "U0USER")
        name = f"user-{uid.lower()}"
        profile = {"real_name": name, "display_name": name, "email": f"{name}@example.com"}
        return {
            "ok": True,
            "user": {"id": uid, "name": name, "real_name": name, "is_bot": False, "profile": profile},
        }

    def by_email(request):
        email = request.data.get("email", "someone@example.com")
        profile = {"email": email, "real_name": email.split("@")[0]}
        return {"ok": True, "user": {"id": "U0BYEMAIL", "name": email.split("@")[0], "profile": profile}}

    def conversation(request):
        channel = request.data.get("channel", "C0STANDIN")
        return {
            "ok": True,
            "channel": {"id": channel, "name": f"channel-{channel.lower()}", "is_channel": True},
        }

    def opened(request):
        return {"ok": True, "channel": {"id": "D0STANDIN"}}

    def created(request):
        name = request.data.get("name", "new-channel")
        return {"ok": True, "channel": {"id": f"C{api.next_id():08d}", "name": name, "is_channel": True}}

    return [
        ("*", "/api/auth.test", auth),
        ("*", "/api/conversations.info", conversation),
        ("*", "/api/conversations.open", opened),
        ("*", "/api/conversations.create", created),
        ("*", "/api/conversations.invite", {"ok": True}),
        ("*", "/api/users.info", user),
        ("*", "/api/users.lookupByEmail", by_email),
    ]


def _slack_routes(api):
    return _slack_message_routes(api) + _slack_directory_routes(api)


_TELEGRAM_BOT = {"id": 100000001, "is_bot": True, "first_name": "Stand-in", "username": "stand_in_bot"}


def _telegram_routes(api):
    def send(request):
        data = request.data
        chat_id = data.get("chat_id", 0)
        try:
            chat_id = int(chat_id)
        except (TypeError, ValueError):
            pass
        chat = {"id": chat_id, "type": "private"}
        return {
            "ok": True,
            "result": {
                "message_id": api.next_id(),
                "date": _now(),
                "chat": chat,
                "from": _TELEGRAM_BOT,
                "text": data.get("text", ""),
            },
        }

    info = {"url": "", "has_custom_certificate": False, "pending_update_count": 0}
    return [
        ("*", "/bot{token}/getMe", {"ok": True, "result": _TELEGRAM_BOT}),
        ("*", "/bot{token}/sendMessage", send),
        ("*", "/bot{token}/setWebhook", {"ok": True, "result": True, "description": "Webhook was set"}),
        (
            "*",
            "/bot{token}/deleteWebhook",
            {"ok": True, "result": True, "description": "Webhook was deleted"},
        ),
        ("*", "/bot{token}/getWebhookInfo", {"ok": True, "result": info}),
        ("*", "/bot{token}/answerCallbackQuery", {"ok": True, "result": True}),
    ]


_DISCORD_BOT = {"id": "100000000000000001", "username": "stand-in-bot", "discriminator": "0", "bot": True}


def _discord_routes(api):
    def created(request):
        body = request.json if isinstance(request.json, dict) else {}
        return {
            "id": str(200000000000000000 + api.next_id()),
            "channel_id": request.params["channel"],
            "content": body.get("content", ""),
            "author": _DISCORD_BOT,
            "type": 0,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
        }

    return [
        ("GET", "/api/v10/users/@me", _DISCORD_BOT),
        ("GET", "/api/v10/gateway/bot", {"url": "wss://gateway.discord.gg", "shards": 1}),
        ("POST", "/api/v10/channels/{channel}/messages", created),
        ("GET", "/api/v10/channels/{channel}/messages", []),
    ]


def _twilio_routes(api):
    def created(request):
        data = request.data
        sid = request.params["account"]
        msid = f"SM{api.next_id():032x}"
        return 201, {
            "sid": msid,
            "account_sid": sid,
            "to": data.get("To", ""),
            "from": data.get("From", ""),
            "body": data.get("Body", ""),
            "status": "queued",
            "num_segments": "1",
            "uri": f"/2010-04-01/Accounts/{sid}/Messages/{msid}.json",
        }

    return [
        ("POST", "/2010-04-01/Accounts/{account}/Messages.json", created),
        ("GET", "/2010-04-01/Accounts/{account}/Messages.json", {"messages": [], "page": 0}),
    ]
