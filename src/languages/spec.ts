// The shape of a language spec and a runner spec: what one file under src/languages/ declares so
// that every per-language table (runner command, warm pool, CLI, doctor, REST, prompts) can derive from it.

import type { ChannelKind, Interpreter, Language, RunnerKind } from "./names.js";
import type { PreparedCode } from "./prepare-code.js";

/** What a runner's command line is built from when a sandbox starts. */
export interface RunnerLaunch {
  /** The interpreter's path (host and sandbox see the same /usr). */
  interpreter: string;
  /** The runner's entry file inside the sandbox (under /sandgate/runners; Python's is precompiled when it could be). */
  entry: string;
  /** The sandbox's memory limit in MB. */
  memoryMb: number;
}

/** A process that runs code in a sandbox: one per runner kind, shared by the languages it runs. */
export interface RunnerSpec {
  kind: RunnerKind;
  interpreter: Interpreter;
  /** Its files in runners/ (bound read-only at /sandgate/runners); the first is the entry it starts. */
  files: readonly [string, ...string[]];
  /** The argv run inside bubblewrap. */
  command(launch: RunnerLaunch): string[];
  /** A throwaway call the warm pool makes so the first real caller finds the runner's lazy paths warm. */
  warmUp: string;
  /** How the host talks to it: length-prefixed JSON frames, or the Bash runner's tool pipe. */
  channel: ChannelKind;
  /** Without a memory cgroup, cap its address space (RLIMIT_AS); false where the runtime reserves far more than it uses (V8). */
  limitAddressSpace: boolean;
  /** A SIGABRT exit with the runtime's out-of-memory message on stderr is the memory limit (Node stops at its own heap limit). */
  abortMeansOutOfMemory: boolean;
  /**
   * SIGINT to the runner interrupts the running code (KeyboardInterrupt, an interrupted script) and
   * the runner ends the call and stays ready, so a timeout or cancel need not kill it.
   */
  interruptible: boolean;
}

/** How code in a language calls an upstream MCP tool, as the tool descriptions and the usage prompt show it. */
export interface UpstreamCallExample {
  /** One line of code, e.g. `await callMCPTool("server.tool", {...})`. */
  call: string;
  /** The generated wrapper module's name, e.g. `servers.<server>`. */
  module?: string;
  /** Importing a generated wrapper, e.g. `from servers.<server> import tool_name`. */
  importLine?: string;
  /** A hint that follows the example in the usage prompt. */
  hint?: string;
  /** Searching the upstream tools from code (what search_tools returns, as native values). */
  search: string;
  /** Listing the upstream servers from code (what list_servers returns). */
  servers: string;
  /** Passing an upstream tool's content (images; text, resources) on to the agent. */
  returnContent: string;
}

export interface LanguageSpec {
  name: Language;
  /** The name people write, e.g. "JavaScript". */
  title: string;
  /** Other names accepted wherever a language is named (lower case; matched case-insensitively). */
  aliases: readonly string[];
  /** File extensions the CLI recognises, with the dot, lower case. */
  extensions: readonly string[];
  runner: RunnerKind;
  /** Whether the value of the last expression comes back as the result's `value`. */
  returnsValue: boolean;
  /** The file name the user's code has in tracebacks, e.g. "main.py". */
  filename: string;
  /** The host-side step before the runner sees the code (a syntax error it finds is reported on the host); none runs it as written. */
  prepare?: (code: string) => Omit<PreparedCode, "kind" | "filename">;
  /** The check `sandgate doctor` runs: `code` must produce `expect` as the result's `value` or `stdout`. */
  doctorProbe: { code: string; expect: unknown; from: "value" | "stdout" };
  upstreamCall: UpstreamCallExample;
}
