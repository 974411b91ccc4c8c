"""The MCP edge (docs/mcp.md): `git agy-state mcp` serves the tool's commands as typed MCP tools
over stdio, beside the click edge in cli/. tools.py is the tool table (each tool calls the use
case its command calls and returns that command's `--json` object), ops_schema.py the JSON
schema of a patch's ops (from document/patch_ops.py), server.py the SDK server around them. Only
server.py imports the SDK (the `mcp` extra): nothing else in the tool pays for it.
"""
