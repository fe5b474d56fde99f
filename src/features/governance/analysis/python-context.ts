// The state one Python analysis carries while it walks a tree: the findings so far, where it is (inside
// an endless loop?), and the facts that only mean something together (socket + dup2 = reverse shell).

import type { Node } from "web-tree-sitter";
import type { Category, Finding, Severity } from "../types.js";
import type { Evaluator } from "./python-values.js";

export interface Pos {
  line: number;
  endLine: number;
  column: number;
}

export function posOf(node: Node): Pos {
  return { line: node.startPosition.row + 1, endLine: node.endPosition.row + 1, column: node.startPosition.column + 1 };
}

/** Things seen on the way that later rules combine. */
export interface Facts {
  socketConnect?: Pos;
  socketListen?: Pos;
  dup2?: Pos;
  shellSpawn?: Pos;
  credentialRead?: Pos;
  networkSend?: Pos;
  /** Paths (folded text or source text of the expression) that downloaded data was written to. */
  downloads: string[];
}

export class PyContext {
  readonly findings: Finding[] = [];
  readonly facts: Facts = { downloads: [] };
  /** Innermost loop around the node being checked: "forever" for while True / itertools.count(). */
  loop: "forever" | "loop" | undefined;

  constructor(readonly ev: Evaluator) {}

  add(at: Node | Pos, category: Category, severity: Severity, name: string, message: string, recommendation: string): void {
    const pos = "line" in at ? at : posOf(at);
    const ruleId = `py.${category}.${name}`;
    if (this.findings.some((f) => f.ruleId === ruleId && f.line === pos.line && f.column === pos.column)) return;
    this.findings.push({ ruleId, category, severity, ...pos, message, recommendation });
  }

  has(category: Category, severity: Severity): boolean {
    return this.findings.some((f) => f.category === category && f.severity === severity);
  }

  isDownloaded(text: string | undefined): boolean {
    if (!text) return false;
    return this.facts.downloads.some((d) => d === text || (d.length >= 3 && text.includes(basename(d))));
  }
}

function basename(p: string): string {
  const i = p.lastIndexOf("/");
  return i >= 0 && i < p.length - 1 ? p.slice(i + 1) : p;
}
