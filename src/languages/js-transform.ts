// REPL-style rewrite of JavaScript with top-level await into an async IIFE for the Node runner.
// Owns keeping top-level declarations global across calls, static `import` and the user's line numbers intact.
import { parse } from "acorn";
import type { AnyNode, ImportDeclaration, Node, Pattern, Program, VariableDeclaration } from "acorn";
import { isStackOverflow, nestingError } from "./nesting.js";

export type JavaScriptMode = "script" | "async";

export interface PreparedJavaScript {
  code: string;
  mode: JavaScriptMode;
}

/** A replacement of `code.slice(start, end)`; `start === end` is an insertion. */
interface Edit {
  start: number;
  end: number;
  text: string;
}

// Nodes that open a new var scope: nothing inside them belongs to the top level.
const SCOPE_TYPES = new Set([
  "FunctionDeclaration",
  "FunctionExpression",
  "ArrowFunctionExpression",
  "StaticBlock",
]);

/** The Node runner's global that every `import()` and static `import` of user code goes through. */
export const IMPORT_FUNCTION = "__sandgateImport";

/**
 * The code as the Node runner should run it. Throws NestingTooDeepError for code nested deeper
 * than the parser (or the walks over its tree) can follow: V8 would fail on it as well.
 */
export function prepareJavaScript(code: string): PreparedJavaScript {
  try {
    return prepare(code);
  } catch (error) {
    if (isStackOverflow(error)) throw nestingError(code);
    throw error;
  }
}

function prepare(code: string): PreparedJavaScript {
  let mayAwait = code.includes("await");
  const mayImport = code.includes("import") || code.includes("export");
  if (!mayAwait && !mayImport && !/\b(?:let|const|class)\b/.test(code)) return { code, mode: "script" };
  let program = tryParse(code, "script");
  if (!program && mayImport) {
    // Static `import`/`export` parse only as a module; they become statements a script can run.
    const module = tryParse(code, "module");
    if (!module) return { code, mode: "script" };
    const rewritten = rewriteModuleDeclarations(code, module);
    if (rewritten.code === code) return { code, mode: "script" };
    code = rewritten.code;
    if (rewritten.failed) return { code, mode: "script" };
    mayAwait = true;
    program = tryParse(code, "script");
  }
  // Otherwise the runner compiles the original and reports the SyntaxError on the user's line.
  if (!program) return { code, mode: "script" };
  const imports = mayImport ? dynamicImportEdits(program) : [];
  if (!mayAwait || !hasTopLevelAwait(program)) return { code: redeclarableScript(code, program, imports), mode: "script" };
  return { code: wrapInAsyncFunction(code, program, imports), mode: "async" };
}

function tryParse(code: string, sourceType: "script" | "module"): Program | undefined {
  try {
    return parse(code, { ecmaVersion: "latest", sourceType, allowAwaitOutsideFunction: true });
  } catch (error) {
    if (isStackOverflow(error)) throw error;
    return undefined;
  }
}

/** `import(x)` anywhere becomes `__sandgateImport(x)`, which knows `sandgate:` modules too. */
function dynamicImportEdits(program: Program): Edit[] {
  const edits: Edit[] = [];
  visitAll(program, (node) => {
    if (node.type === "ImportExpression") edits.push({ start: node.start, end: node.start + "import".length, text: IMPORT_FUNCTION });
  });
  return edits;
}

/**
 * Top-level `import` declarations become awaited loads in the same place, with as many lines as
 * they had; `export` in front of a declaration is dropped. Other exports make code that throws a
 * SyntaxError on the export's line, since a call's code is a script, not a module.
 */
function rewriteModuleDeclarations(code: string, module: Program): { code: string; failed: boolean } {
  const edits: Edit[] = [];
  for (const statement of module.body) {
    if (statement.type === "ImportDeclaration") {
      const original = code.slice(statement.start, statement.end);
      const newlines = original.split("\n").length - 1;
      edits.push({ start: statement.start, end: statement.end, text: `${importStatement(code, statement)}${"\n".repeat(newlines)}` });
    } else if (statement.type === "ExportNamedDeclaration" && statement.declaration && !statement.source) {
      edits.push({ start: statement.start, end: statement.declaration.start, text: "" });
    } else if (statement.type === "ExportNamedDeclaration" || statement.type === "ExportDefaultDeclaration" || statement.type === "ExportAllDeclaration") {
      const line = code.slice(0, statement.start).split("\n").length;
      const message = `\`export\` is not supported here (line ${line}): code runs as a script, not a module; drop the export and make the value the last expression instead`;
      return { code: `${"\n".repeat(line - 1)}throw new SyntaxError(${JSON.stringify(message)});`, failed: true };
    }
  }
  return { code: applyEdits(code, edits), failed: false };
}

