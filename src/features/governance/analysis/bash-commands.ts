// Turns a `command` node into the commands that really run: words folded, redirects and here-documents
// attached, aliases expanded, and wrappers (sudo, env, timeout, xargs, find -exec ...) unwrapped.

import type { Node } from "web-tree-sitter";
import type { Ancestor, BashContext, Command, Redirect } from "./bash-context.js";
import { baseName, type Taint, type Word, type WordReader } from "./bash-words.js";

function synthetic(from: Word, value: string): Word {
  return { ...from, text: value, value, taints: new Set(from.taints), disguised: false, rebuilt: false, leadingVar: undefined, substitution: false };
}

const REDIRECTS = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"]);

function readRedirect(node: Node, reader: WordReader): Redirect | undefined {
  if (node.type === "herestring_redirect") {
    const target = node.namedChildren[0];
    return target ? { op: "<<<", fd: undefined, target: reader.read(target) } : undefined;
  }
  if (node.type !== "file_redirect") return undefined;
  let op = "";
  let fd: string | undefined;
  let target: Node | undefined;
  for (const child of node.children) {
    if (child.type === "file_descriptor") fd = child.text;
    else if (!child.isNamed || child.type === "ERROR") op += child.text;
    else target ??= child;
  }
  return target ? { op, fd, target: reader.read(target) } : undefined;
}

/** Redirects written on the command and on the redirected statements around it (`ancestors`: nearest first). */
export function collectRedirects(
  node: Node,
  ancestors: readonly Ancestor[],
  reader: WordReader,
  command: Pick<Command, "redirects" | "stdinText" | "stdinTaints">,
  own: readonly Node[] = node.childrenForFieldName("redirect"),
): void {
  const visit = (redirect: Node): void => {
    if (redirect.type === "heredoc_redirect") {
      const body = redirect.namedChildren.find((child) => child.type === "heredoc_body");
      if (body) command.stdinText = body.text;
      for (const child of redirect.namedChildren) if (child.type === "file_redirect") visit(child);
      return;
    }
    const read = readRedirect(redirect, reader);
    if (!read) return;
    command.redirects.push(read);
    if (read.op === "<<<") {
      command.stdinText = read.target.value;
      for (const taint of read.target.taints) command.stdinTaints.add(taint);
      if (read.target.rebuilt) command.stdinTaints.add("decoded");
    } else if (read.op === "<" && read.target.substitution) {
      // `< <(curl ...)`: what the commands inside print is the input.
      for (const taint of read.target.taints) command.stdinTaints.add(taint);
      if (read.target.rebuilt) command.stdinTaints.add("decoded");
    }
  };
  for (const child of own) visit(child);
  // Redirects after `a | b` belong to the whole pipeline: they apply to its last command.
  let current = node;
  for (const ancestor of ancestors) {
    const parent = ancestor.node;
    const type = ancestor.type;
    if (!parent || (type !== "redirected_statement" && type !== "pipeline" && type !== "list")) break;
    if (type === "redirected_statement" && parent.firstNamedChild?.id === current.id) {
      for (const child of parent.namedChildren) if (REDIRECTS.has(child.type)) visit(child);
    } else if (!(type !== "redirected_statement" && parent.lastNamedChild?.id === current.id)) break;
    current = parent;
  }
}

/** Options of wrappers that take a value in the next word. */
const VALUE_OPTIONS: Record<string, RegExp> = {
  sudo: /^-[ugpChrtUD]$|^--(user|group|prompt|close-from|host|role|type|chdir)$/,
  doas: /^-[uC]$/,
  env: /^-[uCS]$|^--(unset|chdir|split-string)$/,
  nice: /^-n$|^--adjustment$/,
  ionice: /^-[cnpPt]$/,
  timeout: /^-[sk]$|^--(signal|kill-after)$/,
  stdbuf: /^-[ioe]$/,
  strace: /^-[oepsSEuI]$/,
  ltrace: /^-[oepsSEu]$/,
  xargs: /^-[IEdLnPsa]$|^--(replace|eof|delimiter|max-lines|max-args|max-procs|max-chars|arg-file)$/,
  chrt: /^-[p]$/,
  taskset: /^-c$/,
  proxychains: /^-f$/,
  proxychains4: /^-f$/,
  flock: /^-[wEn]$/,
  runuser: /^-[ugc]$|^--(user|group)$/,
  setpriv: /^--(reuid|regid|groups|inh-caps)$/,
};

