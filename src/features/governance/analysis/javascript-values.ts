// What a JavaScript/TypeScript expression stands for, as far as the analysis can tell without running it:
// constant strings folded (concatenation, templates, join, fromCharCode, base64/hex), names resolved through aliases.

import type { Node } from "web-tree-sitter";
import { append, charge, charged, concat, join, replaceAll, reverse } from "./fold-budget.js";

/** What a variable was bound to: a dotted name ("child_process", "child_process.exec", "eval") or a constant string. */
export interface Binding {
  name?: string;
  value?: string;
  /** The name or value was computed (concatenation, decoding, computed member) rather than written out. */
  built?: boolean;
  /** The value came out of a decoder (atob, Buffer.from(.., "base64"), fromCharCode, ...). */
  decoded?: boolean;
  /** An array of constant strings (obfuscators keep names in one: `_0x12ab[3]`). */
  array?: string[];
  /** The value's node, for literals, functions, classes and constructed objects the resolver looks into. */
  node?: Node;
}

/** A resolved callee or member: a dotted name with the node prefix and `.default` removed. */
export interface Resolved {
  name: string;
  built: boolean;
}

const GLOBAL_OBJECTS = new Set(["globalThis", "global", "window", "self"]);
const MAX_DEPTH = 24;

/** Names the program can reach without importing anything. */
const GLOBALS = new Set([
  "eval", "Function", "require", "fetch", "setTimeout", "setInterval", "setImmediate", "atob", "btoa", "Buffer", "process",
  "Object", "Reflect", "String", "JSON", "module", "WebSocket", "XMLHttpRequest", "Worker", "unescape", "decodeURIComponent",
  "Array", "import", "document", "localStorage", "navigator", "Deno", "Bun", "RegExp",
]);

/** Node modules as programs usually name them. */
const USUAL_MODULE_NAMES = new Set(["fs", "child_process", "cp", "vm", "net", "http", "https", "os", "path", "v8", "dgram", "tls", "dns", "zlib", "cluster", "worker_threads", "axios"]);

/** child_process functions as snippets call them after destructuring elsewhere; own functions of these names are bound. */
const CHILD_PROCESS_FUNCTIONS = new Set(["exec", "execSync", "execFile", "execFileSync", "spawn", "spawnSync"]);

export class Scope {
  readonly bindings = new Map<string, Binding>();

  /** Node module names, with the `node:` scheme and a trailing `/promises` folded into the base module. */
  static moduleName(spec: string): string {
    let name = spec.startsWith("node:") ? spec.slice(5) : spec;
    if (name.endsWith("/promises")) name = name.slice(0, -"/promises".length);
    return name;
  }

  /** The constant string `node` always evaluates to, if the analysis can tell. */
  fold(node: Node | null, depth = 0): string | undefined {
    return this.foldInfo(node, depth)?.value;
  }

  /** Like fold, saying also whether the string was built or decoded rather than written as one literal. */
  foldInfo(node: Node | null, depth = 0): Binding | undefined {
    if (!node || depth > MAX_DEPTH) return undefined;
    switch (node.type) {
      case "string":
        return { value: stringLiteral(node) };
      case "template_string": {
        let out = "";
        let built = false;
        let decoded = false;
        for (const child of node.namedChildren) {
          if (child.type === "string_fragment") out = append(out, child.text);
          else if (child.type === "escape_sequence") out = append(out, unescapeJs(child.text));
          else if (child.type === "template_substitution") {
            const inner = this.foldInfo(child.namedChild(0), depth + 1);
            if (inner?.value === undefined) return undefined;
            out = append(out, inner.value);
            built = true;
            decoded ||= inner.decoded === true;
          }
        }
        return { value: out, built, decoded };
      }
      case "number":
        return { value: String(Number(node.text.replace(/_/g, ""))) };
      case "parenthesized_expression":
      case "as_expression":
      case "satisfies_expression":
      case "non_null_expression":
        return this.foldInfo(node.namedChild(0), depth + 1);
      case "identifier": {
        const bound = this.bindings.get(node.text);
        return bound?.value !== undefined ? { value: bound.value, built: bound.built ?? false, decoded: bound.decoded ?? false } : undefined;
      }
      case "binary_expression": {
        if (node.childForFieldName("operator")?.text !== "+") return undefined;
        const left = this.foldInfo(node.childForFieldName("left"), depth + 1);
        if (left?.value === undefined) return undefined;
        const right = this.foldInfo(node.childForFieldName("right"), depth + 1);
        if (right?.value === undefined) return undefined;
        return { value: concat([left.value, right.value]), built: true, decoded: left.decoded === true || right.decoded === true };
      }
      case "call_expression":
        return this.foldCall(node, depth);
      case "subscript_expression": {
        const object = node.childForFieldName("object");
        const array = object?.type === "identifier" ? this.bindings.get(object.text)?.array : undefined;
        if (!array) return undefined;
        const element = array[Number(this.fold(node.childForFieldName("index"), depth + 1))];
        return element === undefined ? undefined : { value: element, built: true };
      }
      default:
        return undefined;
    }
  }