function importStatement(code: string, node: ImportDeclaration): string {
  const text = (n: Node): string => code.slice(n.start, n.end);
  const attributes = node.attributes.map((a) => `${text(a.key)}: ${text(a.value)}`);
  const load = `await ${IMPORT_FUNCTION}(${text(node.source)}${attributes.length > 0 ? `, { with: { ${attributes.join(", ")} } }` : ""})`;
  if (node.specifiers.length === 0) return `${load};`;
  let namespace: string | undefined;
  const fields: string[] = [];
  for (const specifier of node.specifiers) {
    if (specifier.type === "ImportNamespaceSpecifier") namespace = specifier.local.name;
    else if (specifier.type === "ImportDefaultSpecifier") fields.push(`default: ${specifier.local.name}`);
    else if (specifier.imported.type === "Identifier" && specifier.imported.name === specifier.local.name) fields.push(specifier.local.name);
    else fields.push(`${text(specifier.imported)}: ${specifier.local.name}`);
  }
  if (namespace === undefined) return `const { ${fields.join(", ")} } = ${load};`;
  return fields.length === 0 ? `const ${namespace} = ${load};` : `const ${namespace} = ${load}, { ${fields.join(", ")} } = ${namespace};`;
}

/**
 * Top-level `let`, `const` and `class` become `var` bindings, so that running a cell again (or
 * redefining a name later in the session) works as it does in Python, instead of throwing
 * "Identifier has already been declared". Columns stay put where the keyword allows.
 */
function redeclarableScript(code: string, program: Program, imports: Edit[]): string {
  const edits: Edit[] = [...imports];
  for (const statement of program.body) {
    if (statement.type === "VariableDeclaration" && statement.kind !== "var") {
      edits.push({ start: statement.start, end: statement.start + statement.kind.length, text: "var".padEnd(statement.kind.length, " ") });
    } else if (statement.type === "ClassDeclaration") {
      edits.push({ start: statement.start, end: statement.start, text: `var ${statement.id.name} = ` });
    }
  }
  return edits.length === 0 ? code : applyEdits(code, edits);
}

function hasTopLevelAwait(program: Program): boolean {
  let found = false;
  visitTopLevel(program, (node) => {
    if (node.type === "AwaitExpression") found = true;
    if (node.type === "ForOfStatement" && (node as Node & { await: boolean }).await) found = true;
  });
  return found;
}

/**
 * Declarations become assignments to globals so the next call sees them, the last
 * expression statement becomes the return value, and nothing adds a line before user code.
 */
