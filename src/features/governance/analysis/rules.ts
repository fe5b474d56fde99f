// What each language's rule file gives the analyzer: the grammar it parses with, the node types the
// metrics count, and the function that turns a parse tree into findings.

import type { Node } from "web-tree-sitter";
import type { Finding } from "../types.js";
import type { GrammarName } from "./grammars.js";

export interface MetricNodeTypes {
  function: readonly string[];
  call: readonly string[];
  import: readonly string[];
  /** Nodes that add a path through the code (if, loops, case arms, boolean operators, catch). */
  branch: readonly string[];
}

/** A node from the analyzer's one native search of the tree, with its type (each read crosses into wasm). */
export interface FoundNode {
  node: Node;
  type: string;
}

/** Metric counts a rules file takes in its own walk over every named node (see LanguageRules.walkCounts). */
export interface WalkCounts {
  function: number;
  call: number;
  import: number;
  branch: number;
  /** How deeply function and branch nodes nest inside each other. */
  maxDepth: number;
}

export interface LanguageRules {
  grammar: GrammarName;
  metricNodes: MetricNodeTypes;
  /**
   * Node types the rules start from, searched for together with the metric types in one native pass;
   * return the same array for the same need (the joined type list is cached per array).
   */
  searchTypes?(source: string): readonly string[];
  /**
   * Every finding in the program; `source` is the text `root` was parsed from, `found` the nodes of the
   * metric types and of searchTypes(source), in document order.
   */
  findings(root: Node, source: string, found: readonly FoundNode[], counts?: WalkCounts): Finding[];
  /** The rules walk every named node of the tree and fill `counts` for the metric types: the analyzer skips its search. */
  walkCounts?: boolean;
}

/** A finding at `node`'s position (tree-sitter rows and columns are 0-based, findings 1-based). */
export function findingAt(node: Node, finding: Omit<Finding, "line" | "endLine" | "column">): Finding {
  return { ...finding, line: node.startPosition.row + 1, endLine: node.endPosition.row + 1, column: node.startPosition.column + 1 };
}
