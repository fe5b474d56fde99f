// The JavaScript/TypeScript rules on assignments, object literals and loops: prototype pollution (direct writes,
// unsafe recursive merges, path setters), disabled TLS checks, attack payload strings, and unbounded spawning loops.

import type { Node } from "web-tree-sitter";
import { isMetadataHost, isShadyHost } from "./javascript-patterns.js";
import type { Program } from "./javascript-program.js";

const FUNCTION_TYPES = new Set(["function_declaration", "function_expression", "function", "arrow_function", "method_definition", "generator_function_declaration", "generator_function"]);
const GUARD = /__proto__|["'`]constructor["'`]|["'`]prototype["'`]|hasOwnProperty|Object\.hasOwn|\bhasOwn\(|Object\.create\(null\)|isSafeKey|isPrototypePolluted|forbidden|FORBIDDEN|blocked|BLOCKED|DANGEROUS|new Map|Object\.freeze\(Object\.prototype\)/;

/** JSON keys or property paths through __proto__ or constructor.prototype, not prose that mentions them. */
const PAYLOAD = /["']__proto__["']\s*:|__proto__\s*(\.|\[)\s*["'\w]|[\w\]]\s*(\.|\[["'])__proto__\b|["']constructor["']\s*:\s*\{\s*["']prototype["']|constructor\.prototype\.\w/;
const INTERESTING_MEMBER = /__proto__|prototype|constructor|rejectUnauthorized|NODE_TLS_REJECT_UNAUTHORIZED|\[/;

interface FunctionInfo {
  recursive: boolean;
  splitsPath: boolean;
  guarded: boolean;
  descends: Set<string>;
}

export class ObjectRules {
  private readonly functions = new Map<number, FunctionInfo | undefined>();

  constructor(private readonly program: Program) {}

  /** `a.b = c`, `a[k] = v`, `x += y`. */
  assignment(node: Node): void {
    const program = this.program;
    const left = node.childForFieldName("left");
    const right = node.childForFieldName("right");
    if (!left || (left.type !== "member_expression" && left.type !== "subscript_expression")) return;
    // Most writes are `this.x = y` or `obj.field = y`: only computed keys and prototype-ish names need a closer look.
    if (left.type === "member_expression" && !INTERESTING_MEMBER.test(left.text)) return;
    const name = program.scope.resolve(left)?.name;
    if (name === "process.env.NODE_TLS_REJECT_UNAUTHORIZED") {
      if (program.scope.fold(right) === "0")
        program.add(node, "tls-disabled", "network", "high", "setting NODE_TLS_REJECT_UNAUTHORIZED to 0 turns off TLS certificate checks for every connection", "Keep certificate checks on; add the CA you need with NODE_EXTRA_CA_CERTS.");
      return;
    }
    if (name?.endsWith(".rejectUnauthorized") && (right?.type === "false" || right?.text === "0")) {
      program.add(node, "tls-disabled", "network", "high", `${name} = false turns off TLS certificate checks`, "Keep certificate checks on.");
      return;
    }
    const chain = this.chain(left);
    const proto = chain.indexOf("__proto__");
    const ctor = chain.findIndex((part, index) => part === "constructor" && chain[index + 1] === "prototype");
    if (proto === chain.length - 1 && ctor < 0) {
      // x.__proto__ = y gives one object a new prototype (old-style inheritance); it pollutes nothing shared.
      program.add(node, "set-proto", "prototype-pollution", "low", "assigning __proto__ replaces one object's prototype", "Use Object.create or class extends instead of __proto__.");
      return;
    }
    if (proto >= 0 || ctor >= 0) {
      program.add(node, "proto-write", "prototype-pollution", "high", `assigning through ${proto >= 0 ? "__proto__" : "constructor.prototype"} changes the prototype every object inherits from`, "Never write through __proto__ or constructor.prototype; use Map or Object.create(null) for keyed data.");
      return;
    }
    if (name !== undefined && /^(Object|Function)\.(prototype|__proto__)\./.test(name)) {
      program.add(node, "builtin-prototype-write", "prototype-pollution", "high", `assigning ${name} adds a property to every object`, "Never modify built-in prototypes.");
      return;
    }
    if (name !== undefined && /^(Array|String|Number|Promise)\.prototype\./.test(name)) {
      program.add(node, "builtin-prototype-extend", "prototype-pollution", "low", `assigning ${name} extends a built-in prototype`, "Write a helper function instead of extending built-ins.");
      return;
    }
    if (left.type === "subscript_expression") this.dynamicKeyWrite(node, left);
  }

  /** Property names along a member chain, outermost last; "?" for keys the analysis cannot fold. */
  private chain(node: Node): string[] {
    const parts: string[] = [];
    let current: Node | null = node;
    for (let depth = 0; current && depth < 16; depth++) {
      if (current.type === "member_expression") parts.push(current.childForFieldName("property")?.text ?? "?");
      else if (current.type === "subscript_expression") parts.push(this.program.scope.fold(current.childForFieldName("index")) ?? "?");
      else break;
      current = current.childForFieldName("object");
    }
    return parts.reverse();
  }

  /** `target[key] = ...` with a computed key: a merge or path setter can be steered to __proto__. */
  private dynamicKeyWrite(node: Node, left: Node): void {
    const index = left.childForFieldName("index");
    if (!index || index.type === "string" || index.type === "number" || this.program.scope.fold(index) !== undefined) return;
    const object = left.childForFieldName("object");
    const fn = enclosingFunction(node);
    if (!fn) return this.nestedKeyWrite(node, object, index, false);
    // A callback of Object.keys(src).forEach belongs to the merge function around it.
    const owner = fn.parent?.type === "arguments" ? (enclosingFunction(fn) ?? fn) : fn;
    const info = this.info(owner);
    if (!info || info.guarded) return;
    const loopVar = index.type === "identifier" && insideKeyLoop(node, fn, index.text);
    if (loopVar && info.recursive) {
      this.program.add(node, "unsafe-merge", "prototype-pollution", "high", "a recursive merge copies keys from its input without rejecting __proto__ or constructor", "Skip the keys __proto__, constructor and prototype, or merge into Object.create(null).");
      return;
    }
    if (object?.type === "identifier" && info.descends.has(object.text) && info.splitsPath) {
      this.program.add(node, "path-assign", "prototype-pollution", "high", "a path setter walks keys split from a string without rejecting __proto__ or constructor", "Reject the path segments __proto__, constructor and prototype.");
      return;
    }
    if (object?.type === "identifier" && info.descends.has(object.text) && insideLoop(node, owner)) {
      this.program.add(node, "key-walk-assign", "prototype-pollution", "low", "walks into an object by computed keys and writes a computed key", "Reject the keys __proto__, constructor and prototype, or use Map.");
      return;
    }
    this.nestedKeyWrite(node, object, index, loopVar);
  }

  /** `obj[a][b] = v`: with a = "__proto__" this writes Object.prototype. */
  private nestedKeyWrite(node: Node, object: Node | null, index: Node, loopVar: boolean): void {
    if (object?.type !== "subscript_expression") return;
    const outer = object.childForFieldName("index");
    const keyLike = (n: Node | null): boolean =>
      (n?.type === "identifier" && /key|prop|name|path|field|attr|k$/i.test(n.text)) ||
      (n?.type === "member_expression" && /^(req|request|ctx)\.|\b(body|query|params|input|args)\b/.test(n.text));
    if (loopVar || (keyLike(outer) && keyLike(index)))
      this.program.add(node, "nested-key-write", "prototype-pollution", loopVar ? "medium" : "low", "writes obj[a][b] with keys that can come from input", "Validate keys before using them as property names.");
  }

  private info(fn: Node): FunctionInfo | undefined {
    if (this.functions.has(fn.id)) return this.functions.get(fn.id);
    const body = fn.childForFieldName("body");
    const text = body?.text ?? "";
    let info: FunctionInfo | undefined;
    if (text.length < 20_000) {
      const name = functionName(fn);
      const descends = new Set<string>();
      for (const match of text.matchAll(/\b([A-Za-z_$][\w$]*)\s*=\s*\1\s*\[/g)) if (match[1]) descends.add(match[1]);
      info = {
        recursive: name !== undefined && new RegExp(`(^|[^\\w$.])(this\\.)?${name.replace(/\$/g, "\\$")}\\s*\\(`).test(text),
        splitsPath: text.includes(".split("),
        guarded: GUARD.test(text),
        descends,
      };
    }
    this.functions.set(fn.id, info);
    return info;
  }

  /** `{ rejectUnauthorized: false }` and friends. */
  pair(node: Node): void {
    const program = this.program;
    const keyNode = node.childForFieldName("key");
    const value = node.childForFieldName("value");
    if (!keyNode || !value) return;
    const key = keyNode.type === "string" ? program.scope.fold(keyNode) : keyNode.text;
    if ((key === "rejectUnauthorized" || key === "strictSSL") && (value.type === "false" || value.text === "0"))
      program.add(node, "tls-disabled", "network", "high", `${key}: false turns off TLS certificate checks`, "Keep certificate checks on; trust the CA you need instead.");
    else if (key === "NODE_TLS_REJECT_UNAUTHORIZED" && program.scope.fold(value) === "0")
      program.add(node, "tls-disabled", "network", "high", "NODE_TLS_REJECT_UNAUTHORIZED=0 turns off TLS certificate checks", "Keep certificate checks on.");
    else if (key === "noent" && value.type === "true")
      program.add(node, "xml-entities", "deserialization", "medium", "noent: true expands external XML entities (XXE)", "Leave entity expansion off when parsing XML.");
    else if (key === "checkServerIdentity" && (value.type === "arrow_function" || value.type === "function_expression") && !/return\s+new\s+Error|throw/.test(value.text))
      program.add(node, "tls-identity-ignored", "network", "high", "checkServerIdentity accepts any server", "Keep the default host-name check.");
  }

  /** String literals carrying attack payloads: prototype-pollution JSON, metadata hosts, paste and webhook sites. */
  string(node: Node): void {
    const text = node.text;
    if (PAYLOAD.test(text))
      this.program.add(node, "payload", "prototype-pollution", "high", "a string holds a __proto__/constructor.prototype payload", "Do not build objects from keys like __proto__; validate input keys.");
    if (isMetadataHost(text)) {
      this.program.strongSecret ??= "metadata";
      this.program.add(node, "metadata-address", "exfiltration", "high", "the program names the cloud metadata service, where instance credentials live", "Do not query instance metadata from sandboxed code.");
    }
    if (/(^|[^\w.])(\/var)?\/run\/docker\.sock\b/.test(text))
      this.program.add(node, "docker-socket", "privilege", "high", "the program uses the Docker socket, which gives root on the host", "Do not use the Docker socket from sandboxed code.");
    if (isShadyHost(text))
      this.program.add(node, "shady-host", "network", "medium", "the program talks to a paste, tunnel or webhook site often used to exfiltrate data", "Send data only to services you own and trust.");
  }
}

function functionName(fn: Node): string | undefined {
  const own = fn.childForFieldName("name");
  if (own) return own.text;
  const parent = fn.parent;
  if (parent?.type === "variable_declarator" || parent?.type === "pair" || parent?.type === "assignment_expression") {
    const name = parent.childForFieldName(parent.type === "pair" ? "key" : parent.type === "assignment_expression" ? "left" : "name");
    if (name?.type === "identifier" || name?.type === "property_identifier") return name.text;
    if (name?.type === "member_expression") return name.childForFieldName("property")?.text;
  }
  return undefined;
}

const LOOPS = new Set(["for_statement", "for_in_statement", "while_statement", "do_statement"]);

function insideLoop(node: Node, fn: Node): boolean {
  let current = node.parent;
  for (let depth = 0; current && current.id !== fn.id && depth < 32; depth++, current = current.parent) if (LOOPS.has(current.type)) return true;
  return false;
}

export function enclosingFunction(node: Node): Node | undefined {
  let current = node.parent;
  for (let depth = 0; current && depth < 64; depth++, current = current.parent) if (FUNCTION_TYPES.has(current.type)) return current;
  return undefined;
}

/** Whether `node` sits in a `for (k in ..)`, `for (const [k, v] of Object.entries(..))` or `Object.keys(..).forEach(k => ..)` over `key`. */
function insideKeyLoop(node: Node, fn: Node, key: string): boolean {
  let current = node.parent;
  for (let depth = 0; current && current.id !== fn.id && depth < 32; depth++, current = current.parent) {
    if (current.type === "for_in_statement" && new RegExp(`(^|[^\\w$])${key.replace(/\$/g, "\\$")}([^\\w$]|$)`).test(current.childForFieldName("left")?.text ?? "")) return true;
  }
  // Object.keys(src).forEach((key) => ...): the key is a parameter of the callback that is `fn` itself.
  const params = fn.childForFieldName("parameters")?.text ?? fn.childForFieldName("parameter")?.text ?? "";
  const call = fn.parent?.parent;
  return call?.type === "call_expression" && /\.(forEach|map|reduce)\s*$/.test(call.childForFieldName("function")?.text ?? "") && params.includes(key) && /Object\.(keys|entries)|for\s*\(/.test(call.text.slice(0, 200));
}
