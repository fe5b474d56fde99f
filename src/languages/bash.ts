// Bash: the language spec and its runner, a bash whose main loop (runners/bash_lib.sh) keeps the
// shell's state between calls and reaches host tools through sandgate-tool on its own pipe.

import type { LanguageSpec, RunnerSpec } from "./spec.js";

export const BASH_RUNNER: RunnerSpec = {
  kind: "bash",
  interpreter: "bash",
  files: ["bash_lib.sh", "bin/sandgate-tool", "sandgate_ops.sh"],
  // The main loop's functions are in bash_lib.sh. It runs as `bash -c` with $0 = main.sh and the
  // eval on line 1, so messages and $LINENO match the user's own lines.
  command: ({ interpreter, entry }) => [
    interpreter,
    "--noprofile",
    "--norc",
    "-c",
    `builtin . ${entry}; while __sg_next; do __sg_busy=1; eval "$__sg_code" </dev/null 3<&- 4>&-; __sg_done "$?"; done; __sg_busy=0`,
    "main.sh",
  ],
  warmUp: ":",
  channel: "bash-pipe",
  limitAddressSpace: true,
  abortMeansOutOfMemory: false,
  interruptible: false,
};

export const BASH: LanguageSpec = {
  name: "bash",
  title: "Bash",
  aliases: ["sh", "shell"],
  extensions: [".sh", ".bash"],
  runner: "bash",
  returnsValue: false,
  filename: "main.sh",
  doctorProbe: { code: "echo $((1+1))", expect: "2\n", from: "stdout" },
  upstreamCall: {
    call: "sandgate-tool server tool '{...}'",
    hint: "it prints the result as JSON, ready for jq",
    search: "sandgate-tool --search 'words' --detail full --limit 3",
    servers: "sandgate-tool --servers",
    returnContent: "sandgate-tool --return result.json",
  },
};