  /** The constant strings of an array literal, if every element folds. */
  foldArray(node: Node, depth = 0): string[] | undefined {
    if (node.type !== "array") return undefined;
    const out: string[] = [];
    for (const element of node.namedChildren) {
      const value = this.fold(element, depth + 1);
      if (value === undefined) return undefined;
      out.push(value);
    }
    return out;
  }

  private foldCall(node: Node, depth: number): Binding | undefined {
    const callee = node.childForFieldName("function");
    const args = node.childForFieldName("arguments")?.namedChildren ?? [];
    if (!callee) return undefined;
    let name = this.resolve(callee, depth + 1)?.name;
    let codeArgs = args;
    if (name === "String.fromCharCode.apply" || name === "String.fromCharCode.call") {
      codeArgs = name.endsWith("apply") ? (args[1]?.type === "array" ? args[1].namedChildren : []) : args.slice(1);
      name = "String.fromCharCode";
    }
    if (name === "String.fromCharCode") {
      const codes = codeArgs.map((arg) => Number(this.fold(arg, depth + 1)));
      if (codes.some((code) => !Number.isInteger(code) || code < 0 || code > 0xffff)) return undefined;
      charge(codes.length);
      let value = "";
      for (const code of codes) value += String.fromCharCode(code); // no spread: 100 000 arguments overflow the stack
      return { value, built: true, decoded: true };
    }
    if (name === "atob" || name === "Buffer.from" || name === "decodeURIComponent" || name === "unescape") {
      const input = this.fold(args[0] ?? null, depth + 1);
      if (input === undefined) return undefined;
      const encoding = name === "atob" ? "base64" : name === "Buffer.from" ? (this.fold(args[1] ?? null, depth + 1) ?? "utf8") : "uri";
      const value = decode(input, encoding);
      return value === undefined ? undefined : { value, built: true, decoded: encoding !== "utf8" };
    }
    if (callee.type !== "member_expression") return undefined;
    const method = callee.childForFieldName("property")?.text;
    const object = callee.childForFieldName("object");
    if (method === "join" && object?.type === "array") {
      const parts = object.namedChildren.map((part) => this.foldInfo(part, depth + 1));
      if (parts.some((part) => part?.value === undefined)) return undefined;
      const separator = args[0] ? this.fold(args[0], depth + 1) : ",";
      if (separator === undefined) return undefined;
      return { value: join(parts.map((part) => part?.value ?? ""), separator), built: true, decoded: parts.some((part) => part?.decoded) };
    }
    const inner = this.foldInfo(object, depth + 1);
    if (inner?.value === undefined) return undefined;
    const decoded = inner.decoded === true;
    switch (method ?? "") {
      case "toString": {
        // Buffer.from(x, "base64").toString() already decoded; "hex" output is not code.
        const encoding = args[0] ? this.fold(args[0], depth + 1) : undefined;
        return encoding === undefined || encoding === "utf8" || encoding === "utf-8" || encoding === "ascii" || encoding === "latin1"
          ? { value: inner.value, built: true, decoded }
          : undefined;
      }
      case "join":
        // "abc".split("").reverse().join(""): the folded value is already the joined string.
        return args[0] && this.fold(args[0], depth + 1) === "" ? { value: inner.value, built: true, decoded } : undefined;
      case "split":
        return { value: inner.value, built: true, decoded }; // the following .join() puts it back together
      case "reverse":
        return { value: reverse(inner.value), built: true, decoded: true };
      case "toLowerCase":
        return { value: charged(inner.value.toLowerCase()), built: true, decoded };
      case "toUpperCase":
        return { value: charged(inner.value.toUpperCase()), built: true, decoded };
      case "trim":
        return { value: inner.value.trim(), built: true, decoded };
      case "concat": {
        const rest = args.map((arg) => this.fold(arg, depth + 1));
        if (rest.some((part) => part === undefined)) return undefined;
        return { value: concat([inner.value, ...rest.map((part) => part ?? "")]), built: true, decoded };
      }
      case "replace":
      case "replaceAll": {
        const from = this.fold(args[0] ?? null, depth + 1);
        const to = this.fold(args[1] ?? null, depth + 1);
        if (from === undefined || to === undefined) return undefined;
        return { value: replaceAll(inner.value, from, to), built: true, decoded };
      }
      case "slice":
      case "substring": {
        const start = Number(this.fold(args[0] ?? null, depth + 1) ?? 0);
        const end = args[1] ? Number(this.fold(args[1], depth + 1)) : undefined;
        if (!Number.isInteger(start) || (end !== undefined && !Number.isInteger(end))) return undefined;
        return { value: inner.value.slice(start, end), built: true, decoded };
      }
      default:
        return undefined;
    }
  }

