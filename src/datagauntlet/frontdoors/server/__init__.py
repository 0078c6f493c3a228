"""`datagauntlet server`: many episodes of any env at once, over HTTP, WebSocket, MCP and
OpenEnv's environment API."""
