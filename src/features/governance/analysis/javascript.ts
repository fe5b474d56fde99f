// The JavaScript and TypeScript rules: one cursor walk collects the nodes that matter, bindings resolve aliases,
// then per-node rules run and whole-program rules join them (socket + shell, download + run, secret + send).

import type { Node } from "web-tree-sitter";
import type { Finding } from "../types.js";
import { checkCall, secretName } from "./javascript-calls.js";
import { enclosingFunction, ObjectRules } from "./javascript-objects.js";
import { Program, type Facts } from "./javascript-program.js";
import type { Binding } from "./javascript-values.js";
import type { LanguageRules, MetricNodeTypes } from "./rules.js";

const METRIC_NODES: MetricNodeTypes = {
  function: ["function_declaration", "function_expression", "arrow_function", "method_definition", "generator_function_declaration", "generator_function"],
  call: ["call_expression", "new_expression"],
  import: ["import_statement"],
  branch: ["if_statement", "for_statement", "for_in_statement", "while_statement", "do_statement", "switch_case", "catch_clause", "ternary_expression"],
};

const BINDING_TYPES = new Set(["variable_declarator", "import_statement", "assignment_expression", "function_declaration", "generator_function_declaration", "class_declaration"]);
/** Values that carry no data (functions, classes, literals): no need to look inside them for secrets. */
const VALUELESS = new Set(["arrow_function", "function_expression", "class", "number", "true", "false", "null", "regex", "object_pattern"]);
const NO_FACTS: Facts = { decoded: false, remote: false };
/** Values whose node a binding keeps for the resolver to look into. */
const FOLLOWED = new Set(["object", "array", "arrow_function", "function_expression", "function", "class", "new_expression"]);
const LOOP_TYPES = new Set(["while_statement", "for_statement", "do_statement"]);
const COLLECTED_TYPES = ["call_expression", "new_expression", ...BINDING_TYPES, "augmented_assignment_expression", ...LOOP_TYPES];
/** Strings worth a look: prototype payloads, metadata hosts, paste and webhook sites. */
const STRING_HINT = /__proto__|constructor.{0,6}prototype|169\.254\.169\.254|metadata\.google|100\.100\.100\.200|webhooks|pastebin|paste\.ee|hastebin|ngrok|transfer\.sh|requestbin|pipedream|webhook\.site|burpcollab|interact\.sh|oast\.|\.onion|api\.telegram|docker\.sock/i;
const PAIR_HINT = /rejectUnauthorized|strictSSL|NODE_TLS_REJECT_UNAUTHORIZED|checkServerIdentity|noent/;
/** Unicode bidirectional controls make code read differently from how it runs ("trojan source"). */
const BIDI = /[\u202A-\u202E\u2066-\u2069]/;

interface Collected {
  bindings: Node[];
  calls: Node[];
  assignments: Node[];
  pairs: Node[];
  strings: Node[];
  loops: Node[];
}

function collect(root: Node, source: string): Collected {
  const types = [...COLLECTED_TYPES];
  if (PAIR_HINT.test(source)) types.push("pair");
  if (STRING_HINT.test(source)) types.push("string", "template_string");
  const out: Collected = { bindings: [], calls: [], assignments: [], pairs: [], strings: [], loops: [] };
  // One native walk for every type of interest: several times faster than a cursor driven from JavaScript.
  for (const node of root.descendantsOfType(types)) {
    const type = node.type;
    if (type === "call_expression" || type === "new_expression") out.calls.push(node);
    else if (BINDING_TYPES.has(type)) {
      out.bindings.push(node);
      if (type === "assignment_expression") out.assignments.push(node);
    } else if (type === "augmented_assignment_expression") {
      out.assignments.push(node);
      out.bindings.push(node);
    }
    else if (LOOP_TYPES.has(type)) out.loops.push(node);
    else if (type === "pair") out.pairs.push(node);
    else out.strings.push(node);
  }
  return out;
}

