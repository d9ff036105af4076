"""Kittehub stand-in for langgraph (tests only, never shipped; this machine's index lacks it):
`graph.StateGraph` (nodes, edges, conditional edges, reducers from `Annotated` state keys),
`graph.message.add_messages`, `prebuilt.ToolNode` and `prebuilt.tools_condition`."""
