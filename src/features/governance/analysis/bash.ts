// The bash rules: one post-order walk over the parse tree that folds words, follows variables and
// aliases, normalises every command, runs the rule files on it, and re-parses code found in strings.

import { Parser, type Language, type Node, type TreeCursor } from "web-tree-sitter";
import type { Finding } from "../types.js";
import { collectRedirects, readCommand, unwrapCommand } from "./bash-commands.js";
import { INTERPRETER, SHELL, newFacts, newTreeState, reporter, type Ancestor, type BashContext, type Command, type CommandFacts, type Report, type RuleEnv } from "./bash-context.js";
import { execRules } from "./bash-exec-rules.js";
import { foldStages } from "./bash-fold.js";
import { charge } from "./fold-budget.js";
import { functionRules, loopRules, mergeIntoStages, pipelineRules, programRules } from "./bash-flow.js";
import { netRules } from "./bash-net-rules.js";
import { systemRules } from "./bash-system-rules.js";
import { WordReader, type SubstitutionValue, type Taint } from "./bash-words.js";
import type { LanguageRules, MetricNodeTypes, WalkCounts } from "./rules.js";

/** Strings are re-parsed as bash at most this deep (eval "$(echo ... | base64 -d)" inside sh -c ...). */
const MAX_DEPTH = 3;
const MAX_SNIPPET = 100_000;

let snippetParser: { parser: Parser; language: Language } | undefined;

function parserFor(language: Language): Parser {
  if (snippetParser?.language !== language) {
    const parser = new Parser();
    parser.setLanguage(language);
    snippetParser = { parser, language };
  }
  return snippetParser.parser;
}

/** One level of the walk: a node's type, the node for types the rules look into, and whether `&` follows it. */
interface Frame extends Ancestor {
  background: boolean;
  /** A function or branch node: it counts for the metrics' nesting depth. */
  nests?: boolean;
  /** For substitutions: what the commands inside produce. */
  produces?: Set<Taint>;
}

/** Variables whose value bash runs (PROMPT_COMMAND) or expands with command substitution (the prompts, PS4 under set -x). */
const PROMPT_VARIABLES = /^(PS[0-4]|PROMPT_COMMAND)$/;

