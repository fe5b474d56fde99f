// The JavaScript/TypeScript rules that look at one call: code execution, processes and shell command lines,
// module loading, sockets and network sends, deserialization, and obfuscated arguments (files: javascript-files.ts).

import type { Node } from "web-tree-sitter";
import type { Severity } from "../types.js";
import { COMMAND_PATTERNS, isShellProgram } from "./javascript-patterns.js";
import { checkFileCall } from "./javascript-files.js";
import { DOWNLOAD, type Call, type Program } from "./javascript-program.js";
import { isLoader, Scope } from "./javascript-values.js";

const CODE_EXEC = new Set(["eval", "Function", "vm2.VM().run", "vm2.NodeVM().run", "safe-eval", "static-eval", "vm.Script().runInNewContext", "node:vm.runInNewContext", "vm.runInNewContext", "vm.runInThisContext", "vm.runInContext", "vm.compileFunction", "vm.Script", "vm.SourceTextModule", "AsyncFunction", "GeneratorFunction"]);
const TIMERS = new Set(["setTimeout", "setInterval", "setImmediate"]);
/** Callees whose result is a string: run as code when passed to a timer. */
const STRING_RESULT = /(\.(toString|join|replace|replaceAll|slice|substring|substr|trim|concat|decode)|^(atob|String|unescape|decodeURIComponent|String\.fromCharCode))$/;
const SHELL_EXEC = new Set(["child_process.exec", "child_process.execSync", "shelljs.exec", "execa.command", "execa.commandSync", "execa.execaCommand", "execa.execaCommandSync"]);
const ARGV_EXEC = new Set([
  "child_process.execFile", "child_process.execFileSync", "child_process.spawn", "child_process.spawnSync", "child_process.fork",
  "cross-spawn", "cross-spawn.sync", "cross-spawn.spawn", "execa", "execa.execa", "execa.sync", "execa.execaSync", "Bun.spawn", "Bun.spawnSync", "Deno.run", "Deno.Command",
]);
const DANGEROUS_MODULES = new Set(["child_process", "vm", "net", "tls", "dgram", "fs", "http", "https", "worker_threads", "cluster", "v8", "module", "inspector", "dns", "process"]);
const SENDS = new Set([
  "fetch", "node-fetch", "undici.fetch", "undici.request", "axios", "axios.post", "axios.put", "axios.patch", "axios.get", "axios.request", "got", "got.post", "got.put",
  "http.request", "https.request", "http.get", "https.get", "request", "request.post", "request.get", "needle", "needle.post", "superagent.post",
  "http.request().write", "https.request().write", "http.request().end", "https.request().end", "net.connect().write", "net.createConnection().write",
  "net.Socket().write", "tls.connect().write", "dgram.createSocket().send", "WebSocket().send", "XMLHttpRequest().send", "navigator.sendBeacon",
  "dns.lookup", "dns.resolve", "dns.resolve4", "dns.resolveTxt", "dns.promises.lookup",
]);
const SOCKETS = new Set(["net.connect", "net.createConnection", "tls.connect", "net.Socket().connect", "dgram.createSocket", "net.createServer", "tls.createServer", "net.Socket"]);
const DESERIALIZE = new Set(["v8.deserialize", "v8.Deserializer", "node-serialize.unserialize", "serialize-to-js.deserialize", "funcster.deepDeserialize", "cryo.parse", "php-serialize.unserialize"]);
const YAML_LOAD = new Set(["js-yaml.load", "js-yaml.loadAll"]);
const PROTO_TARGETS = new Set(["Object.prototype", "Object.__proto__", "Function.prototype", "Array.prototype", "String.prototype"]);
const DEEP_MERGE = new Set(["lodash.merge", "lodash.mergeWith", "lodash.defaultsDeep", "lodash.set", "lodash.setWith", "lodash.zipObjectDeep", "jquery.extend", "deep-extend", "merge.recursive", "mixin-deep", "dot-prop.set", "set-value", "hoek.merge", "deepmerge"]);

const SPAWNS = /^(child_process\.(exec|execSync|execFile|execFileSync|spawn|spawnSync|fork)|cluster\.fork|Worker|worker_threads\.Worker|cross-spawn.*|execa.*|shelljs\.exec|Bun\.spawn.*|Deno\.(run|Command))$/;
const LITERAL_TYPES = new Set(["string", "number", "true", "false", "null", "undefined"]);