const WRAPPERS = new Set([...Object.keys(VALUE_OPTIONS), "command", "builtin", "exec", "nohup", "time", "setsid", "unbuffer", "chronic", "torsocks", "tsocks", "busybox", "then", "do", "else", "caffeinate", "catchsegv", "eatmydata", "faketime", "firejail", "chroot", "nsenter", "unshare"]);
/** Wrappers whose first operand is not the command (a duration, a CPU mask, a directory, a lock file). */
const FIRST_OPERAND: Record<string, number> = { timeout: 1, taskset: 1, chrt: 1, flock: 1, chroot: 1 };

export function unwrapCommand(command: Command, ctx: BashContext): Command[] {
  const out: Command[] = [];
  let words = [...(command.nameWord ? [command.nameWord] : []), ...command.args];
  const via: string[] = [...command.via];
  let aliasDepth = 0;
  for (;;) {
    const head = words[0];
    const path = head?.value;
    const name = path === undefined ? undefined : baseName(path);
    if (name !== undefined && ctx.aliases.has(name) && aliasDepth < 3 && head) {
      aliasDepth++;
      const parts = (ctx.aliases.get(name) ?? "").split(/\s+/).filter(Boolean);
      words = [...parts.map((part) => synthetic(head, part)), ...words.slice(1)];
      continue;
    }
    const current: Command = { ...command, name, path, nameWord: head, args: words.slice(1), via: [...via] };
    if (name === "find") {
      out.push(current);
      let start = -1;
      for (let i = 1; i < words.length; i++) {
        const value = words[i]?.value;
        if (value && /^-(exec|execdir|ok|okdir)$/.test(value)) start = i + 1;
        else if (start > 0 && (value === ";" || value === "+" || value === "\\;")) {
          out.push(...unwrapCommand({ ...current, nameWord: words[start], args: words.slice(start + 1, i), via: [...via, "find"] }, ctx));
          start = -1;
        }
      }
      return out;
    }
    if (name === undefined || !WRAPPERS.has(name) || ctx.functions.has(name)) {
      out.push(current);
      return out;
    }
    if ((name === "command" || name === "builtin") && words.slice(1).some((word) => /^-[a-zA-Z]*[vV]/.test(word.value ?? ""))) {
      out.push(current);
      return out;
    }
    let i = 1;
    const valueOption = VALUE_OPTIONS[name];
    while (i < words.length) {
      const value = words[i]?.value ?? words[i]?.text ?? "";
      if (value === "--") {
        i++;
        break;
      }
      if (name === "env" && /^[A-Za-z_][A-Za-z0-9_]*=/.test(value)) {
        const eq = value.indexOf("=");
        command.env.set(value.slice(0, eq), value.slice(eq + 1));
        i++;
        continue;
      }
      if (!value.startsWith("-") || value === "-") break;
      i += valueOption?.test(value) ? 2 : 1;
    }
    i += FIRST_OPERAND[name] ?? 0;
    if (name === "nsenter" || name === "unshare" || name === "chroot") out.push(current);
    if (i >= words.length) {
      if (!out.includes(current)) out.push(current);
      return out;
    }
    via.push(name);
    words = words.slice(i);
  }
}

/** Reads a command node; `ancestors` are its parents nearest first, `background` whether it runs with `&`. */
export function readCommand(node: Node, ancestors: readonly Ancestor[], background: boolean, reader: WordReader): Command {
  // One pass over the children: field lookups each walk the children again.
  const env = new Map<string, string | undefined>();
  let nameNode: Node | null | undefined;
  const args: Node[] = [];
  const argTypes: string[] = [];
  const redirects: Node[] = [];
  for (const child of node.namedChildren) {
    const type = child.type;
    if (type === "variable_assignment") {
      const key = child.firstNamedChild?.text;
      const value = child.namedChildCount > 1 ? child.lastNamedChild : null;
      if (key) env.set(key, value ? reader.read(value).value : "");
    } else if (type === "command_name") nameNode = child.firstNamedChild;
    else if (REDIRECTS.has(type)) redirects.push(child);
    else if (type !== "comment") {
      args.push(child);
      argTypes.push(type);
    }
  }
  const command: Command = {
    node,
    name: undefined,
    path: undefined,
    nameWord: nameNode ? reader.read(nameNode) : undefined,
    args: args.map((arg, i) => reader.read(arg, argTypes[i])),
    via: [],
    env,
    redirects: [],
    stdinText: undefined,
    stdinTaints: new Set<Taint>(),
    background,
  };
  collectRedirects(node, ancestors, reader, command, redirects);
  return command;
}
