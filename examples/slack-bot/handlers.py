"""The bot is mentioned: it answers in the mention's thread."""

import re

from autokitteh.slack import slack_client

MENTION = re.compile(r"<@[A-Z0-9]+>\s*")


def on_app_mention(event):
    if event.data.bot_id:  # another bot (the trigger's filter drops these already)
        return
    question = MENTION.sub("", event.data.text).strip()
    slack_client("slack_conn").chat_postMessage(
        channel=event.data.channel,
        thread_ts=event.data.thread_ts or event.data.ts,  # "" when the mention is not in a thread
        text=answer(event.data.user, question),
    )


def answer(user, question):
    if not question:
        return f"Hi <@{user}>! Mention me with a question."
    return f"<@{user}> asked: {question!r}. I'll look into it."
