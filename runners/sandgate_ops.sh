# Generated from the operations registry by src/operations/sandbox-stubs.ts (npm run stubs): do not edit.
# Sandgate's operations as flags of sandgate-tool, which sources this file: `sandgate-tool --FLAG WORDS... [--OPTION VALUE]...`
# sends one call of the operation (its id) with WORDS as the positional fields and each OPTION's VALUE as
# JSON of its kind (number, boolean, string; json: the text as given).
declare -A sandgate_op_id=([search]='codemode.search' [servers]='codemode.servers')
declare -A sandgate_op_label=([search]='search_tools' [servers]='list_servers')
declare -A sandgate_op_positional=([search]='query' [servers]='')
declare -A sandgate_op_options=([search]='detail:string limit:number server:string' [servers]='')
declare -A sandgate_op_usage=([search]='QUERY [--detail DETAIL] [--limit LIMIT] [--server SERVER]' [servers]='')
declare -A sandgate_op_doc=([search]='The upstream tools that match the words of `query`, best first, as the search_tools MCP tool finds them: id, server, name, score, and by detail a summary, a TypeScript signature and a Python one; policy says when the tool policy denies a tool or holds its calls for approval.' [servers]='The upstream servers: name, state, transport, tool count, the modules to import, and why a server is not ready.')
sandgate_op_flags=(search servers)