  /**
   * The dotted name an expression refers to: `cp.exec` after `const cp = require("child_process")` is
   * "child_process.exec"; a call adds "()" (`net.connect().write`). Undefined for anything else.
   */
  resolve(node: Node | null, depth = 0): Resolved | undefined {
    if (!node || depth > MAX_DEPTH) return undefined;
    switch (node.type) {
      case "identifier":
      case "this": {
        const bound = this.bindings.get(node.text);
        // The program's own variables and functions resolve to nothing: they shadow builtins of the same name.
        if (bound?.name !== undefined) return bound.name.startsWith("local:") ? undefined : { name: bound.name, built: bound.built ?? false };
        if (bound?.value !== undefined) return undefined;
        if (GLOBALS.has(node.text) || GLOBAL_OBJECTS.has(node.text)) return { name: node.text, built: false };
        // Snippets often use a module under its usual name without the require; read `fs.x` as the module's.
        if (USUAL_MODULE_NAMES.has(node.text)) return { name: node.text === "cp" ? "child_process" : node.text, built: false };
        if (CHILD_PROCESS_FUNCTIONS.has(node.text)) return { name: `child_process.${node.text}`, built: false };
        return undefined;
      }
      case "parenthesized_expression":
      case "await_expression":
      case "as_expression":
      case "satisfies_expression":
      case "non_null_expression":
      case "type_assertion":
        return this.resolve(node.namedChildren.find((child) => child.type !== "type_arguments") ?? null, depth + 1);
      case "sequence_expression": {
        const last = node.namedChildren.at(-1);
        return this.resolve(last ?? null, depth + 1); // (0, eval)(x) is an indirect eval
      }
      case "import":
        return { name: "import", built: false };
      case "member_expression":
      case "subscript_expression": {
        const object = node.childForFieldName("object");
        const element = this.elementOf(node, depth);
        if (element) return element;
        const base = this.resolve(object, depth + 1);
        let property: string | undefined;
        let built = false;
        if (node.type === "member_expression") property = node.childForFieldName("property")?.text;
        else {
          const index = node.childForFieldName("index");
          const folded = this.foldInfo(index, depth + 1);
          property = folded?.value;
          built = index?.type !== "string" || folded?.built === true;
        }
        if (property === undefined) return undefined;
        if (!base) {
          // "".constructor.constructor, [].constructor.constructor, (() => {}).constructor: the Function constructor.
          if (property === "constructor" && object?.type === "member_expression" && object.childForFieldName("property")?.text === "constructor")
            return { name: "Function", built };
          if (property === "constructor" && object && ["arrow_function", "function_expression", "function"].includes(object.type))
            return { name: "Function", built };
          if (property === "constructor" && object?.type === "subscript_expression") {
            const inner = this.fold(object.childForFieldName("index"), depth + 1);
            if (inner === "constructor") return { name: "Function", built: true };
          }
          return undefined;
        }
        if (GLOBAL_OBJECTS.has(base.name)) return { name: property, built: base.built || built };
        // Object.getPrototypeOf(async function () {}).constructor is AsyncFunction, a Function constructor.
        if (property === "constructor" && (base.name === "Object.getPrototypeOf()" || base.name === "Reflect.getPrototypeOf()")) return { name: "Function", built: true };
        if (property === "default" && !base.name.endsWith(")")) return base;
        if (base.name === "Function" && property === "constructor") return base;
        if (property === "constructor" && base.name.endsWith(".constructor")) return { name: "Function", built: true };
        return { name: `${base.name}.${property}`, built: base.built || built };
      }
      case "call_expression": {
        const callee = node.childForFieldName("function");
        const returned = this.returnedBy(node, depth);
        if (returned) return returned;
        const calleeName = this.resolve(callee, depth + 1);
        if (!calleeName) return undefined;
        const args = node.childForFieldName("arguments")?.namedChildren ?? [];
        const moduleOf = this.requiredModule(calleeName.name, args, depth);
        if (moduleOf) return moduleOf.value === undefined ? undefined : { name: Scope.moduleName(moduleOf.value), built: calleeName.built || moduleOf.built === true };
        if (calleeName.name === "util.promisify" || calleeName.name === "util.callbackify") return this.resolve(args[0] ?? null, depth + 1);
        if (calleeName.name === "Reflect.get") {
          const target = this.resolve(args[0] ?? null, depth + 1);
          const key = this.foldInfo(args[1] ?? null, depth + 1);
          return target && key?.value !== undefined ? { name: GLOBAL_OBJECTS.has(target.name) ? key.value : `${target.name}.${key.value}`, built: true } : undefined;
        }
        // Function.call.bind(Object.hasOwnProperty) uncurries its argument; it is not the Function constructor.
        if (calleeName.name.endsWith(".call.bind") || calleeName.name.endsWith(".apply.bind")) return undefined;
        if (calleeName.name.endsWith(".bind")) return { name: calleeName.name.slice(0, -5), built: calleeName.built };
        if (calleeName.name === "module.createRequire" || calleeName.name === "createRequire") return { name: "require", built: false };
        return { name: `${calleeName.name}()`, built: calleeName.built };
      }
      case "new_expression": {
        const ctor = this.resolve(node.childForFieldName("constructor"), depth + 1);
        return ctor ? { name: `${ctor.name}()`, built: ctor.built } : undefined;
      }
      default:
        return undefined;
    }
  }

