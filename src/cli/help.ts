// The `sandgate` command's help: the whole usage for `sandgate --help`, and for
// `sandgate <command> --help` only that command's lines, its options and its exit statuses.

import { describeLanguages } from "../languages/index.js";

const USAGE = `sandgate: run code that AI agents write in Linux sandboxes

Usage:
  sandgate serve [--host H] [--port P] [--tools T] serve MCP (/mcp), the REST API and /docs over HTTP
  sandgate stdio [--tools T]                       serve MCP over stdin/stdout (desktop MCP clients)
                                                   (--tools: full, or codemode for execute_code and search_tools only)
  sandgate exec --language LANG [options] CODE     run CODE in a fresh sandbox
  sandgate exec -f FILE [options]                  run a file (language from its extension)
  echo CODE | sandgate exec --language LANG        run code from standard input
  sandgate analyze --language LANG [--json] CODE   analyse code without running it (also -f FILE, stdin)
  sandgate doctor [--json]                         report which protections are active here
  sandgate audit [--since 1h] [filters] [--json]   show audit rows, newest first (--jsonl: one JSON row per line)
                [--until T --session S --client C --status S --language L --tool T --kind K --min-risk N --limit N --cursor ID]
  sandgate audit verify [--json]                   check the audit log's hash chain (exit 1 naming the first bad row)
  sandgate audit export [filters] > audit.jsonl    write every matching audit row as JSON lines, oldest first
  sandgate tools [--server S] [--json]             connect the upstream MCP servers and list their tools
  sandgate tools --search WORDS [--detail D]       search the tools (detail: name, summary, full)
  sandgate tools --tree | --show PATH              list or print the generated servers/ tree
  sandgate call [OPERATION [--FIELD VALUE]...]     any operation (the list without one; OPERATION --help: its fields),
                [--url URL [--key KEY]]            here or on a running server; prints its output as JSON
  sandgate config --print | --schema               show the effective config (secrets masked) or its JSON Schema
  sandgate packages sync [--apt] [--json]          install python.packages and node.packages for sandboxes
                [--find-links DIR]... [--no-index]   (pip may install from DIR; --apt: Debian's python3-* as root)
  sandgate packages list [--json]                  show the installed package sets and whether they match the config
  sandgate pii [--types K,K] [--json] < FILE       replace personal data in standard input with tokens ([EMAIL_1])
                                                   (--json: {text, entities}; --types: kinds instead of pii.types)
  sandgate --version

`;

const CONFIG_NOTE = `Every command takes --config FILE (default: $SANDGATE_CONFIG, else ./sandgate.json if present).

`;

const EXEC_OPTIONS = `exec options:
  -l, --language LANG   ${describeLanguages()}
  -f, --file FILE       read the code from FILE
  -t, --timeout SECONDS wall-clock limit (default: SANDGATE_DEFAULT_TIMEOUT, at most MAX_EXECUTION_TIME)
  -m, --memory MB       memory limit (maximum: MAX_MEMORY_MB)
      --flavor NAME     small, medium or large
  -e, --env NAME=VALUE  an environment variable for the code (repeatable); secret-looking values are masked
      --json            print the whole result object as JSON
      --images DIR      save the images the code returns (plots, sandgate.show) as files in DIR

`;

const EXIT_NOTES = `Exit status of exec: the program's own (0 on success), 124 timeout, 125 output flood,
137 memory limit or killed; 2 when the security policy blocks the code (POLICY_BLOCKED).
Exit status of analyze: 0 when the policy allows or warns, 3 when it would block or ask for approval.
Bad input (an unknown option or language, a missing file, no code) exits 2 with one line on stderr.
`;

/** The whole usage. */
export const HELP = USAGE + CONFIG_NOTE + EXEC_OPTIONS + EXIT_NOTES;

/** What a command's own help adds below its usage lines. */
const EXTRA: Record<string, string> = {
  exec: `\n${EXEC_OPTIONS}${EXIT_NOTES.split("\n").filter((l) => !l.startsWith("Exit status of analyze")).join("\n")}`,
  analyze: `\n${EXIT_NOTES.split("\n").filter((l) => l.startsWith("Exit status of analyze")).join("\n")}\n`,
};

/**
 * The usage lines of `command` (with their continuation lines), the --config note and what the
 * command adds; undefined for a command the usage does not name.
 */
export function commandHelp(command: string): string | undefined {
  const picked: string[] = [];
  let inCommand = false;
  for (const line of USAGE.split("\n")) {
    const usage = /^ {2}(?:echo [^|]*\| )?sandgate (\S+)/.exec(line);
    if (usage) inCommand = usage[1] === command;
    else if (!/^ {5,}\S/.test(line)) inCommand = false;
    if (inCommand) picked.push(line);
  }
  if (picked.length === 0) return undefined;
  return `Usage:\n${picked.join("\n")}\n\n${CONFIG_NOTE.trimEnd()}\n${EXTRA[command] ?? ""}`;
}
