# Generated from the operations registry by src/operations/sandbox-stubs.ts (npm run stubs): do not edit.
# Each function calls one of sandgate's operations on the host and returns its answer; a refused or failed
# call raises ToolError (sandgate.py). The runner puts them beside call_mcp_tool in user code's globals.

import sandgate as _sandgate

__all__ = ["search_tools", "list_servers", "list_mcp_tools", "get_mcp_tool_details"]


async def search_tools(query, detail=None, limit=None, server=None):
    """The upstream tools that match the words of `query`, best first, as the search_tools MCP tool finds them: id, server, name, score, and by detail a summary, a TypeScript signature and a Python one; policy says when the tool policy denies a tool or holds its calls for approval. Options: detail, limit, server (None leaves one out). Operation codemode.search."""
    return await _sandgate._call_operation("codemode.search", "search_tools", {"query": query, "detail": detail, "limit": limit, "server": server})


async def list_servers():
    """The upstream servers: name, state, transport, tool count, the modules to import, and why a server is not ready. Operation codemode.servers."""
    return await _sandgate._call_operation("codemode.servers", "list_servers", {})


async def list_mcp_tools(server=None):
    """Every upstream tool: name (server__tool, for callMCPTool and get_mcp_tool_details), id, server, a one-line summary, and policy when the tool policy denies it or holds its calls for approval. Options: server (None leaves one out). Operation codemode.tools."""
    return await _sandgate._call_operation("codemode.tools", "list_mcp_tools", {"server": server})


async def get_mcp_tool_details(name):
    """One upstream tool's whole definition: name (server__tool), id, server, its own name, description, input_schema and (when known) output_schema as JSON Schema, and policy. Operation codemode.tool."""
    return await _sandgate._call_operation("codemode.tool", "get_mcp_tool_details", {"name": name})