  /** The literal, function, class or `new` expression `node` stands for: itself, or what a variable was bound to. */
  private literalOf(node: Node | null, depth: number): Node | undefined {
    let current = node;
    for (let hops = 0; current && hops + depth <= MAX_DEPTH; hops++) {
      const type = current.type;
      if (type === "parenthesized_expression" || type === "as_expression" || type === "satisfies_expression" || type === "non_null_expression") current = current.namedChild(0);
      else if (type === "identifier") current = this.bindings.get(current.text)?.node ?? null;
      else return current;
    }
    return undefined;
  }

  /**
   * A callable taken out of a literal container or object: `[require][0]`, `{r: require}.r`, `o.r`
   * after `const o = {r: require}`, `new A(require).r` with a constructor parameter property `r`.
   * An index the analysis cannot tell gives the first element that resolves.
   */
  private elementOf(node: Node, depth: number): Resolved | undefined {
    const container = this.literalOf(node.childForFieldName("object"), depth + 1);
    if (!container) return undefined;
    const key = node.type === "member_expression" ? node.childForFieldName("property")?.text : this.fold(node.childForFieldName("index"), depth + 1);
    const indirect = (found: Resolved | undefined): Resolved | undefined => (found ? { name: found.name, built: true } : undefined);
    if (container.type === "array") {
      const elements = container.namedChildren;
      const index = Number(key);
      if (key !== undefined && Number.isInteger(index)) return indirect(this.resolve(elements[index] ?? null, depth + 1));
      for (const element of elements) {
        const found = this.resolve(element, depth + 1);
        if (found) return indirect(found);
      }
      return undefined;
    }
    if (container.type === "object" && key !== undefined) {
      for (const member of container.namedChildren) {
        if (member.type === "shorthand_property_identifier" && member.text === key) return indirect(this.resolve(member, depth + 1));
        if (member.type !== "pair") continue;
        const keyNode = member.childForFieldName("key");
        const name = keyNode?.type === "property_identifier" ? keyNode.text : this.fold(keyNode?.type === "computed_property_name" ? keyNode.namedChild(0) : (keyNode ?? null), depth + 1);
        if (name === key) return indirect(this.resolve(member.childForFieldName("value"), depth + 1));
      }
      return undefined;
    }
    if (container.type === "new_expression" && key !== undefined) {
      const cls = this.literalOf(container.childForFieldName("constructor"), depth + 1);
      const index = cls ? constructorProperties(cls).indexOf(key) : -1;
      const args = container.childForFieldName("arguments")?.namedChildren ?? [];
      if (index >= 0) return indirect(this.resolve(args[index] ?? null, depth + 1));
    }
    return undefined;
  }

