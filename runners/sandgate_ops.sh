# Generated from the operations registry by src/operations/sandbox-stubs.ts (npm run stubs): do not edit.
# Sandgate's operations as flags of sandgate-tool, which sources this file: `sandgate-tool --FLAG WORDS... [--OPTION VALUE]...`
# sends one call of the operation (its id) with WORDS as the positional fields and each OPTION's VALUE as
# JSON of its kind (number, boolean, string; json: the text as given).
declare -A sandgate_op_id=([search]='codemode.search' [servers]='codemode.servers' [list-tools]='codemode.tools' [tool-details]='codemode.tool')
declare -A sandgate_op_label=([search]='search_tools' [servers]='list_servers' [list-tools]='list_mcp_tools' [tool-details]='get_mcp_tool_details')
declare -A sandgate_op_positional=([search]='query' [servers]='' [list-tools]='' [tool-details]='name')
declare -A sandgate_op_options=([search]='detail:string limit:number server:string' [servers]='' [list-tools]='server:string' [tool-details]='')
declare -A sandgate_op_usage=([search]='QUERY [--detail DETAIL] [--limit LIMIT] [--server SERVER]' [servers]='' [list-tools]='[--server SERVER]' [tool-details]='NAME')
declare -A sandgate_op_doc=([search]='The upstream tools that match the words of `query`, best first, as the search_tools MCP tool finds them: id, server, name, score, and by detail a summary, a TypeScript signature and a Python one; policy says when the tool policy denies a tool or holds its calls for approval.' [servers]='The upstream servers: name, state, transport, tool count, the modules to import, and why a server is not ready.' [list-tools]='Every upstream tool: name (server__tool, for callMCPTool and get_mcp_tool_details), id, server, a one-line summary, and policy when the tool policy denies it or holds its calls for approval.' [tool-details]='One upstream tool'\''s whole definition: name (server__tool), id, server, its own name, description, input_schema and (when known) output_schema as JSON Schema, and policy.')
sandgate_op_flags=(search servers list-tools tool-details)
