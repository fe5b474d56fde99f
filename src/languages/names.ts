// The names every per-language table is keyed by: languages, the runners that execute them, and
// the interpreters those runners start. A table typed Record<...> over these fails to compile when one is missing.

export const LANGUAGES = ["python", "javascript", "typescript", "bash"] as const;
export type Language = (typeof LANGUAGES)[number];

/** The processes that run code in a sandbox; TypeScript runs in the JavaScript runner after a host-side transpile. */
export const RUNNER_KINDS = ["python", "javascript", "bash"] as const;
export type RunnerKind = (typeof RUNNER_KINDS)[number];

/** The programs runners start; each has a config key under `paths` and an environment variable. */
export const INTERPRETERS = ["python", "node", "bash"] as const;
export type Interpreter = (typeof INTERPRETERS)[number];

export interface InterpreterSpec {
  /** Environment variable that points at it, e.g. SANDGATE_PYTHON. */
  env: string;
  /** Where it is looked for when not configured, in order. */
  candidates: readonly string[];
  /** What it is, for the settings table and the JSON Schema. */
  description: string;
  /** Where it is found when not configured, as the settings table says it. */
  defaultDoc: string;
  /** The Debian/Ubuntu package that installs it, named when it is missing. */
  package: string;
}

export const INTERPRETER_SPECS: Record<Interpreter, InterpreterSpec> = {
  python: { env: "SANDGATE_PYTHON", candidates: ["/usr/bin/python3"], description: "Python interpreter run in sandboxes", defaultDoc: "/usr/bin/python3", package: "python3" },
  node: {
    env: "SANDGATE_NODE",
    candidates: ["/usr/bin/node", process.execPath],
    description: "Node.js binary run in sandboxes",
    defaultDoc: "/usr/bin/node, else the one running sandgate",
    package: "nodejs",
  },
  bash: { env: "SANDGATE_BASH", candidates: ["/usr/bin/bash", "/bin/bash"], description: "Bash run in sandboxes", defaultDoc: "/usr/bin/bash", package: "bash" },
};

/** How the host and a runner talk: length-prefixed JSON frames (Python, Node), or Bash's tool pipe. */
export type ChannelKind = "frames" | "bash-pipe";
