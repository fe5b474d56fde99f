// The state of one JavaScript/TypeScript analysis: bindings (aliases of modules and builtins), which variables
// hold secrets, decoded text or downloaded data, what the program does as a whole, and the findings so far.

import type { Node } from "web-tree-sitter";
import type { Category, Finding, Severity } from "../types.js";
import { append, concat, join } from "./fold-budget.js";
import { findingAt } from "./rules.js";
import { isCredentialPath, isMetadataHost } from "./javascript-patterns.js";
import { Scope } from "./javascript-values.js";

/** A call as the rules see it: the resolved name of what is called and its arguments. */
export interface Call {
  node: Node;
  name: string;
  /** The name was computed (`cp["ex" + "ec"]`, `globalThis[atob(..)]`). */
  built: boolean;
  args: Node[];
  isNew: boolean;
}

/** Sensitive data an expression carries; all but "host" count as secrets whose sending is critical. */
export type Secret = "env" | "file" | "metadata" | "cookie" | "token" | "host";

export interface Facts {
  secret?: Secret;
  decoded: boolean;
  remote: boolean;
}

/** How many nodes one expression scan looks at: enough for real arguments, bounded on pathological ones. */
const SCAN_LIMIT = 400;

export const READ_FILE = new Set([
  "fs.readFileSync", "fs.readFile", "fs.createReadStream", "fs.openSync", "fs.open", "fs.readdirSync", "fs.readdir",
  "fs-extra.readFile", "fs-extra.readFileSync", "fs-extra.readJson", "fs-extra.readJsonSync", "Bun.file", "Deno.readTextFile", "Deno.readFile",
]);
export const DOWNLOAD = new Set([
  "fetch", "node-fetch", "undici.fetch", "undici.request", "axios", "axios.get", "axios.request", "got", "got.get", "http.get", "https.get",
  "http.request", "https.request", "request", "request.get", "needle", "needle.get", "superagent.get", "XMLHttpRequest().open", "cross-fetch",
]);
const DECODERS = new Set(["atob", "String.fromCharCode", "String.fromCodePoint", "unescape", "zlib.inflateSync", "zlib.gunzipSync", "zlib.unzipSync", "zlib.brotliDecompressSync", "zlib.inflateRawSync"]);
const HOST_INFO = new Set(["os.userInfo", "os.hostname", "os.networkInterfaces"]);

/** Last names of the calls `facts` cares about, checked before resolving a callee. */
const FACT_CALLS = new Set([
  ...[...READ_FILE, ...DOWNLOAD, ...DECODERS, ...HOST_INFO].map((name) => name.replace(/^.*\./, "").replace(/\(\)$/, "")),
  "from", "post", "put", "patch", "request", "get",
]);
const FACT_HINT = /process|readFile|createReadStream|open|readdir|readJson|userInfo|hostname|networkInterfaces|cookie|Storage|169\.254|metadata|100\.100\.100\.200|Bun|Deno|atob|fromChar|fromCode|base64|hex|unescape|inflate|gunzip|unzip|brotli|fetch|axios|got|http|request|needle|superagent|XMLHttpRequest|undici/;

export class Program {
  readonly scope = new Scope();
  readonly findings: Finding[] = [];
  readonly secrets = new Map<string, Secret>();
  readonly decodedVars = new Set<string>();
  readonly remoteVars = new Set<string>();
  /** Strong secrets the program gathers anywhere (a whole-environment dump, credential files, metadata). */
  strongSecret: Secret | undefined;
  /** Node ids of calls that send data out, whether or not their arguments look sensitive. */
  readonly sends: Node[] = [];
  readonly sockets: Node[] = [];
  readonly shells: Node[] = [];
  readonly downloads: Node[] = [];
  /** Calls that start processes or workers, for loops that never stop starting them. */
  readonly spawnCalls: Node[] = [];
  /** Variables assigned a string built at run time (template, concatenation, a string method's result). */
  readonly stringVars = new Set<string>();
  /** Calls that run code or commands built at run time, for download-then-execute. */
  readonly dynamicRuns: Node[] = [];
  private readonly ruleSeen = new Set<string>();

  /** Whether the source mentions any source of secrets, decoding or downloads at all; most programs do not. */
  private readonly factsPossible: boolean;

  constructor(
    readonly prefix: string,
    source: string,
  ) {
    this.factsPossible = FACT_HINT.test(source);
  }

  add(node: Node, name: string, category: Category, severity: Severity, message: string, recommendation: string): void {
    // One finding per rule and place: nested calls reach the same node through several paths.
    const key = `${category}.${name}@${node.startIndex}`;
    if (this.ruleSeen.has(key)) return;
    this.ruleSeen.add(key);
    this.findings.push(findingAt(node, { ruleId: `${this.prefix}.${category}.${name}`, category, severity, message, recommendation }));
  }