/** The call as the program means it: `.call`/`.apply`/`Reflect.apply` unwrapped, `fs.promises.x` as `fs.x`. */
function callOf(program: Program, node: Node): Call | undefined {
  const isNew = node.type === "new_expression";
  const callee = node.childForFieldName(isNew ? "constructor" : "function");
  const resolved = program.scope.resolve(callee);
  if (!resolved) return undefined;
  let { name } = resolved;
  let args = node.childForFieldName("arguments")?.namedChildren ?? [];
  if (name.endsWith(".call")) {
    name = name.slice(0, -5);
    args = args.slice(1);
  } else if (name.endsWith(".apply")) {
    name = name.slice(0, -6);
    args = args[1]?.type === "array" ? args[1].namedChildren : [];
  } else if (name === "Reflect.apply" || name === "Reflect.construct") {
    const target = program.scope.resolve(args[0] ?? null);
    if (!target) return undefined;
    name = target.name;
    const list = args[name === "Reflect.construct" ? 1 : 2];
    args = list?.type === "array" ? list.namedChildren : [];
  }
  name = name.replace(".promises.", ".").replace(/^fs\/promises\./, "fs.");
  if (isNew && name.endsWith("()")) return undefined;
  return { node, name, built: resolved.built, args, isNew };
}

export function checkCall(program: Program, node: Node): void {
  const call = callOf(program, node);
  if (!call) return hiddenMethod(program, node);
  const { name } = call;
  if (SPAWNS.test(name)) program.spawnCalls.push(node);
  if (call.built && (CODE_EXEC.has(name) || SHELL_EXEC.has(name) || ARGV_EXEC.has(name) || isLoader(name)))
    program.add(node, "hidden-name", "obfuscation", "high", `calls ${name} through a name built at run time`, "Call functions by their plain names; hiding them is a malware technique.");
  if (CODE_EXEC.has(name)) return codeExec(program, call);
  if (TIMERS.has(name)) return timer(program, call);
  if (SHELL_EXEC.has(name)) return shellExec(program, call);
  if (ARGV_EXEC.has(name)) return argvExec(program, call);
  if (isLoader(name)) return loader(program, call);
  if (name === "process.binding" || name === "process._linkedBinding")
    return program.add(node, "process-binding", "process-exec", "high", `${name} reaches Node's internal bindings (spawn, fs) around the public API`, "Use the documented modules; internal bindings bypass every check.");
  if (name === "process.dlopen" || name.endsWith("._compile") || name === "module._load" || name === "module.Module._load")
    return program.add(node, "native-load", "code-exec", "high", `${name} loads native or raw module code`, "Import modules normally by name.");
  if (name === "process.setuid" || name === "process.setgid" || name === "process.seteuid" || name === "process.setegid" || name === "process.setgroups")
    return program.add(node, "setuid", "privilege", "high", `${name} changes the process's user or group`, "Sandboxed code runs unprivileged; do not change identity.");
  if (SOCKETS.has(name)) return socket(program, call);
  if (name.endsWith(".listen")) return listen(program, call);
  if (SENDS.has(name) || DOWNLOAD.has(name)) send(program, call);
  if (checkFileCall(program, call)) return;
  if (DESERIALIZE.has(name))
    return program.add(node, "unsafe-deserialize", "deserialization", isLiteral(call.args[0]) ? "medium" : "high", `${name} revives objects (and functions) from data`, "Parse data with JSON.parse and validate it with a schema.");
  if (YAML_LOAD.has(name)) return yamlLoad(program, call);
  if ((name === "bson.deserialize" || name === "BSON.deserialize") && /evalFunctions\s*:\s*true/.test(call.args[1]?.text ?? ""))
    return program.add(node, "bson-eval", "deserialization", "high", "BSON deserialize with evalFunctions runs code stored in the data", "Leave evalFunctions off.");
  if (name.startsWith("Object.") || name.startsWith("Reflect.")) return objectApi(program, call);
  if (DEEP_MERGE.has(name)) return deepMerge(program, call);
  if (name === "JSON.stringify" || name === "Object.entries" || name === "Object.keys" || name === "Object.values") {
    if (program.scope.resolve(call.args[0] ?? null)?.name === "process.env") {
      program.strongSecret ??= "env";
      program.add(node, "env-dump", "exfiltration", "medium", `${name}(process.env) collects the whole environment, secrets included`, "Read the single variables you need by name.");
    }
    return;
  }
  if (name === "Worker" || name === "worker_threads.Worker") return worker(program, call);
  if (name === "RegExp" && call.args[0] && program.scope.fold(call.args[0]) === undefined)
    return program.add(node, "computed-regexp", "resource-abuse", "info", "new RegExp from a value computed at run time can backtrack for a very long time", "Escape input before building a pattern, or match with string methods.");
  if (name === "Buffer.alloc" || name === "Buffer.allocUnsafe" || name === "Array" || name.endsWith(".repeat")) return bigAllocation(program, call);
}

