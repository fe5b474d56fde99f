// Generated from the operations registry by src/operations/sandbox-stubs.ts (npm run stubs): do not edit.
// Each function calls one of sandgate's operations on the host and resolves to its answer; a refused or
// failed call rejects with a ToolError (node_code_mode.cjs). The runner makes them globals of user code.
'use strict';

/**
 * The functions, each sending its call through `call(op, label, caller, usage, options, fixed)`: `options`
 * is the options object the caller passed (checked there), `fixed` the positional arguments.
 */
module.exports = function operationFunctions(call) {
  /** The upstream tools that match the words of `query`, best first, as the search_tools MCP tool finds them: id, server, name, score, and by detail a summary, a TypeScript signature and a Python one; policy says when the tool policy denies a tool or holds its calls for approval. Options: detail, limit, server. Operation codemode.search. */
  function searchTools(query, options) {
    return call('codemode.search', 'search_tools', searchTools, 'searchTools(query, options)', options, { query });
  }
  /** The upstream servers: name, state, transport, tool count, the modules to import, and why a server is not ready. Operation codemode.servers. */
  function listServers(options) {
    return call('codemode.servers', 'list_servers', listServers, 'listServers()', options, {});
  }
  /** Every upstream tool: name (server__tool, for callMCPTool and get_mcp_tool_details), id, server, a one-line summary, and policy when the tool policy denies it or holds its calls for approval. Options: server. Operation codemode.tools. */
  function list_mcp_tools(options) {
    return call('codemode.tools', 'list_mcp_tools', list_mcp_tools, 'list_mcp_tools(options)', options, {});
  }
  /** One upstream tool's whole definition: name (server__tool), id, server, its own name, description, input_schema and (when known) output_schema as JSON Schema, and policy. Operation codemode.tool. */
  function get_mcp_tool_details(name, options) {
    return call('codemode.tool', 'get_mcp_tool_details', get_mcp_tool_details, 'get_mcp_tool_details(name)', options, { name });
  }
  return { searchTools, listServers, list_mcp_tools, get_mcp_tool_details };
};
