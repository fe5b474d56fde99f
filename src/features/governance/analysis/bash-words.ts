// Static values of bash words: what a word, string or concatenation expands to when everything in it
// is known (literals, constants assigned earlier, ANSI-C escapes), and what data flows into it when not.

import type { Node } from "web-tree-sitter";
import { append } from "./fold-budget.js";

/** Where data came from: rules follow it through variables, pipes and files. */
export type Taint = "download" | "decoded" | "secret" | "sensitive" | "recon" | "metadata" | "network";

export interface VarState {
  value: string | undefined;
  taints: ReadonlySet<Taint>;
  /** The value was decoded or sliced together at run time. */
  rebuilt?: boolean;
}

/** What a command or process substitution yields, folded where the commands in it are constant. */
export interface SubstitutionValue {
  value: string | undefined;
  taints: ReadonlySet<Taint>;
  /** The value was decoded or rebuilt from something else (base64, rev, printf escapes). */
  obfuscated: boolean;
}

export interface WordScope {
  vars: ReadonlyMap<string, VarState>;
  substitution(node: Node): SubstitutionValue;
}

export interface Word {
  node: Node;
  text: string;
  /** The expanded value when every part is known. */
  value: string | undefined;
  taints: Set<Taint>;
  /** The word starts with an unknown variable (`"$DIR/"*`); guarded when written `${DIR:?}` or with a default. */
  leadingVar: { name: string; guarded: boolean } | undefined;
  /** Contains `$(...)`, backquotes or `<(...)`. */
  substitution: boolean;
  /** Hides its letters: backslashes inside a bare word, ANSI-C escapes, quotes splitting a word, `${IFS}`. */
  disguised: boolean;
  /** Built by slicing or rewriting a variable (`${x:1:2}`, `${x//a/}`, `${!x}`) or by decoding. */
  rebuilt: boolean;
}

const ESCAPES: Record<string, string> = { a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\\": "\\", "'": "'", '"': '"', "?": "?" };

/** Decodes backslash escapes as `$'...'`, `echo -e` and printf formats do. */
export function decodeEscapes(text: string, octalNeedsZero = false): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== "\\" || i + 1 >= text.length) {
      out += c;
      continue;
    }
    const n = text[i + 1] as string;
    if (n === "x" || n === "u" || n === "U") {
      const max = n === "x" ? 2 : n === "u" ? 4 : 8;
      const hex = /^[0-9a-fA-F]+/.exec(text.slice(i + 2, i + 2 + max))?.[0];
      if (hex) {
        out += String.fromCodePoint(parseInt(hex, 16));
        i += 1 + hex.length;
        continue;
      }
    }
    if (/[0-7]/.test(n)) {
      const start = octalNeedsZero && n === "0" ? i + 2 : i + 1;
      const oct = /^[0-7]{1,3}/.exec(text.slice(start, start + 3))?.[0] ?? "";
      if (!octalNeedsZero || n === "0") {
        out += String.fromCharCode(parseInt(oct || "0", 8) & 0xff);
        i = start + oct.length - 1;
        continue;
      }
    }
    const simple = ESCAPES[n];
    if (simple !== undefined) {
      out += simple;
      i++;
      continue;
    }
    out += c;
  }
  return out;
}

/** Removes the backslashes of a bare word; `disguised` when one sits inside the word before a letter. */
function unescapeBare(text: string): { value: string; disguised: boolean } {
  if (!text.includes("\\")) return { value: text, disguised: false };
  let value = "";
  let disguised = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\\" && i + 1 < text.length) {
      const n = text[i + 1] as string;
      if (i > 0 && /[A-Za-z0-9/]/.test(n)) disguised = true;
      if (n !== "\n") value += n;
      i++;
    } else value += c;
  }
  return { value, disguised };
}