  /** What the expression carries, looking through at most SCAN_LIMIT nodes of it. */
  facts(node: Node | null): Facts {
    const facts: Facts = { decoded: false, remote: false };
    if (!node || !this.factsPossible) return facts;
    const stack: Node[] = [node];
    let seen = 0;
    while (stack.length > 0 && seen++ < SCAN_LIMIT) {
      const current = stack.pop() as Node;
      switch (current.type) {
        case "identifier": {
          const name = current.text;
          const secret = this.secrets.get(name);
          if (secret) facts.secret = strongest(facts.secret, secret);
          if (this.decodedVars.has(name)) facts.decoded = true;
          if (this.remoteVars.has(name)) facts.remote = true;
          continue;
        }
        case "member_expression":
        case "subscript_expression": {
          const text = current.text;
          if (!text.startsWith("process") && !/cookie|Storage|env/.test(text)) break;
          const name = this.scope.resolve(current)?.name;
          if (name === "process.env" && !isObjectOfMember(current)) facts.secret = strongest(facts.secret, "env");
          else if (name?.startsWith("process.env.") && SECRET_NAME.test(name.slice(12))) facts.secret = strongest(facts.secret, "token");
          else if (name === "document.cookie" || name === "localStorage" || name === "sessionStorage") facts.secret = strongest(facts.secret, "cookie");
          break;
        }
        case "call_expression": {
          const callee = current.childForFieldName("function");
          const last = callee?.type === "member_expression" ? callee.childForFieldName("property")?.text : callee?.text;
          if (last === undefined || !FACT_CALLS.has(last)) break;
          const name = this.scope.resolve(callee)?.name;
          if (name !== undefined) this.callFacts(current, name, facts);
          break;
        }
        case "string":
          if (isMetadataHost(current.text)) facts.secret = strongest(facts.secret, "metadata");
          continue;
        case "template_string":
          if (isMetadataHost(current.text)) facts.secret = strongest(facts.secret, "metadata");
          break; // its substitutions carry data
        case "pair": {
          // Credentials in request headers are how APIs are called, not a leak.
          const key = current.childForFieldName("key")?.text.replace(/["']/g, "").toLowerCase();
          if (key === "headers" || key === "authorization" || key === "auth" || key === "x-api-key") continue;
          break;
        }
        case "arrow_function":
        case "function_expression":
        case "class":
        case "statement_block":
          // A function's body is data only when it runs; its own calls are checked where they are.
          if (current.id !== node.id) continue;
          break;
        default:
          break;
      }
      for (const child of current.namedChildren) stack.push(child);
    }
    return facts;
  }

  private callFacts(call: Node, name: string, facts: Facts): void {
    const args = call.childForFieldName("arguments")?.namedChildren ?? [];
    const plain = name.replace(".promises.", ".");
    if (READ_FILE.has(plain) && isCredentialPath(this.pathOf(args[0] ?? null))) facts.secret = strongest(facts.secret, "file");
    else if (HOST_INFO.has(name)) facts.secret = strongest(facts.secret, "host");
    else if (DECODERS.has(name)) facts.decoded = true;
    else if (name === "Buffer.from") {
      const encoding = this.scope.fold(args[1] ?? null);
      if (encoding === "base64" || encoding === "hex" || encoding === "base64url") facts.decoded = true;
    } else if (DOWNLOAD.has(name) || name.startsWith("axios.") || name.startsWith("got.")) facts.remote = true;
  }

  /**
   * A path as far as it is known: constants folded, the home directory as "~", anything else as "*"
   * (so "/etc/" + name is "/etc/*").
   */
  pathOf(node: Node | null, depth = 0): string {
    if (!node || depth > 12) return "*";
    const folded = this.scope.fold(node);
    if (folded !== undefined) return folded;
    switch (node.type) {
      case "template_string": {
        let out = "";
        for (const child of node.namedChildren) {
          if (child.type === "string_fragment") out = append(out, child.text);
          else if (child.type === "template_substitution") out = append(out, this.pathOf(child.namedChild(0), depth + 1));
        }
        return out;
      }
      case "binary_expression":
        return concat([this.pathOf(node.childForFieldName("left"), depth + 1), this.pathOf(node.childForFieldName("right"), depth + 1)]);
      case "parenthesized_expression":
      case "await_expression":
        return this.pathOf(node.namedChild(0), depth + 1);
      case "call_expression": {
        const name = this.scope.resolve(node.childForFieldName("function"))?.name;
        if (name === "os.homedir") return "~";
        if (name === "path.join" || name === "path.resolve" || name === "path.posix.join") {
          const parts = (node.childForFieldName("arguments")?.namedChildren ?? []).map((part) => this.pathOf(part, depth + 1));
          return join(parts, "/").replace(/\/{2,}/g, "/");
        }
        return "*";
      }
      case "member_expression":
      case "subscript_expression": {
        const name = this.scope.resolve(node)?.name;
        return name === "process.env.HOME" || name === "process.env.USERPROFILE" ? "~" : "*";
      }
      default:
        return "*";
    }
  }
}

const SECRET_RANK: Record<Secret, number> = { host: 0, token: 1, cookie: 2, metadata: 2, file: 2, env: 2 };
const SECRET_NAME = /TOKEN|SECRET|PASSW|API_?KEY|PRIVATE|CREDENTIAL|^AWS_|_KEY$/i;

function strongest(a: Secret | undefined, b: Secret): Secret {
  return a === undefined || SECRET_RANK[b] > SECRET_RANK[a] ? b : a;
}

/** `process.env` in `process.env.HOME` is only the object of a member: a single named read, not a dump. */
function isObjectOfMember(node: Node): boolean {
  const parent = node.parent;
  if (!parent) return false;
  if (parent.type !== "member_expression" && parent.type !== "subscript_expression") return false;
  return parent.childForFieldName("object")?.id === node.id;
}
