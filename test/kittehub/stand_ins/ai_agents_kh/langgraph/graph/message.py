"""Stand-in `langgraph.graph.message.add_messages`: appends messages (dicts become messages),
a message with an id already in the list replacing that one."""

from langchain_core.messages import convert_to_messages, new_id


def add_messages(left, right):
    left = convert_to_messages(left or [])
    right = convert_to_messages(right or [])
    for m in left + right:
        if m.id is None:
            m.id = new_id()
    merged = list(left)
    where = {m.id: i for i, m in enumerate(merged)}
    for m in right:
        if m.id in where:
            merged[where[m.id]] = m
        else:
            where[m.id] = len(merged)
            merged.append(m)
    return merged