function wrapInAsyncFunction(code: string, program: Program, imports: Edit[]): string {
  const edits: Edit[] = [...imports];
  const varNames = new Set<string>();
  const functionNames: string[] = [];
  const topLevel = new Set<Node>(program.body);
  const forHeads = new Set<Node>();

  if (code.startsWith("#!")) edits.push({ start: 0, end: 2, text: "//" });

  visitTopLevel(program, (node) => {
    if (node.type === "ForStatement" && node.init) forHeads.add(node.init);
    if (node.type === "ForInStatement" || node.type === "ForOfStatement") forHeads.add(node.left);
    if (node.type !== "VariableDeclaration" || node.kind !== "var") return;
    for (const declarator of node.declarations) boundNames(declarator.id).forEach((name) => varNames.add(name));
    // In `for (var i ...)` only the keyword goes; statements at the top level are rewritten below.
    if (forHeads.has(node)) edits.push({ start: node.start, end: node.start + 3, text: "" });
    else if (!topLevel.has(node)) edits.push(...declarationToAssignment(code, node));
  });

  for (const statement of program.body) {
    if (statement.type === "VariableDeclaration") {
      if (statement.kind === "var" || statement.kind === "let" || statement.kind === "const") {
        edits.push(...declarationToAssignment(code, statement));
      }
    } else if (statement.type === "FunctionDeclaration") {
      // The declaration stays in place so it is hoisted; its global copy is made first thing.
      functionNames.push(statement.id.name);
    } else if (statement.type === "ClassDeclaration") {
      edits.push({ start: statement.start, end: statement.start, text: `void (${statement.id.name} = ` });
      edits.push({ start: statement.end, end: statement.end, text: ");" });
    }
  }

  const last = program.body.filter((statement) => statement.type !== "EmptyStatement").at(-1);
  if (last?.type === "ExpressionStatement") {
    // Statement bounds, not the expression's: `({a: 1})` starts before its expression does.
    const end = code[last.end - 1] === ";" ? last.end - 1 : last.end;
    edits.push({ start: last.start, end: last.start, text: "return (" });
    edits.push({ start: end, end, text: ")" });
  }

  // `var` is hoisted: its global exists, as undefined, before the first statement runs.
  const prelude = [
    ...[...varNames].map((name) => `typeof ${name} === "undefined" && (${name} = void 0);`),
    ...functionNames.map((name) => `globalThis.${name} = ${name};`),
  ];
  // `void 0;` also ends the directive prologue, so a user "use strict" cannot make the
  // implicit global assignments throw.
  return `(async () => {void 0;${prelude.join("")}${applyEdits(code, edits)}\n})()`;
}

/** `const {a, b} = x, c;` becomes `void ({a, b} = x, c = void 0);` in the same place. */
function declarationToAssignment(code: string, declaration: VariableDeclaration): Edit[] {
  const edits: Edit[] = [
    { start: declaration.start, end: declaration.start + declaration.kind.length, text: "void (" },
  ];
  for (const declarator of declaration.declarations) {
    if (!declarator.init && declaration.kind !== "var") {
      edits.push({ start: declarator.end, end: declarator.end, text: " = void 0" });
    }
  }
  const lastEnd = declaration.declarations.at(-1)?.end ?? declaration.end;
  // Without its own semicolon the statement relied on ASI, which `)` might no longer trigger.
  const text = code[declaration.end - 1] === ";" ? ")" : ");";
  edits.push({ start: lastEnd, end: lastEnd, text });
  return edits;
}

function boundNames(pattern: Pattern): string[] {
  switch (pattern.type) {
    case "Identifier":
      return [pattern.name];
    case "ObjectPattern":
      return pattern.properties.flatMap((property) =>
        boundNames(property.type === "RestElement" ? property : property.value),
      );
    case "ArrayPattern":
      return pattern.elements.flatMap((element) => (element ? boundNames(element) : []));
    case "RestElement":
      return boundNames(pattern.argument);
    case "AssignmentPattern":
      return boundNames(pattern.left);
    case "MemberExpression":
      return [];
  }
}

function applyEdits(code: string, edits: Edit[]): string {
  // Stable sort keeps insertions at one position in the order they were made, before a replacement there.
  const sorted = [...edits].sort((a, b) => a.start - b.start || Number(a.end > a.start) - Number(b.end > b.start));
  let out = "";
  let cursor = 0;
  for (const edit of sorted) {
    out += code.slice(cursor, edit.start) + edit.text;
    cursor = edit.end;
  }
  return out + code.slice(cursor);
}

/** Calls `visit` on every node that runs in the top-level scope, parents before children. */
function visitTopLevel(node: Node, visit: (node: AnyNode) => void): void {
  visit(node as AnyNode);
  for (const value of Object.values(node)) {
    const children: unknown[] = Array.isArray(value) ? value : [value];
    for (const child of children) {
      if (isNode(child) && !SCOPE_TYPES.has(child.type)) visitTopLevel(child, visit);
    }
  }
}

/** Calls `visit` on every node of the tree, functions included. */
function visitAll(node: Node, visit: (node: AnyNode) => void): void {
  visit(node as AnyNode);
  for (const value of Object.values(node)) {
    const children: unknown[] = Array.isArray(value) ? value : [value];
    for (const child of children) {
      if (isNode(child)) visitAll(child, visit);
    }
  }
}

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";
}
