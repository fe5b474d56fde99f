// The notebook lines of Python code (`!cmd`, `x = !cmd`, `%magic args`, `%%bash` cells), split
// out as the shell and Python they run, so the analysis judges what the runner will execute.

/** Python code with its notebook lines made plain, and the shell those lines run, line for line. */
export interface SplitMagics {
  python: string;
  shell: string;
}

// `target = !cmd` or `target = %magic args`, as the runner's transform reads them.
const ASSIGNED = /^([ \t]*)([A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*)[ \t]*=[ \t]*([!%].*)$/;
/** Line magics whose arguments are Python code. */
const PYTHON_ARGS = new Set(["time", "timeit", "prun"]);
/** Line magics whose arguments the shell sees (as the command named). */
const SHELL_ARGS: Record<string, string> = { pip: "pip", cd: "cd", ls: "ls", env: "export", sx: "", system: "" };
/** Cell magics whose body is shell. */
const SHELL_CELLS = new Set(["bash", "sh", "script"]);
/** Cell magics whose body is Python. */
const PYTHON_CELLS = new Set(["time", "timeit", "prun", "capture"]);

/**
 * The split, or undefined when the code has no notebook line (most code). It over-approximates:
 * a line inside a string that looks like `!cmd` is judged as shell too, which can only add findings.
 */
export function splitPythonMagics(code: string): SplitMagics | undefined {
  const lines = code.split("\n");
  const first = /^%%(\w+)(.*)$/.exec(lines[0] ?? "");
  if (first) {
    const [, name = "", args = ""] = first;
    const body = lines.slice(1);
    if (SHELL_CELLS.has(name)) return { python: "", shell: ["", ...body].join("\n") };
    if (PYTHON_CELLS.has(name)) {
      const inner = splitPythonMagics(body.join("\n"));
      return { python: ["", ...(inner ? inner.python : body.join("\n")).split("\n")].join("\n"), shell: ["", ...(inner?.shell ?? "").split("\n")].join("\n") };
    }
    // %%writefile and the like: the body is data, and the file it makes is judged when something runs it.
    return { python: "", shell: `: ${args}` };
  }
  let found = false;
  const python: string[] = [];
  const shell: string[] = [];
  for (const line of lines) {
    const split = splitLine(line);
    if (split) found = true;
    python.push(split ? split.python : line);
    shell.push(split ? split.shell : "");
  }
  return found ? { python: python.join("\n"), shell: shell.join("\n") } : undefined;
}

function splitLine(line: string): { python: string; shell: string } | undefined {
  const stripped = line.trimStart();
  const indent = line.slice(0, line.length - stripped.length);
  if ((stripped.startsWith("!") && !stripped.startsWith("!=")) || (stripped.startsWith("%") && !stripped.startsWith("%%"))) {
    return magic(indent, stripped, `${indent}pass`);
  }
  const assigned = ASSIGNED.exec(line);
  if (!assigned || (assigned[3] ?? "").startsWith("%%")) return undefined;
  return magic(assigned[1] ?? "", assigned[3] ?? "", `${assigned[1] ?? ""}${assigned[2] ?? "_"} = None`);
}

function magic(indent: string, text: string, plain: string): { python: string; shell: string } | undefined {
  if (text.length < 2) return undefined;
  if (text.startsWith("!")) return { python: plain, shell: text.slice(1) };
  const [, name = "", args = ""] = /^%(\w*)\s*(.*)$/.exec(text) ?? [];
  if (PYTHON_ARGS.has(name)) return { python: `${indent}${args.replace(/^(-\w+(\s+\S+)?\s+)*/, "")}`, shell: "" };
  const command = SHELL_ARGS[name];
  if (command === undefined) return { python: plain, shell: "" };
  return { python: plain, shell: command ? `${command} ${args}` : args };
}
