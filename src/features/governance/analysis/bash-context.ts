// The state one bash analysis carries while it walks a program: variables, aliases, functions, facts
// about files and sockets that later commands use, the normalised commands, and the findings.

import type { Node } from "web-tree-sitter";
import type { Category, Finding, Severity } from "../types.js";
import { findingAt } from "./rules.js";
import type { Taint, VarState, Word } from "./bash-words.js";

/** A parent seen by the walk: its type, and the node itself for the types rules look into. */
export interface Ancestor {
  type: string;
  node: Node | undefined;
}

export interface Redirect {
  /** `>`, `>>`, `<`, `&>`, `>&`, `<&`, `<>`, `<<<` ... */
  op: string;
  fd: string | undefined;
  target: Word;
}

/** One command as it runs: wrappers (sudo, env, xargs, find -exec ...) unwrapped, aliases expanded. */
export interface Command {
  node: Node;
  /** Basename of the program, or undefined when the name is not known statically. */
  name: string | undefined;
  /** The name as written after folding (`./install.sh`, `/bin/sh`). */
  path: string | undefined;
  nameWord: Word | undefined;
  args: Word[];
  /** Programs this one was started through (`sudo`, `env`, `xargs`, `find`). */
  via: string[];
  env: Map<string, string | undefined>;
  redirects: Redirect[];
  /** Text fed on standard input by a here-document or here-string. */
  stdinText: string | undefined;
  stdinTaints: Set<Taint>;
  background: boolean;
}

export interface CommandFacts {
  /** What running it produces on standard output (downloaded, decoded, secret ... data). */
  produces: Set<Taint>;
  /** It runs its standard input as a program (sh, bash -s, python -). */
  runsStdin: boolean;
  /** It sends standard input or files over the network. */
  sends: boolean;
  /** It talks to the network at all (nc, curl, telnet, /dev/tcp). */
  network: boolean;
  /** It is a shell or interpreter of any kind. */
  shell: boolean;
}

/** Facts kept to the end of the walk hold nodes of the outer program only (see `place`). */
export interface ProgramFacts {
  downloaded: Map<string, Node>;
  decodedFiles: Map<string, Node>;
  secretFiles: Map<string, Node>;
  executable: Map<string, Node>;
  /** Programs run by name; `explicit` when run by path or through an interpreter (`./x`, `sh x`). */
  runs: { base: string; node: Node; explicit: boolean }[];
  socketFds: Set<string>;
  secretRead: Node | undefined;
  sends: Node[];
  unknownDownload: boolean;
  setU: boolean;
}

export interface BashContext {
  findings: Finding[];
  seen: Set<string>;
  vars: Map<string, VarState>;
  aliases: Map<string, string>;
  functions: Set<string>;
  facts: ProgramFacts;
  /** Facts and unwrapped commands of the command nodes already seen, by node id (unique within one tree). */
  commandFacts: Map<number, CommandFacts>;
  commands: Map<number, Command[]>;
  /** Commands that run in the background (`&`), and commands that are a stage of a pipeline. */
  background: Set<number>;
  piped: Set<number>;
  /** Facts of pipeline stages that are groups, subshells or loops, merged from the commands inside. */
  stageFacts: Map<number, CommandFacts>;
  /** What the commands inside each `$(...)` / `<(...)` produce, by the substitution's node id. */
  substitutions: Map<number, Set<Taint>>;
  /** The outermost pipeline a command is a stage of. */
  pipelineOf: Map<number, Node>;
  /** When analysing code found inside a string, findings are placed on the string in the outer program. */
  anchor: Node | undefined;
  depth: number;
}

/** The per-tree part of a context, keyed by node ids: a string parsed as its own tree starts these afresh. */
export type TreeState = Pick<BashContext, "commandFacts" | "commands" | "background" | "piped" | "pipelineOf" | "substitutions" | "stageFacts">;

export function newTreeState(): TreeState {
  return { commandFacts: new Map(), commands: new Map(), background: new Set(), piped: new Set(), pipelineOf: new Map(), substitutions: new Map(), stageFacts: new Map() };
}

export function newFacts(): ProgramFacts {
  return {
    downloaded: new Map(),
    decodedFiles: new Map(),
    secretFiles: new Map(),
    executable: new Map(),
    runs: [],
    socketFds: new Set(),
    secretRead: undefined,
    sends: [],
    unknownDownload: false,
    setU: false,
  };
}

/** What a rule file gets for one command: where to report, the command's facts to fill in, and a way
 * to analyse bash code found in a string (eval, sh -c, decoded payloads) as part of this program. */
export interface RuleEnv {
  ctx: BashContext;
  report: Report;
  facts: CommandFacts;
  snippet: (code: string, at: Node) => void;
}

/** Where a fact about `node` is kept: code analysed inside a string is placed on that string, because
 * the string's own tree is freed before the walk ends. */
export function place(ctx: BashContext, node: Node): Node {
  return ctx.anchor ?? node;
}

export type Report = (node: Node, rule: string, category: Category, severity: Severity, message: string, recommendation: string) => void;

/** Adds a finding once per rule and place; `rule` is the part after `sh.<category>.`. */
export function reporter(ctx: BashContext): Report {
  return (node, rule, category, severity, message, recommendation) => {
    const at = ctx.anchor ?? node;
    const ruleId = `sh.${category}.${rule}`;
    const key = `${ruleId}@${at.startIndex}`;
    if (ctx.seen.has(key)) return;
    ctx.seen.add(key);
    ctx.findings.push(findingAt(at, { ruleId, category, severity, message, recommendation }));
  };
}

export const SHELL = /^(sh|bash|dash|zsh|ksh|mksh|ash|csh|tcsh|fish|yash|posh|rbash|busybox)$/;
export const PYTHON = /^(python[0-9.]*|pypy[0-9.]*)$/;
export const INTERPRETER = /^(python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|node|nodejs|deno|bun|lua[0-9.]*|luajit|tclsh|Rscript|osascript|pwsh|powershell)$/;
export const NETWORK_TOOL = /^(nc|ncat|netcat|nc\.traditional|nc\.openbsd|socat|telnet|cryptcat|pwncat|sbd)$/;

/** The literal values of the arguments (unknown ones as ""). */
export function argValues(command: Command): string[] {
  return command.args.map((arg) => arg.value ?? "");
}

/** Short option letters set in any `-abc` bundle, and long options as written. */
export function hasFlag(command: Command, short: string, ...long: string[]): boolean {
  for (const arg of command.args) {
    const value = arg.value;
    if (value === undefined) continue;
    if (value === "--") return false;
    if (value.startsWith("--")) {
      if (long.some((name) => value === name || value.startsWith(`${name}=`))) return true;
    } else if (short && value.startsWith("-") && value.length > 1 && /^-[A-Za-z0-9]+$/.test(value)) {
      for (const letter of short) if (value.includes(letter)) return true;
    }
  }
  return false;
}