function unescapeDouble(text: string): string {
  return text.replace(/\\([\\"$`\n])/g, (_, c: string) => (c === "\n" ? "" : c));
}

const EXPANSION = /^\$\{([#!]?)([A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?|[0-9@*#?$!-])(.*)\}$/s;
/** Operators that slice or rewrite a value: `${x:1:2}`, `${x/a/b}`, `${x^^}`, `${x,,}`. */
const REWRITE = /^(:\s*-?\d|:\s*\$|\/|\^|,)/;

export class WordReader {
  constructor(private readonly scope: WordScope) {}

  /** `type` when the caller has read it already (each read crosses into the parser). */
  read(node: Node, type: string = node.type): Word {
    const text = node.text;
    const word: Word = { node, text, value: "", taints: new Set(), leadingVar: undefined, substitution: false, disguised: false, rebuilt: false };
    this.fold(node, word, true, type, text);
    return word;
  }

  private append(word: Word, value: string | undefined): void {
    word.value = word.value === undefined || value === undefined ? undefined : append(word.value, value);
  }

  private variable(word: Word, name: string, first: boolean, guarded: boolean, defaultValue: string | undefined): void {
    if (name === "HOME") return this.append(word, "~");
    if (name === "IFS") {
      word.disguised = true;
      return this.append(word, " ");
    }
    // `${lines[0]}`: an element carries the array's taints; its value is not followed.
    const element = name.endsWith("]") ? this.scope.vars.get(name.slice(0, name.indexOf("["))) : undefined;
    const state = this.scope.vars.get(name) ?? (element ? { ...element, value: undefined } : undefined);
    if (state) for (const taint of state.taints) word.taints.add(taint);
    if (state?.rebuilt) word.rebuilt = true;
    const value = state?.value ?? defaultValue;
    if (value === undefined && first && word.value === "") word.leadingVar = { name, guarded: guarded || defaultValue !== undefined };
    this.append(word, value);
  }

  /** `type` and `text` are the node's, passed when already read. */
  private fold(node: Node, word: Word, first: boolean, type: string = node.type, text?: string): void {
    switch (type) {
      case "word": {
        const { value, disguised } = unescapeBare(text ?? node.text);
        if (disguised) word.disguised = true;
        return this.append(word, value);
      }
      case "number":
      case "test_operator":
      case "brace_expression":
      case "special_variable_name":
        return this.append(word, text ?? node.text);
      case "raw_string":
        return this.append(word, (text ?? node.text).slice(1, -1));
      case "ansi_c_string": {
        const inner = (text ?? node.text).slice(2, -1);
        if (/\\[0-7xuUc]/.test(inner)) word.disguised = true;
        return this.append(word, decodeEscapes(inner));
      }
      case "string":
      case "translated_string": {
        let index = 0;
        for (const child of node.children) {
          const childType = child.type;
          if (childType === '"' || childType === '$"') continue;
          if (childType === "string_content") this.append(word, unescapeDouble(child.text));
          else if (child.isNamed) this.fold(child, word, first && index === 0, childType);
          else this.append(word, child.text);
          index++;
        }
        return;
      }
      case "concatenation": {
        let index = 0;
        const quoted = node.namedChildren.filter((c) => c.type === "string" || c.type === "raw_string").length;
        const literal = node.namedChildren.every((c) => ["word", "raw_string", "ansi_c_string"].includes(c.type) || (c.type === "string" && c.namedChildren.every((part) => part.type === "string_content")));
        if (literal && quoted > 0 && node.namedChildCount > 1) word.disguised = true;
        for (const child of node.children) {
          if (child.isNamed) this.fold(child, word, first && index === 0);
          else this.append(word, child.text);
          index++;
        }
        return;
      }
      case "simple_expansion": {
        const name = node.namedChildren[0]?.text ?? (text ?? node.text).slice(1);
        return this.variable(word, name, first, false, undefined);
      }
      case "expansion": {
        const match = EXPANSION.exec(text ?? node.text);
        if (!match) {
          word.rebuilt = true;
          return this.append(word, undefined);
        }
        const [, prefix, name = "", rest = ""] = match;
        if (prefix || (rest && !/^:?[-=?]/.test(rest))) {
          word.rebuilt = prefix === "!" || REWRITE.test(rest);
          if (name === "IFS") word.disguised = true;
          const state = this.scope.vars.get(name);
          if (state) for (const taint of state.taints) word.taints.add(taint);
          return this.append(word, undefined);
        }
        const guarded = /^:?\?/.test(rest);
        const fallback = /^:?[-=]/.exec(rest) ? rest.replace(/^:?[-=]/, "") : undefined;
        const literalDefault = fallback !== undefined && !/[$`]/.test(fallback) ? fallback.replace(/^["']|["']$/g, "") : undefined;
        return this.variable(word, name, first, guarded || fallback !== undefined, literalDefault);
      }
      case "command_substitution":
      case "process_substitution": {
        word.substitution = true;
        const folded = this.scope.substitution(node);
        for (const taint of folded.taints) word.taints.add(taint);
        if (folded.obfuscated) word.rebuilt = true;
        return this.append(word, type === "command_substitution" ? folded.value : undefined);
      }
      case "arithmetic_expansion":
        return this.append(word, undefined);
      default:
        return this.append(word, node.isNamed ? undefined : (text ?? node.text));
    }
  }
}

/** The last path component, without a trailing slash. */
export function baseName(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}