/** A word's text without the quotes around it (a single-quoted value is kept as written). */
function unquoted(text: string): string {
  return /^(['"]).*\1$/s.test(text) ? text.slice(1, -1) : text;
}

class BashWalk {
  private readonly report: Report;
  private readonly reader: WordReader;
  /** The ancestors of the node being visited, root first (tree-sitter's `parent` walks from the root: too slow). */
  private frames: Frame[] = [];
  /** Whether the text being walked can hold a `&` token at all. */
  private ampersands = true;
  /** Function and branch nodes open around the node being entered (for counts.maxDepth). */
  private nesting = 0;

  constructor(
    private readonly ctx: BashContext,
    private readonly language: Language,
    /** The program's metric counts, taken by the outermost walk only (code in strings is no part of them). */
    private readonly counts?: WalkCounts,
  ) {
    this.report = reporter(ctx);
    this.reader = new WordReader({ vars: ctx.vars, substitution: (node) => this.substitution(node) });
  }

  /** Walks the tree parsed from `source`. */
  walk(root: Node, source: string): void {
    // A tree without errors is walked from one search; a tree with errors may hold nodes where its
    // grammar puts none (inside words, or empty), which only the cursor walk steps over as before.
    if (!root.hasError && this.searchWalk(root)) return;
    // Without an `&` in the text (and no error nodes, which may be missing tokens) nothing runs in the
    // background: the look at each statement's next sibling is skipped.
    this.ampersands = source.includes("&") || root.hasError;
    // Post-order with a cursor: a command's substitutions and earlier assignments are seen before the
    // command, and only the nodes rules look into are materialised (creating Node objects dominates).
    // Each position costs one move and one type-id read: names and named-ness come from tables.
    const cursor = root.walk();
    const frames = this.frames;
    const { names, skip } = typeTables(this.language);
    try {
      frames.push({ type: cursor.nodeType, node: root, background: false });
      // Whether the current node is entered and its children still to walk (false for nodes stepped over).
      let walked = true;
      for (;;) {
        if (walked && cursor.gotoFirstChild()) {
          const id = cursor.nodeTypeId;
          walked = skip[id] !== 1;
          if (walked) this.enterAt(cursor, names[id] || "ERROR");
          continue;
        }
        if (walked) {
          // A named node without children: it ends here.
          this.visit(frames.pop() as Frame);
          walked = false;
        }
        // The current node is done: find the next one.
        if (cursor.gotoNextSibling()) {
          const id = cursor.nodeTypeId;
          walked = skip[id] !== 1;
          if (walked) this.enterAt(cursor, names[id] || "ERROR");
          continue;
        }
        if (!cursor.gotoParent()) return;
        this.visit(frames.pop() as Frame);
        walked = false;
      }
    } finally {
      cursor.delete();
      frames.length = 0;
    }
  }

  /**
   * The walk of a tree without errors: one search inside the wasm module lists, in document order, the
   * nodes the cursor walk would enter (every named type but the leaves) and the `&` tokens; nesting comes
   * from the nodes' ends. The cursor walk crosses into the module twice at every node, tokens and leaves
   * included (two in three nodes of a script), each time copying the cursor in and out; this one twice
   * per node it enters (type and end), about a quarter as many crossings. False, before anything is
   * visited, when a listed node is empty (its place among its neighbours is then ambiguous) or one the
   * cursor walk steps over: the cursor walk takes over.
   */
  private searchWalk(root: Node): boolean {
    const { names, skip, searched } = typeTables(this.language);
    const found = root.descendantsOfType(searched as string[]);
    const types: string[] = [];
    const ends: number[] = [];
    const backgrounded = new Set<number>();
    for (const node of found) {
      const id = node.typeId;
      const type = names[id] || "ERROR";
      const end = node.endIndex;
      if (type !== "&" && (end === node.startIndex || skip[id] === 1)) return false;
      types.push(type);
      ends.push(end);
      // A statement runs in the background when a `&` token is its next sibling.
      if (type === "&" && node.previousSibling) backgrounded.add(node.previousSibling.id);
    }
    const frames = this.frames;
    // The search lists the root first; its frame is never visited, as in the cursor walk.
    const first = found[0]?.id === root.id ? 1 : 0;
    const open: number[] = [root.endIndex];
    try {
      frames.push({ type: root.type, node: root, background: false });
      for (let i = first; i < found.length; i++) {
        const type = types[i] as string;
        if (type === "&") continue;
        const node = found[i] as Node;
        const start = node.startIndex;
        while (frames.length > 1 && start >= (open[open.length - 1] as number)) {
          open.pop();
          this.visit(frames.pop() as Frame);
        }
        open.push(ends[i] as number);
        this.enter(type, BACKGROUND_TYPES.has(type) && backgrounded.has(node.id), () => node);
      }
      while (frames.length > 1) this.visit(frames.pop() as Frame);
    } finally {
      frames.length = 0;
    }
    return true;
  }

  private enterAt(cursor: TreeCursor, type: string): void {
    let background = false;
    if (this.ampersands && BACKGROUND_TYPES.has(type) && cursor.gotoNextSibling()) {
      background = cursor.nodeType === "&";
      cursor.gotoPreviousSibling();
    }
    this.enter(type, background, () => cursor.currentNode);
  }

  private enter(type: string, background: boolean, node: () => Node): void {
    const substitution = type === "command_substitution" || type === "process_substitution";
    const frame: Frame = { type, node: NODE_TYPES.has(type) || substitution ? node() : undefined, background, ...(substitution ? { produces: new Set<Taint>() } : {}) };
    const kind = this.counts ? METRIC_KINDS.get(type) : undefined;
    if (kind && this.counts) {
      this.counts[kind]++;
      if (kind === "function" || kind === "branch") {
        frame.nests = true;
        this.counts.maxDepth = Math.max(this.counts.maxDepth, ++this.nesting);
      }
    }
    this.frames.push(frame);
  }

  /** Parents of the node just popped, nearest first. */
  private ancestors(): Frame[] {
    const out: Frame[] = [];
    for (let i = this.frames.length - 1; i >= 0; i--) out.push(this.frames[i] as Frame);
    return out;
  }

  /** Whether the statement holding the popped node (through redirects and pipelines) ends with `&`. */
  private inBackground(frame: Frame): boolean {
    if (frame.background) return true;
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const parent = this.frames[i] as Frame;
      if (parent.type !== "redirected_statement" && parent.type !== "pipeline") return false;
      if (parent.background) return true;
    }
    return false;
  }

  private snippet = (code: string, at: Node): void => {
    if (this.ctx.depth >= MAX_DEPTH || code.length > MAX_SNIPPET || code.trim() === "") return;
    charge(code.length); // each parse of folded text counts against the analysis's folding work
    const tree = parserFor(this.language).parse(code);
    if (!tree) return;
    try {
      const inner: BashContext = {
        ...this.ctx,
        anchor: this.ctx.anchor ?? at,
        depth: this.ctx.depth + 1,
        ...newTreeState(),
      };
      new BashWalk(inner, this.language).walk(tree.rootNode, code);
    } finally {
      tree.delete();
    }
  };

  private substitution(node: Node): SubstitutionValue {
    const taints = this.ctx.substitutions.get(node.id) ?? new Set<Taint>();
    const statements = node.namedChildren;
    if (statements.length !== 1) return { value: undefined, taints, obfuscated: false };
    const only = statements[0] as Node;
    const stages = only.type === "pipeline" ? only.namedChildren : [only];
    const folded = foldStages(stages.map((stage) => this.ctx.commands.get((stage.type === "command" ? stage : stage.childForFieldName("body"))?.id ?? -1)));
    if (!folded) return { value: undefined, taints, obfuscated: false };
    return { value: folded.value.replace(/\n+$/, ""), taints, obfuscated: folded.decoded };
  }

  private visit(frame: Frame): void {
    if (frame.nests) this.nesting--;
    const node = frame.node;
    if (!node) return;
    switch (frame.type) {
      case "variable_assignment":
        return this.assignment(node);
      case "command":
        return this.command(frame);
      case "pipeline":
        return pipelineRules(node, this.ancestors().slice(0, 2), this.ctx, this.report, this.snippet);
      case "function_definition":
        return functionRules(node, this.ctx, this.report);
      case "while_statement":
      case "c_style_for_statement":
      case "for_statement":
        return loopRules(node, this.ctx, this.report);
      case "redirected_statement":
        this.readRedirected(node);
        return this.groupRedirects(node);
      case "command_substitution":
      case "process_substitution":
        if (frame.produces) this.ctx.substitutions.set(node.id, frame.produces);
        return;
      default:
        return;
    }
  }

  private assignment(node: Node): void {
    const parent = this.frames[this.frames.length - 1];
    const name = node.childForFieldName("name")?.text;
    const valueNode = node.childForFieldName("value");
    if (name && valueNode && PROMPT_VARIABLES.test(name)) this.promptCode(name, valueNode);
    if (parent?.type === "command") return;
    if (!name) return;
    const word = valueNode ? this.reader.read(valueNode) : undefined;
    const value = word ? word.value : "";
    this.ctx.vars.set(name, { value, taints: word?.taints ?? new Set(), rebuilt: word?.rebuilt ?? false });
    if ((name === "HISTFILE" && value === "/dev/null") || (/^HIST(FILE)?SIZE$/.test(name) && value === "0")) {
      this.report(node, "erase-traces", "obfuscation", "medium", `${name}=${value} stops recording the shell history, hiding what is done`, "Leave the history alone.");
    }
    if ((/^(NODE_TLS_REJECT_UNAUTHORIZED|PYTHONHTTPSVERIFY)$/.test(name) && value === "0") || (name === "GIT_SSL_NO_VERIFY" && value && !/^(0|false)$/i.test(value))) {
      this.report(node, "tls-off", "network", "high", `${name}=${value} turns off TLS certificate verification`, "Keep verification on; install the server's CA certificate instead.");
    }
    if (name === "LD_PRELOAD" && value !== "" && parent?.type === "declaration_command") {
      this.report(node, "ld-preload", "privilege", "high", `export LD_PRELOAD injects ${value ?? "a library"} into every program started later`, "Do not preload libraries into other programs.");
    }
  }

  /**
   * `read cmd <<< "$(... | base64 -d)"`, `mapfile -t lines < <(curl ...)`: the variables hold the input,
   * with its taints, and its first line when the input is known (so `eval "$cmd"` is judged by it).
   */
  private readInto(command: Command): void {
    // Options that take a value (read -p prompt, mapfile -d delim); read -a names the array itself.
    const valued = new RegExp(`^-[a-zA-Z]*[${command.name === "read" ? "dinNptu" : "dnOsuCc"}]$`);
    const names = command.args.filter((arg, i) => arg.value !== undefined && /^[A-Za-z_]\w*$/.test(arg.value) && !valued.test(command.args[i - 1]?.value ?? "")).map((arg) => arg.value as string);
    if (names.length === 0) names.push(command.name === "read" ? "REPLY" : "MAPFILE");
    const taints = new Set(command.stdinTaints);
    const firstLine = command.stdinText?.split("\n")[0];
    for (const [i, name] of names.entries()) {
      const value = names.length === 1 || command.name !== "read" ? firstLine : undefined;
      this.ctx.vars.set(name, { value: i === 0 ? value : undefined, taints, rebuilt: taints.has("decoded") });
    }
  }

  /** `read x < <(...)`: the substitution is walked after the command, so its input is read again now. */
  private readRedirected(node: Node): void {
    const body = node.childForFieldName("body");
    if (body?.type !== "command") return;
    for (const command of this.ctx.commands.get(body.id) ?? []) {
      if (command.name !== "read" && command.name !== "mapfile" && command.name !== "readarray") continue;
      const input: Pick<Command, "redirects" | "stdinText" | "stdinTaints"> = { redirects: [], stdinText: undefined, stdinTaints: new Set() };
      collectRedirects(node, [], this.reader, input);
      this.readInto({ ...command, stdinText: input.stdinText ?? command.stdinText, stdinTaints: new Set([...command.stdinTaints, ...input.stdinTaints]) });
    }
  }

  /**
   * Bash runs PROMPT_COMMAND, and the command substitutions of PS0-PS4, by itself (PS4 before every
   * command `set -x` traces): what they hold is code, judged as if it were written out.
   */
  private promptCode(name: string, valueNode: Node): void {
    const word = this.reader.read(valueNode);
    const text = word.value ?? unquoted(valueNode.text);
    if (name !== "PROMPT_COMMAND" && !/\$\(|`/.test(text)) return;
    this.report(valueNode, "prompt-code", "code-exec", "medium", `${name} holds commands that bash runs by itself (${name === "PS4" ? "before every command set -x traces" : "around every prompt"})`, "Run the commands directly instead of hiding them in a prompt variable.");
    this.snippet(text, valueNode);
  }

  /** Redirects of a group, subshell or loop (`{ ...; } > f`), or of nothing at all (`> /dev/sda`). */
  private groupRedirects(node: Node): void {
    const body = node.childForFieldName("body");
    if (body && ["command", "pipeline", "list", "redirected_statement"].includes(body.type)) return;
    const facts: CommandFacts = { produces: new Set(), runsStdin: false, sends: false, network: false, shell: false };
    for (const inner of body?.descendantsOfType("command") ?? []) for (const taint of this.ctx.commandFacts.get(inner.id)?.produces ?? []) facts.produces.add(taint);
    const command: Command = { node, name: undefined, path: undefined, nameWord: undefined, args: [], via: [], env: new Map(), redirects: [], stdinText: undefined, stdinTaints: new Set(), background: false };
    collectRedirects(node, [], this.reader, command);
    const env: RuleEnv = { ctx: this.ctx, report: this.report, facts, snippet: this.snippet };
    netRules(command, env);
    systemRules(command, env);
  }

  private command(frame: Frame): void {
    const node = frame.node as Node;
    const ancestors = this.ancestors();
    const background = this.inBackground(frame);
    if (background) this.ctx.background.add(node.id);
    let outer: Node | undefined;
    for (const parent of ancestors) {
      if (parent.type === "pipeline") outer = parent.node;
      else if (parent.type !== "redirected_statement") break;
    }
    if (outer) {
      this.ctx.piped.add(node.id);
      this.ctx.pipelineOf.set(node.id, outer);
    }
    const raw = readCommand(node, ancestors, background, this.reader);
    const commands = unwrapCommand(raw, this.ctx);
    for (const command of commands) if (command.name === "read" || command.name === "mapfile" || command.name === "readarray") this.readInto(command);
    const facts: CommandFacts = { produces: new Set(), runsStdin: false, sends: false, network: false, shell: false };
    const env: RuleEnv = { ctx: this.ctx, report: this.report, facts, snippet: this.snippet };
    for (const command of commands) {
      const name = command.name;
      facts.shell ||= !!name && (SHELL.test(name) || INTERPRETER.test(name));
      netRules(command, env);
      execRules(command, env);
      systemRules(command, env);
      if (name === "alias") {
        for (const arg of command.args) {
          const match = /^([A-Za-z0-9_.-]+)=(.*)$/s.exec(arg.value ?? "");
          if (match) this.ctx.aliases.set(match[1] as string, match[2] as string);
        }
      } else if (name === "set" && command.args.some((arg) => /^-[a-zA-Z]*u/.test(arg.value ?? "") || arg.value === "nounset")) {
        this.ctx.facts.setU = true;
      }
      const self = [command.nameWord, ...command.args].some((word) => word && /^"?\$0"?$/.test(word.text));
      if (self && background) {
        const inLoop = ancestors.some((parent) => LOOPS.has(parent.type));
        this.report(node, "self-respawn", "resource-abuse", inLoop ? "critical" : "high", `the script starts copies of itself ($0) in the background${inLoop ? " in a loop (a fork bomb)" : ""}`, "Do not re-run the script from itself.");
      }
    }
    this.ctx.commandFacts.set(node.id, facts);
    for (const parent of ancestors) if (parent.produces) for (const taint of facts.produces) parent.produces.add(taint);
    mergeIntoStages(facts, commands, ancestors, this.ctx);
    this.ctx.commands.set(node.id, commands);
  }
}

/** Types whose statements may end with `&`, and types the rules read as nodes. */
const BACKGROUND_TYPES = new Set(["command", "redirected_statement", "pipeline"]);
const NODE_TYPES = new Set(["command", "pipeline", "redirected_statement", "list", "variable_assignment", "function_definition", "while_statement", "c_style_for_statement", "for_statement", "subshell", "compound_statement", "if_statement", "case_statement"]);
const LOOPS = new Set(["while_statement", "for_statement", "c_style_for_statement"]);
/** Nodes with nothing inside for the rules: their children are not walked. */
const LEAVES: ReadonlySet<string> = new Set(["word", "raw_string", "string_content", "comment", "heredoc_content", "ansi_c_string", "variable_name", "special_variable_name", "test_operator", "file_descriptor", "heredoc_start", "heredoc_end", "regex", "extglob_pattern"]);

interface TypeTables {
  names: readonly (string | undefined)[];
  /** By type id, 1 where the walk steps over the type (anonymous or a leaf). */
  skip: Uint8Array;
  /** The types the search walk lists: those it enters and `&`. By the grammar's node types no leaf holds a named node. */
  searched: readonly string[];
}

/** Per grammar: type names by id, the types the walk steps over, and the types the search walk lists. */
const TYPE_TABLES = new WeakMap<Language, TypeTables>();

function typeTables(language: Language): TypeTables {
  let tables = TYPE_TABLES.get(language);
  if (!tables) {
    const names = language.types;
    // ERROR (65535) is named and walked; the array covers every id a cursor reports.
    const skip = new Uint8Array(65536);
    const searched = new Set(["&"]);
    for (let id = 0; id < names.length; id++) {
      const name = names[id];
      skip[id] = !language.nodeTypeIsNamed(id) || LEAVES.has(name || "ERROR") ? 1 : 0;
      if (skip[id] === 0 && name) searched.add(name);
    }
    tables = { names, skip, searched: [...searched] };
    TYPE_TABLES.set(language, tables);
  }
  return tables;
}

export function bashFindings(root: Node, source: string, counts?: WalkCounts): Finding[] {
  const ctx: BashContext = {
    findings: [],
    seen: new Set(),
    vars: new Map(),
    aliases: new Map(),
    functions: new Set(),
    facts: newFacts(),
    ...newTreeState(),
    anchor: undefined,
    depth: 0,
  };
  new BashWalk(ctx, root.tree.language, counts).walk(root, source);
  programRules(ctx, reporter(ctx));
  return ctx.findings;
}

const METRIC_NODES: MetricNodeTypes = {
  function: ["function_definition"],
  call: ["command"],
  import: [],
  branch: ["if_statement", "elif_clause", "for_statement", "c_style_for_statement", "while_statement", "case_item", "list", "ternary_expression"],
};
/** The metric kind of each type the walk counts (none is a leaf, so the walk enters every one). */
const METRIC_KINDS = new Map<string, keyof MetricNodeTypes>((["function", "call", "import", "branch"] as const).flatMap((kind) => METRIC_NODES[kind].map((type) => [type, kind] as const)));

export const bashRules: LanguageRules = {
  grammar: "bash",
  metricNodes: METRIC_NODES,
  walkCounts: true,
  findings: (root, source, _found, counts) => bashFindings(root, source, counts),
};