/** `require("child_process")[name](...)` with a name the analysis cannot fold: some function of a dangerous module. */
function hiddenMethod(program: Program, node: Node): void {
  const callee = node.childForFieldName(node.type === "new_expression" ? "constructor" : "function");
  if (callee?.type === "member_expression" && callee.childForFieldName("property")?.text === "repeat")
    return bigAllocation(program, { node, name: "String.repeat", built: false, args: node.childForFieldName("arguments")?.namedChildren ?? [], isNew: false });
  if (callee?.type !== "subscript_expression") return;
  // `require(_d(0))[_d(1)](_d(2))`: module and function names looked up through a decoder function.
  const object = callee.childForFieldName("object");
  if (object?.type === "call_expression" && object.childForFieldName("function")?.text === "require" && (object.childForFieldName("arguments")?.namedChildren[0]?.type === "call_expression" || callee.childForFieldName("index")?.type === "call_expression"))
    program.add(node, "decoded-require-call", "obfuscation", "high", "calls a module function whose module and name come from a decoder function (a string-array obfuscator)", "Call functions by their plain names; hiding them is a malware technique.");
  const module = program.scope.resolve(object)?.name;
  if (module !== "child_process" && module !== "vm" && module !== "globalThis" && module !== "global" && module !== "window") return;
  program.add(node, "hidden-name", "obfuscation", "medium", `calls a function of ${module} chosen by a computed name`, "Call functions by their plain names.");
  if (module === "child_process") program.add(node, "computed-method", "process-exec", "high", "runs a child_process function chosen at run time", "Call execFile or spawn by name with an argv array.");
}

function isLiteral(node: Node | undefined): boolean {
  return node !== undefined && LITERAL_TYPES.has(node.type);
}

/** Severity for running `args` as code: literal text is low, built or unknown text high. */
function codeExec(program: Program, call: Call): void {
  const { node, name, args } = call;
  if (name === "vm.compileFunction" || name === "Function" || name === "AsyncFunction" || name === "GeneratorFunction") {
    runText(program, node, name, name === "vm.compileFunction" ? args.slice(0, 1) : args, call.built);
  } else runText(program, node, name, args.slice(0, 1), call.built);
}