  /** What a call of the program's own function gives back: the argument an identity function returns, or a callable it names. */
  private returnedBy(call: Node, depth: number): Resolved | undefined {
    const fn = this.literalOf(call.childForFieldName("function"), depth + 1);
    if (!fn || !FUNCTION_TYPES.has(fn.type)) return undefined;
    const params = parameterNames(fn);
    const args = call.childForFieldName("arguments")?.namedChildren ?? [];
    for (const returned of returnedExpressions(fn)) {
      const index = returned.type === "identifier" ? params.indexOf(returned.text) : -1;
      const found = index >= 0 ? this.resolve(args[index] ?? null, depth + 1) : this.resolve(returned, depth + 1);
      if (found) return { name: found.name, built: true };
    }
    return undefined;
  }

  /** When `callee` loads a module (require, import(), module.require, ...), the module's name as folded. */
  requiredModule(callee: string, args: Node[], depth = 0): Binding | undefined {
    if (!isLoader(callee)) return undefined;
    return this.foldInfo(args[0] ?? null, depth + 1) ?? {};
  }
}

const FUNCTION_TYPES = new Set(["arrow_function", "function_expression", "function", "function_declaration", "generator_function_declaration"]);

/** A function's parameter names in order (plain, typed, defaulted); "" for patterns. */
function parameterNames(fn: Node): string[] {
  const single = fn.childForFieldName("parameter");
  if (single) return [single.text];
  return (fn.childForFieldName("parameters")?.namedChildren ?? []).map((param) => {
    if (param.type === "identifier") return param.text;
    const pattern = param.childForFieldName("pattern") ?? param.childForFieldName("left");
    return pattern?.type === "identifier" ? pattern.text : "";
  });
}

/** The expressions a function returns: an arrow's body, or its own return statements (not those of nested functions). */
function returnedExpressions(fn: Node): Node[] {
  const body = fn.childForFieldName("body");
  if (!body) return [];
  if (body.type !== "statement_block") return [body];
  return body.descendantsOfType("return_statement").flatMap((statement) => {
    for (let up = statement.parent; up && up.id !== fn.id; up = up.parent) if (FUNCTION_TYPES.has(up.type)) return [];
    const value = statement.namedChild(0);
    return value ? [value] : [];
  });
}

/** The names of a class's constructor parameter properties (`constructor(public r: T)`), in parameter order ("" for others). */
function constructorProperties(cls: Node): string[] {
  if (cls.type !== "class_declaration" && cls.type !== "class") return [];
  const ctor = cls.childForFieldName("body")?.namedChildren.find((member) => member.type === "method_definition" && member.childForFieldName("name")?.text === "constructor");
  return (ctor?.childForFieldName("parameters")?.namedChildren ?? []).map((param) => {
    const property = param.namedChildren.some((child) => child.type === "accessibility_modifier" || child.text === "readonly");
    const pattern = param.childForFieldName("pattern");
    return property && pattern?.type === "identifier" ? pattern.text : "";
  });
}

/** Names that load a module given its name as the first argument. */
export function isLoader(name: string): boolean {
  return (
    name === "require" ||
    name === "process.getBuiltinModule" ||
    name === "import" ||
    name === "module.require" ||
    name === "process.mainModule.require" ||
    name === "require.main.require" ||
    name === "module.constructor._load" ||
    name === "module._load" ||
    name === "module.Module._load" ||
    name === "process.mainModule.constructor._load" ||
    name.endsWith(".mainModule.require")
  );
}

/** The value of a string literal node, escapes decoded. */
export function stringLiteral(node: Node): string {
  let out = "";
  for (const child of node.namedChildren) {
    if (child.type === "string_fragment") out += child.text;
    else if (child.type === "escape_sequence") out += unescapeJs(child.text);
  }
  return out;
}

function unescapeJs(text: string): string {
  const kind = text[1];
  if (kind === "x") return String.fromCharCode(parseInt(text.slice(2), 16));
  if (kind === "u") return String.fromCodePoint(parseInt(text.slice(2).replace(/[{}]/g, ""), 16));
  const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", "0": "\0", b: "\b", f: "\f", v: "\v" };
  return kind === undefined ? "" : (simple[kind] ?? kind);
}

function decode(input: string, encoding: string): string | undefined {
  try {
    if (encoding === "base64" || encoding === "base64url") return Buffer.from(input, encoding).toString("utf8");
    if (encoding === "hex") return Buffer.from(input, "hex").toString("utf8");
    if (encoding === "uri") return decodeURIComponent(input);
    if (encoding === "utf8" || encoding === "utf-8" || encoding === "binary" || encoding === "latin1") return input;
    return undefined;
  } catch {
    return undefined;
  }
}
