// The arguments of a tool call put to a person: the digest that is approved (sha256 of canonical
// JSON) and a bounded per-field view in which every field shows up, cut per value, never as a prefix.

import { createHash } from "node:crypto";

/** Characters of one value, and of one key, the view shows; the rest is counted, not shown. */
const VALUE_CHARS = 160;
const KEY_CHARS = 80;
/** A path deeper than this keeps its start and its end (the key that names the value). */
const PATH_CHARS = 300;
/** Lines of the view: the form is read, not scrolled; what does not fit is named as left out. */
const MAX_LINES = 100;

/** JSON with every object's keys sorted, so the digest names the value and not its key order. */
export function canonicalJson(value: unknown): string {
  const sorted = (_key: string, v: unknown): unknown => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const o = v as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, o[k]]),
    );
  };
  return JSON.stringify(value, sorted) ?? "null";
}

/** What a person approves: the sha256 (hex) of the arguments' canonical JSON. */
export function argsDigest(args: unknown): string {
  return createHash("sha256").update(canonicalJson(args)).digest("hex");
}

export interface ArgumentsView {
  /** One line per field, `path: value`, after a first line that says whether anything is left out. */
  text: string;
  /** Values cut short and fields not listed: the person must read the full arguments to see all. */
  cutValues: number;
  omittedFields: number;
}

interface Node {
  path: string;
  value: unknown;
  /** Where the node sits in the document (indices from the root): lines are printed in this order. */
  order: number[];
}

const more = (n: number, what: string): string => `… ${n} more ${what}${n === 1 ? "" : "s"}`;

function cutText(text: string, max: number): { text: string; left: number } {
  return text.length > max ? { text: text.slice(0, max), left: text.length - max } : { text, left: 0 };
}

function keyPath(parent: string, key: string): { path: string; cut: boolean } {
  const { text, left } = cutText(key, KEY_CHARS);
  if (left === 0 && /^[A-Za-z_$][\w$-]*$/.test(key)) return { path: parent === "" ? key : `${parent}.${key}`, cut: false };
  return { path: `${parent}[${JSON.stringify(text)}${left > 0 ? ` ${more(left, "character")}` : ""}]`, cut: left > 0 };
}

function children(value: unknown): Array<[string | number, unknown]> | undefined {
  if (Array.isArray(value)) return value.map((v, i) => [i, v]);
  if (value !== null && typeof value === "object") return Object.entries(value as Record<string, unknown>);
  return undefined;
}

/**
 * The view: breadth first, so that every top-level field has its line before nested ones take
 * the room (padding nested under a first field cannot push a later field out); a container with
 * more children than lines left shows the first ones and a line that counts the rest.
 */
export function argumentsView(args: Record<string, unknown>): ArgumentsView {
  const lines: Array<{ order: number[]; line: string }> = [];
  const queue: Node[] = [{ path: "", value: args, order: [] }];
  let cutValues = 0;
  let omittedFields = 0;
  while (queue.length > 0) {
    const node = queue.shift() as Node;
    const kids = children(node.value);
    if (kids === undefined || kids.length === 0) {
      const shown = typeof node.value === "string" ? cutText(node.value, VALUE_CHARS) : { text: undefined, left: 0 };
      if (shown.left > 0) cutValues += 1;
      const path = node.path.length > PATH_CHARS ? `${node.path.slice(0, 100)}…(${node.path.length - 280} characters of path)…${node.path.slice(-180)}` : node.path;
      if (path !== node.path) cutValues += 1;
      const value = shown.text !== undefined ? `${JSON.stringify(shown.text)}${shown.left > 0 ? ` ${more(shown.left, "character")}` : ""}` : (JSON.stringify(node.value) ?? "null");
      lines.push({ order: node.order, line: node.path === "" ? "(no arguments)" : `${path}: ${value}` });
      continue;
    }
    // This node's own line is free to give to its children; the others queued keep theirs.
    const free = MAX_LINES - lines.length - queue.length;
    const fit = kids.length <= free ? kids.length : Math.max(0, free - 1);
    for (const [index, [key, value]] of kids.slice(0, fit).entries()) {
      const { path, cut } = typeof key === "number" ? { path: `${node.path}[${key}]`, cut: false } : keyPath(node.path, key);
      if (cut) cutValues += 1;
      queue.push({ path, value, order: [...node.order, index] });
    }
    if (fit < kids.length) {
      const left = kids.length - fit;
      omittedFields += left;
      const what = Array.isArray(node.value) ? "item" : "field";
      lines.push({ order: [...node.order, fit], line: `${node.path === "" ? "" : `${node.path}: `}${more(left, what)} not shown` });
    }
  }
  lines.sort((a, b) => compareOrder(a.order, b.order));
  const head =
    cutValues === 0 && omittedFields === 0
      ? "every field in full:"
      : `NOT ALL SHOWN: ${cutValues} value(s) cut to ${VALUE_CHARS} characters, ${omittedFields} field(s) left out; read them whole with GET /approvals/<approval id>:`;
  return { text: [head, ...lines.map((l) => l.line)].join("\n"), cutValues, omittedFields };
}

function compareOrder(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}