function runText(program: Program, node: Node, name: string, texts: Node[], hiddenName = false): void {
  const what = name === "Function" ? "new Function" : name;
  // Reaching eval or Function through a computed name ("".constructor.constructor) is an escape, whatever it runs.
  let severity: Severity = hiddenName ? "high" : "low";
  let dynamic = false;
  let decoded = false;
  for (const text of texts) {
    const folded = program.scope.foldInfo(text);
    const facts = program.facts(text);
    if (facts.decoded || folded?.decoded) {
      program.add(node, "decoded-exec", "obfuscation", "critical", `${what} runs code decoded from base64/hex/char codes`, "Never run decoded text; ship readable code.");
      severity = "high";
      decoded = true;
    }
    if (facts.remote) program.add(node, "remote-code", "download-exec", "critical", `${what} runs code downloaded from the network`, "Never run code fetched at run time; install it as a reviewed dependency.");
    if (folded?.value !== undefined) {
      if (/child_process|require\s*\(|process\.(binding|mainModule)|import\s*\(/.test(folded.value)) severity = "high";
      else if (folded.built && severity === "low") severity = "medium";
    } else {
      severity = "high";
      dynamic = true;
    }
  }
  if (texts.length === 0 && name !== "Function") return;
  if (dynamic) program.dynamicRuns.push(node);
  program.add(
    node,
    name === "eval" ? "eval" : name.startsWith("vm.") ? "vm" : "function-constructor",
    "code-exec",
    severity,
    dynamic || decoded ? `${what} runs code built at run time` : `${what} runs a constant string as code`,
    "Call functions directly instead of evaluating strings; parse data with JSON.parse.",
  );
}

function timer(program: Program, call: Call): void {
  const first = call.args[0];
  if (!first || !["string", "template_string", "binary_expression"].includes(first.type)) {
    // A value that can only be a string (a constant, a string built or decoded into a variable, or a
    // string method's result) is run as code; a plain function reference is not.
    const stringy =
      (first?.type === "identifier" && (program.scope.fold(first) !== undefined || program.stringVars.has(first.text))) ||
      (first?.type === "call_expression" && STRING_RESULT.test(first.childForFieldName("function")?.text ?? "")) ||
      (first?.type === "subscript_expression" && /^process\.(argv|env)\b/.test(first.text));
    if (first && stringy) runText(program, call.node, `${call.name} with a string`, [first]);
    return;
  }
  runText(program, call.node, `${call.name} with a string`, [first]);
}

function commandPatterns(program: Program, node: Node, command: string): boolean {
  let hit = false;
  for (const pattern of COMMAND_PATTERNS) {
    if (!pattern.pattern.test(command)) continue;
    hit = true;
    program.add(node, pattern.name, pattern.category, pattern.severity, `the command ${pattern.message}`, pattern.recommendation);
  }
  return hit;
}

/** The text of a command line as far as it is known: constant parts kept, unknown parts as "*". */
function commandText(program: Program, node: Node | undefined): { text: string; literal: boolean } {
  if (!node) return { text: "", literal: true };
  const folded = program.scope.fold(node);
  if (folded !== undefined) return { text: folded, literal: true };
  return { text: program.pathOf(node), literal: false };
}

function shellExec(program: Program, call: Call): void {
  const { node, name, args } = call;
  const { text, literal } = commandText(program, args[0]);
  const facts = program.facts(args[0] ?? null);
  commandPatterns(program, node, text);
  execFacts(program, node, name, facts);
  // A command from a variable in a program with a raw socket is how command-and-control loops are built.
  if (!literal || isShellProgram(text) || /\b(ba)?sh\s+-i\b/.test(text)) program.shells.push(node);
  if (!literal) program.dynamicRuns.push(node);
  program.add(
    node,
    "shell-command",
    "process-exec",
    literal ? "medium" : "high",
    literal ? `${name} runs a shell command line` : `${name} runs a shell command built from variables`,
    "Use execFile/spawn with an argv array and a fixed program; never build shell strings.",
  );
}

function execFacts(program: Program, node: Node, name: string, facts: { decoded: boolean; remote: boolean; secret?: string | undefined }): void {
  if (facts.decoded) program.add(node, "decoded-command", "obfuscation", "critical", `${name} runs a command decoded from base64/hex/char codes`, "Run readable commands only.");
  if (facts.remote) program.add(node, "remote-command", "download-exec", "critical", `${name} runs a command downloaded from the network`, "Never run what a URL returns.");
}

function argvExec(program: Program, call: Call): void {
  const { node, name, args } = call;
  const program0 = name === "Deno.run" || name === "Bun.spawn" || name === "Bun.spawnSync" ? undefined : args[0];
  // process.execPath and process.argv[0] are node itself: a fixed program, not one chosen by data.
  const self = program0 !== undefined && /^process\.(execPath|argv\[0\]|argv0)$/.test(program0.text);
  const { text: command, literal } = self ? { text: "node", literal: true } : commandText(program, program0);
  const argv = args[1]?.type === "array" ? args[1].namedChildren : [];
  const options = args.find((arg) => arg.type === "object");
  const optionText = options?.text ?? "";
  const shell = /\bshell\s*:\s*(true|["'`])/.test(optionText);
  const argvTexts = argv.map((arg) => commandText(program, arg));
  const argvLiteral = argvTexts.every((arg) => arg.literal);
  const line = [command, ...argvTexts.map((arg) => arg.text)].join(" ");
  const facts = program.facts(node.childForFieldName("arguments"));
  commandPatterns(program, node, isShellProgram(command) ? argvTexts.map((arg) => arg.text).join(" ") : line);
  if (shell) commandPatterns(program, node, line);
  execFacts(program, node, name, facts);
  const isShell = isShellProgram(command) || (shell && !literal);
  if (isShellProgram(command) || !literal || /SHELL|ComSpec/.test(program0?.text ?? "")) program.shells.push(node);
  if (!literal || (isShell && !argvLiteral)) program.dynamicRuns.push(node);
  if (/__filename|process\.argv\[1\]|import\.meta\.(url|filename)/.test(node.childForFieldName("arguments")?.text ?? ""))
    program.add(node, "self-spawn", "resource-abuse", "medium", `${name} starts another copy of this program`, "Do not let a program re-launch itself; it multiplies without bound.");
  if (/detached\s*:\s*true/.test(optionText) && /stdio\s*:\s*["'`]ignore/.test(optionText))
    program.add(node, "silent-process", "process-exec", "high", `${name} starts a detached process with its output hidden`, "Run child processes attached, and keep their output.");
  const dangerous = !literal || ((shell || isShellProgram(command)) && !argvLiteral);
  program.add(
    node,
    name.endsWith("fork") ? "fork" : "spawn",
    "process-exec",
    dangerous ? "high" : "medium",
    dangerous ? `${name} runs a program or shell command built from variables` : `${name} runs ${command || "a program"}`,
    dangerous ? "Run a fixed program with an argv array and shell: false; validate every argument." : "Make sure the program and its arguments are what you expect.",
  );
}

function loader(program: Program, call: Call): void {
  const { node, name, args } = call;
  if (args.length === 0) return;
  const folded = program.scope.foldInfo(args[0] ?? null);
  if (folded?.value === undefined) {
    program.add(node, "dynamic-import", "code-exec", "medium", `${name}() loads a module whose name is computed at run time`, "Import modules by literal names so reviewers and tools can see them.");
    return;
  }
  const module = Scope.moduleName(folded.value);
  if (folded.built || folded.decoded) {
    const dangerous = DANGEROUS_MODULES.has(module);
    program.add(node, "built-module-name", "code-exec", dangerous ? "high" : "low", `${name}() loads "${module}" through a name built at run time`, "Import modules by literal names.");
    if (dangerous || folded.decoded) program.add(node, "hidden-module", "obfuscation", "high", `the module name "${module}" is hidden in a built or encoded string`, "Import modules by literal names; hiding them is a malware technique.");
  }
  if (/^(\/tmp\/|\/dev\/shm\/|https?:|data:)/.test(folded.value))
    program.add(node, "load-untrusted-path", "code-exec", "high", `${name}() loads code from ${folded.value.slice(0, 40)}`, "Load only installed, reviewed modules.");
}

function socket(program: Program, call: Call): void {
  const { node, name, args } = call;
  program.sockets.push(node);
  if (name === "net.createServer" || name === "tls.createServer") return;
  const connects = name !== "net.Socket" && name !== "dgram.createSocket";
  program.add(
    node,
    connects ? "raw-socket-connect" : "raw-socket",
    "network",
    connects && args.length > 0 ? "high" : "medium",
    connects ? `${name} opens a raw connection to an address` : `${name} creates a raw socket`,
    "Use fetch/HTTP APIs for what you need; raw sockets are how shells and tunnels are built.",
  );
}

function listen(program: Program, call: Call): void {
  for (const arg of call.args) {
    // `listen({ host: "0.0.0.0", port })`: the options object form.
    const host = arg.type === "object" ? arg.namedChildren.find((pair) => pair.type === "pair" && /^["'`]?host["'`]?$/.test(pair.childForFieldName("key")?.text ?? ""))?.childForFieldName("value") : undefined;
    const value = program.scope.fold(host ?? arg);
    if (value === "0.0.0.0" || value === "::" || value === "[::]") {
      program.add(call.node, "bind-all", "network", "medium", `${call.name} listens on every interface (${value})`, "Listen on 127.0.0.1 unless others must connect.");
      return;
    }
  }
}

function send(program: Program, call: Call): void {
  const { node, name } = call;
  const facts = program.facts(node.childForFieldName("arguments"));
  if (DOWNLOAD.has(name)) program.downloads.push(node);
  if (SENDS.has(name)) program.sends.push(node);
  if (facts.secret === "metadata")
    program.add(node, "cloud-metadata", "exfiltration", "high", `${name} reads the cloud metadata service (instance credentials)`, "Do not query instance metadata from sandboxed code.");
  if (facts.secret !== undefined && facts.secret !== "metadata" && SENDS.has(name)) {
    const strong = facts.secret !== "host" && facts.secret !== "token";
    program.add(
      node,
      strong ? "send-secrets" : facts.secret === "token" ? "send-secret-variable" : "send-host-info",
      "exfiltration",
      strong ? "critical" : "high",
      `${name} sends ${secretName(facts.secret)} over the network`,
      "Never send credentials, keys or the environment out of the sandbox.",
    );
    return;
  }
  program.add(node, "http-client", "network", "info", `${name} makes a network request`, "Fine for APIs you trust; never send secrets or run what comes back.");
}

export function secretName(secret: string): string {
  switch (secret) {
    case "env":
      return "the environment (all its secrets)";
    case "file":
      return "credential files (ssh keys, cloud or npm tokens)";
    case "metadata":
      return "cloud instance credentials";
    case "cookie":
      return "cookies or browser storage";
    case "token":
      return "a secret environment variable (token, key or password)";
    case "host":
      return "host details (user, hostname, interfaces)";
    default:
      return "host details";
  }
}

function yamlLoad(program: Program, call: Call): void {
  const options = call.args[1]?.text ?? "";
  const unsafe = /FULL_SCHEMA|DEFAULT_FULL|unsafe|js\/function/i.test(options);
  program.add(
    call.node,
    "yaml-load",
    "deserialization",
    unsafe ? "high" : "low",
    unsafe ? `${call.name} with a schema that builds JavaScript functions from YAML` : `${call.name} parses YAML (unsafe before js-yaml 4)`,
    "Use js-yaml 4's load with the default schema, or yaml.parse.",
  );
}

function objectApi(program: Program, call: Call): void {
  const { node, name, args } = call;
  const target = program.scope.resolve(args[0] ?? null)?.name;
  if ((name === "Object.defineProperty" || name === "Object.assign" || name === "Reflect.set" || name === "Object.defineProperties") && target !== undefined && PROTO_TARGETS.has(target)) {
    const severity = target.startsWith("Object") || target.startsWith("Function") ? "high" : "medium";
    program.add(node, "prototype-write", "prototype-pollution", severity, `${name} changes ${target}, which every object inherits`, "Never modify built-in prototypes; use your own classes or Map.");
    return;
  }
  if (name === "Object.setPrototypeOf" || name === "Reflect.setPrototypeOf") {
    const proto = args[1];
    if (!proto || proto.type === "null" || proto.type === "identifier" || (proto.type === "member_expression" && !/JSON\.parse|\[/.test(proto.text))) return;
    const fromData = /JSON\.parse|\[/.test(proto.text);
    program.add(node, "set-prototype", "prototype-pollution", fromData ? "high" : "low", `${name} gives an object a prototype taken from data`, "Build objects from classes; never set prototypes from input.");
  }
}

function deepMerge(program: Program, call: Call): void {
  const { node, name, args } = call;
  const fromData = args.some((arg) => /JSON\.parse|req\.(body|query|params)|__proto__|constructor/.test(arg.text));
  const literalPath = (name.endsWith(".set") || name.endsWith(".setWith") || name === "set-value") && isLiteral(args[1]);
  if (literalPath && !fromData) return;
  program.add(node, "deep-merge", "prototype-pollution", fromData ? "high" : "low", `${name} merges or sets keys that can come from data (__proto__, constructor)`, "Validate keys (reject __proto__, constructor, prototype) or merge into Object.create(null).");
}

function worker(program: Program, call: Call): void {
  const options = call.args[1]?.text ?? "";
  if (!/\beval\s*:\s*true/.test(options)) return;
  // A constant worker script is the program's own code written inline: worth a look, not an alarm.
  const folded = program.scope.foldInfo(call.args[0] ?? null);
  if (folded?.value !== undefined && !folded.built && !folded.decoded && !program.facts(call.args[0] ?? null).decoded)
    return program.add(call.node, "worker-eval", "code-exec", "medium", `${call.name} with eval: true runs a constant string as a worker's code`, "Put the worker's code in its own file.");
  runText(program, call.node, `${call.name} with eval: true`, call.args.slice(0, 1));
}

function bigAllocation(program: Program, call: Call): void {
  const size = Number(program.scope.fold(call.name.endsWith(".repeat") || call.name === "Array" ? (call.args[0] ?? null) : (call.args[0] ?? null)));
  if (Number.isFinite(size) && size >= 1e9)
    program.add(call.node, "huge-allocation", "resource-abuse", "medium", `${call.name} asks for ${size.toExponential(0)} elements or bytes`, "Allocate what you need; process data in chunks.");
}
