// execute_command: a whole shell line run by the session's bash runner in a subshell, so a
// `cd` or `exit` inside it cannot change or end the session's own shell.

/** Quotes `text` as one bash word. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Bash source that runs `command` in `workingDirectory` (relative paths are under /workspace). */
export function commandToBash(command: string, workingDirectory?: string): string {
  const lines = ["("];
  if (workingDirectory !== undefined && workingDirectory !== "") {
    const dir = workingDirectory.startsWith("/") ? workingDirectory : `/workspace/${workingDirectory}`;
    lines.push(`cd -- ${shellQuote(dir)} || exit 1`);
  }
  lines.push(`eval ${shellQuote(command)}`, ")");
  return lines.join("\n");
}