/** Records what `name` is bound to by a declaration, import or assignment, and what the value carries. */
function bind(program: Program, node: Node): void {
  if (node.type === "import_statement") return bindImport(program, node);
  if (node.type === "augmented_assignment_expression") {
    // `s += chunk`: whatever s was, it is no longer a constant.
    const target = node.childForFieldName("left");
    if (target?.type === "identifier") program.scope.bindings.set(target.text, { name: `local:${target.text}` });
    return;
  }
  if (node.type === "function_declaration" || node.type === "generator_function_declaration" || node.type === "class_declaration") {
    // The program's own function or class of that name, not a builtin or module function; its node
    // lets calls see what it returns (an identity function hands its argument on).
    const name = node.childForFieldName("name");
    if (name) program.scope.bindings.set(name.text, { name: `local:${name.text}`, node });
    return;
  }
  const target = node.childForFieldName(node.type === "variable_declarator" ? "name" : "left");
  const value = node.childForFieldName(node.type === "variable_declarator" ? "value" : "right");
  if (!target || !value) return;
  const { scope } = program;
  const facts = VALUELESS.has(value.type) ? NO_FACTS : program.facts(value);
  const names: string[] = [];
  if (target.type === "identifier") {
    names.push(target.text);
    const folded = scope.foldInfo(value);
    let binding: Binding | undefined = folded?.value !== undefined ? folded : undefined;
    if (!binding && value.type === "array") {
      const array = scope.foldArray(value);
      if (array) binding = { name: `local:${target.text}`, array };
    }
    if (!binding) {
      const resolved = scope.resolve(value);
      if (resolved) binding = { name: resolved.name, built: resolved.built };
    }
    if (value.type === "template_string" || (value.type === "binary_expression" && [value.childForFieldName("left")?.type, value.childForFieldName("right")?.type].some((type) => type === "string" || type === "template_string")) || (value.type === "call_expression" && /\.(toString|join)$|^(atob|String)$/.test(value.childForFieldName("function")?.text ?? "")))
      program.stringVars.add(target.text);
    // A variable of unknown value still shadows a builtin or module function of the same name; literals,
    // functions and constructed objects keep their node, so `o.r`, `a[0]` and `f()` can be followed.
    scope.bindings.set(target.text, binding ?? { name: `local:${target.text}`, ...(FOLLOWED.has(value.type) ? { node: value } : {}) });
    if (binding?.decoded && binding.value !== undefined && /require\s*\(|child_process|eval\s*\(|Function\s*\(|process\.|https?:\/\/|\/bin\/(ba)?sh/.test(binding.value))
      program.add(node, "hidden-code", "obfuscation", "high", `${target.text} is decoded from an encoded string into code or a command`, "Ship readable code; encoded payloads hide what runs.");
  } else if (target.type === "object_pattern") {
    const base = scope.resolve(value);
    for (const property of target.namedChildren) {
      let key: string | undefined;
      let local: string | undefined;
      if (property.type === "shorthand_property_identifier_pattern") key = local = property.text;
      else if (property.type === "pair_pattern") {
        const keyNode = property.childForFieldName("key");
        key = keyNode?.type === "string" ? scope.fold(keyNode) : keyNode?.type === "computed_property_name" ? scope.fold(keyNode.namedChild(0)) : keyNode?.text;
        const valueNode = property.childForFieldName("value");
        local = valueNode?.type === "identifier" ? valueNode.text : valueNode?.type === "assignment_pattern" ? valueNode.childForFieldName("left")?.text : undefined;
      } else if (property.type === "object_assignment_pattern") key = local = property.childForFieldName("left")?.text;
      if (key === undefined || local === undefined) continue;
      names.push(local);
      scope.bindings.set(local, base ? { name: key === "default" ? base.name : `${base.name}.${key}`, built: base.built } : { name: `local:${local}` });
    }
  } else return;
  for (const name of names) {
    if (facts.secret) program.secrets.set(name, facts.secret);
    if (facts.decoded) program.decodedVars.add(name);
    if (facts.remote) program.remoteVars.add(name);
  }
}

function bindImport(program: Program, node: Node): void {
  const sourceNode = node.childForFieldName("source");
  const clause = node.namedChildren.find((child) => child.type === "import_clause" || child.type === "import_require_clause");
  if (!clause) return;
  if (clause.type === "import_require_clause") {
    const local = clause.namedChildren.find((child) => child.type === "identifier");
    const spec = program.scope.fold(clause.childForFieldName("source"));
    if (local && spec !== undefined) program.scope.bindings.set(local.text, { name: moduleOf(spec) });
    return;
  }
  const spec = program.scope.fold(sourceNode);
  if (spec === undefined) return;
  const module = moduleOf(spec);
  for (const part of clause.namedChildren) {
    if (part.type === "identifier") program.scope.bindings.set(part.text, { name: module });
    else if (part.type === "namespace_import") {
      const local = part.namedChildren.find((child) => child.type === "identifier");
      if (local) program.scope.bindings.set(local.text, { name: module });
    } else if (part.type === "named_imports") {
      for (const specifier of part.namedChildren) {
        if (specifier.type !== "import_specifier") continue;
        const imported = specifier.childForFieldName("name");
        const alias = specifier.childForFieldName("alias") ?? imported;
        if (!imported || !alias) continue;
        const key = imported.type === "string" ? program.scope.fold(imported) : imported.text;
        program.scope.bindings.set(alias.text, { name: key === "default" ? module : `${module}.${key}` });
      }
    }
  }
}

function moduleOf(spec: string): string {
  let name = spec.startsWith("node:") ? spec.slice(5) : spec;
  if (name.endsWith("/promises")) name = name.slice(0, -"/promises".length);
  return name;
}

/** `import("child_process").then((cp) => ...)` binds `cp` to the module. */
function bindThen(program: Program, node: Node): void {
  const callee = node.childForFieldName("function");
  if (callee?.type !== "member_expression" || callee.childForFieldName("property")?.text !== "then") return;
  const module = program.scope.resolve(callee.childForFieldName("object"));
  const callback = node.childForFieldName("arguments")?.namedChild(0);
  if (!module || !callback || (callback.type !== "arrow_function" && callback.type !== "function_expression")) return;
  const param = callback.childForFieldName("parameter") ?? callback.childForFieldName("parameters")?.namedChild(0);
  const local = param?.type === "identifier" ? param : param?.type === "required_parameter" ? param.childForFieldName("pattern") : undefined;
  if (local?.type === "identifier") program.scope.bindings.set(local.text, { name: module.name.replace(/\(\)$/, ""), built: module.built });
}

function isInfinite(loop: Node): boolean {
  if (loop.type === "for_statement") {
    const condition = loop.childForFieldName("condition");
    return !condition || condition.type === "empty_statement" || /^\(?\s*(true|1|!0)\s*;?\)?$/.test(condition.text);
  }
  const condition = loop.childForFieldName("condition")?.text.replace(/\s/g, "");
  return condition === "(true)" || condition === "(1)" || condition === "(!0)" || condition === "(!false)";
}

/** Whether a loop body can leave the loop (break, return, throw, process.exit) or waits (await, yield). */
function loopExits(loop: Node): { exits: boolean; waits: boolean } {
  const body = loop.childForFieldName("body");
  const text = body?.text ?? "";
  return { exits: /\b(break|return|throw)\b|process\.exit/.test(text), waits: /\b(await|yield)\b/.test(text) };
}

function wholeProgram(program: Program, loops: Node[]): void {
  const infinite = loops.filter(isInfinite).map((loop) => ({ loop, ...loopExits(loop) }));
  const spawns = program.spawnCalls;
  for (const { loop, exits, waits } of infinite) {
    const inside = spawns.filter((spawn) => spawn.startIndex >= loop.startIndex && spawn.endIndex <= loop.endIndex);
    if (inside.length > 0)
      program.add(inside[0] as Node, exits ? "spawn-loop" : "fork-bomb", "resource-abuse", exits ? "medium" : "critical", exits ? "starts processes or workers in an unbounded loop" : "starts processes or workers in a loop that never ends (fork bomb)", "Bound the number of processes you start; use a pool.");
    else if (!exits && !waits) program.add(loop, "endless-loop", "resource-abuse", "medium", "this loop never ends", "Give the loop an exit condition.");
  }
  for (const spawn of spawns) {
    // A function that starts a process and calls itself multiplies without bound.
    const fn = enclosingFunction(spawn);
    const name = fn?.childForFieldName("name")?.text;
    const body = fn?.childForFieldName("body");
    const text = body?.text ?? "";
    if (!name || text.length > 20_000 || !new RegExp(`(^|[^\\w$.])${name.replace(/\$/g, "\\$")}\\s*\\(`).test(text)) continue;
    // Without a condition anywhere in the body the recursion has no base case.
    const bounded = /\b(if|return|switch)\b|\?|&&|\|\|/.test(text);
    program.add(spawn, "recursive-spawn", "resource-abuse", bounded ? "medium" : "critical", bounded ? `${name} starts a process and calls itself` : `${name} starts a process and calls itself without end (fork bomb)`, "Bound the number of processes you start; use a pool.");
  }
  if (program.sockets.length > 0 && program.shells.length > 0)
    program.add(program.shells[0] as Node, "socket-shell", "reverse-shell", "critical", "starts a shell in a program that opens a raw socket (reverse or bind shell)", "Remove it: a shell on a socket hands control of the sandbox to a remote party.");
  if (program.downloads.length > 0 && program.dynamicRuns.length > 0)
    program.add(program.dynamicRuns[0] as Node, "download-run", "download-exec", "critical", "downloads data and runs code, a command or a newly executable file", "Install dependencies with the package manager; never run what you download.");
  const sentSecrets = program.findings.some((finding) => finding.ruleId.endsWith("send-secrets"));
  const secret = program.strongSecret;
  if (secret && !sentSecrets && program.sends.length > 0)
    program.add(program.sends[0] as Node, "gather-and-send", "exfiltration", secret === "metadata" ? "high" : "critical", `gathers ${secretName(secret)} and sends data over the network`, "Never send credentials, keys or the environment out of the sandbox.");
}

function findings(root: Node, source: string, prefix: string): Finding[] {
  const program = new Program(prefix, source);
  const collected = collect(root, source);
  for (const call of collected.calls) if (call.type === "call_expression") bindThen(program, call);
  for (const node of collected.bindings) bind(program, node);
  for (const call of collected.calls) checkCall(program, call);
  const objects = new ObjectRules(program);
  for (const node of collected.assignments) objects.assignment(node);
  for (const node of collected.pairs) objects.pair(node);
  for (const node of collected.strings) objects.string(node);
  const obfuscatedNames = source.includes("_0x") ? (source.match(/\b_0x[0-9a-f]{4,}\b/g)?.length ?? 0) : 0;
  if (obfuscatedNames >= 8) program.add(root, "obfuscator-names", "obfuscation", "medium", "the code uses obfuscator-generated names (_0x...)", "Ship readable source; obfuscated code cannot be reviewed.");
  if (BIDI.test(source)) program.add(root, "bidi-control", "obfuscation", "high", "the source contains Unicode bidirectional control characters, which hide what the code does", "Remove bidirectional control characters from code.");
  wholeProgram(program, collected.loops);
  return program.findings;
}

export const javascriptRules: LanguageRules = {
  grammar: "javascript",
  metricNodes: METRIC_NODES,
  findings: (root, source) => findings(root, source, "js"),
};

/** TypeScript shares the rules: the grammar adds type nodes, which the rules look through. */
export const typescriptRules: LanguageRules = {
  grammar: "typescript",
  metricNodes: METRIC_NODES,
  findings: (root, source) => findings(root, source, "js"),
};
