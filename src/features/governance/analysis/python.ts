// The Python rules: one cursor walk in source order that follows imports and assignments (aliases,
// getattr, __import__, folded strings), checks every call, and then joins facts that mean harm together.

import type { Node } from "web-tree-sitter";
import type { Finding } from "../types.js";
import { concat } from "./fold-budget.js";
import { PyContext, posOf } from "./python-context.js";
import { checkCodeExec, checkDeserialization, checkNative, checkProcess, type CallInfo } from "./python-exec-rules.js";
import { checkFilesystem, checkNetwork } from "./python-io-rules.js";
import { Evaluator, anyItem, normalize, parameterNames, type Val } from "./python-values.js";
import { isRootLikePath } from "./python-paths.js";
import type { FoundNode, LanguageRules } from "./rules.js";

/** Names `from M import *` brings in that rules care about. */
const STAR_NAMES: Record<string, readonly string[]> = {
  os: ["system", "popen", "execv", "execl", "execvp", "spawnl", "fork", "dup2", "chmod", "remove", "environ", "setuid"],
  subprocess: ["run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput"],
  pickle: ["load", "loads"],
  socket: ["socket", "create_connection", "AF_INET", "SOCK_STREAM"],
  pty: ["spawn"],
  base64: ["b64decode", "b32decode", "b16decode", "decodebytes"],
  marshal: ["loads", "load"],
  shutil: ["rmtree"],
};

/** A name's value, or how to compute it when a rule first asks (most assignments never matter). */
type Binding = Val | (() => Val);

class Bindings {
  private readonly names = new Map<string, Binding>();
  private readonly starModules: string[] = [];
  private readonly computing = new Set<string>();
  /** Qualified names bound by `import x` / `import x as y`: modules, not values. */
  readonly modules = new Set<string>(["builtins"]);

  set(name: string, value: Binding): void {
    this.names.set(name, value);
  }

  /** Binds `name` unless the program bound it already (a parameter's default under a global's name). */
  setIfFree(name: string, value: Binding): void {
    if (!this.names.has(name)) this.names.set(name, value);
  }

  star(module: string): void {
    this.starModules.push(module);
  }

  lookup(name: string): Val | undefined {
    const bound = this.names.get(name);
    if (typeof bound === "function") {
      // `x = f(x)`: a name read while its own value is being computed is unknown, not a loop.
      if (this.computing.has(name)) return {};
      this.computing.add(name);
      try {
        const value = bound();
        if (this.names.get(name) === bound) this.names.set(name, value);
        return value;
      } finally {
        this.computing.delete(name);
      }
    }
    if (bound) return bound;
    for (const module of this.starModules) if (STAR_NAMES[module]?.includes(name)) return { q: `${module}.${name}` };
    return undefined;
  }
}

function bindImport(node: Node, type: string, bindings: Bindings): void {
  if (type === "import_statement") {
    for (const child of node.namedChildren) {
      const childType = child.type;
      if (childType === "dotted_name") {
        const first = child.namedChildren[0]?.text;
        if (first) bindings.set(first, { q: normalize(first) });
        if (first) bindings.modules.add(normalize(first));
      } else if (childType === "aliased_import") {
        const name = child.childForFieldName("name")?.text;
        const alias = child.childForFieldName("alias")?.text;
        if (name && alias) bindings.set(alias, { q: normalize(name) });
        if (name && alias) bindings.modules.add(normalize(name));
      }
    }
    return;
  }
  const moduleNode = node.childForFieldName("module_name");
  const module = normalize(moduleNode?.text ?? "");
  for (const child of node.namedChildren) {
    if (child.id === moduleNode?.id) continue;
    if (child.type === "wildcard_import") bindings.star(module);
    else if (child.type === "dotted_name") bindings.set(child.text.split(".").pop() ?? child.text, { q: normalize(`${module}.${child.text}`) });
    else if (child.type === "aliased_import") {
      const name = child.childForFieldName("name")?.text;
      const alias = child.childForFieldName("alias")?.text;
      if (name && alias) bindings.set(alias, { q: normalize(`${module}.${name}`) });
    }
  }
}

function bindAssignment(node: Node, type: string, ctx: PyContext, bindings: Bindings): void {
  const left = node.childForFieldName("left");
  const right = node.childForFieldName("right");
  if (!left || !right) return;
  const leftType = left.type;
  if (type === "augmented_assignment") {
    if (leftType !== "identifier") return;
    const before = bindings.lookup(left.text) ?? {};
    const add = ctx.ev.ev(right);
    const v: Val = { ...before, ...(add.decoded || before.decoded ? { decoded: true } : {}), ...(add.remote || before.remote ? { remote: true } : {}) };
    v.s = before.s !== undefined && add.s !== undefined && node.childForFieldName("operator")?.text === "+=" ? concat([before.s, add.s]) : undefined;
    if (v.s === undefined) delete v.s;
    else v.built = true;
    bindings.set(left.text, v);
    return;
  }
  if (leftType === "identifier") bindings.set(left.text, () => ctx.ev.ev(right));
  else if (leftType === "pattern_list" || leftType === "tuple_pattern") {
    left.namedChildren.forEach((n, i) => {
      if (n.type !== "identifier") return;
      bindings.set(n.text, () => {
        const value = ctx.ev.ev(right);
        if (value.items?.[i]) return value.items[i] ?? {};
        if (i === 0 && value.q?.endsWith(".accept()")) return { q: "socket.socket()" };
        return { ...(value.remote ? { remote: true } : {}), ...(value.socket ? { socket: true } : {}) };
      });
    });
  }
  // TLS checks switched off by attribute: ctx.check_hostname = False, ctx.verify_mode = ssl.CERT_NONE.
  if (leftType === "attribute") {
    const attr = left.childForFieldName("attribute")?.text;
    if (attr === "verify" && /^(False|0)$/.test(right.text)) ctx.add(node, "network", "high", "tls-verify-off", "TLS certificate verification is switched off for a client session", "Keep verify=True; add the CA bundle instead.");
    if (attr === "check_hostname" && right.text === "False") ctx.add(node, "network", "high", "tls-no-hostname-check", "TLS host name checking is switched off", "Keep check_hostname = True.");
  }
}

/**
 * `for k, v in os.environ.items()`: the loop variables carry the iterable's taint; over literal
 * elements (`for f in (exec,)`, `for a, b in [(1, exec)]`) they may be any of them.
 */
function bindLoopTarget(node: Node, evaluator: Evaluator, bindings: Bindings): void {
  const right = node.childForFieldName("right");
  const taint = (position: number | undefined): Val => {
    const source = evaluator.ev(right);
    if (source.items && source.items.length > 0) {
      const elements = position === undefined ? source.items : source.items.map((item) => item.items?.[position] ?? {});
      const picked = anyItem(elements);
      if (picked.q !== undefined) return picked;
    }
    const v: Val = {};
    if (source.secret) v.secret = source.secret;
    if (source.remote) v.remote = true;
    if (source.decoded) v.decoded = true;
    if (source.socket) v.socket = true;
    return v;
  };
  const left = node.childForFieldName("left");
  if (left?.type === "identifier") bindings.set(left.text, () => taint(undefined));
  else left?.namedChildren.forEach((n, i) => {
    if (n.type === "identifier") bindings.set(n.text, () => taint(i));
  });
}

/**
 * What a function of the program returns, as far as callers need it: the taints of its return values,
 * a callable it returns (`return exec`), or which parameter it returns unchanged (an identity function).
 */
function returnValue(def: Node, evaluator: Evaluator): Val {
  const params = parameterNames(def.childForFieldName("parameters"));
  const ret: Val = {};
  for (const r of def.childForFieldName("body")?.descendantsOfType("return_statement") ?? []) {
    const expr = r.namedChildren[0];
    const index = expr?.type === "identifier" ? params.indexOf(expr.text) : -1;
    if (index >= 0) return { param: { index, name: expr?.text ?? "" } };
    const v = evaluator.ev(expr);
    if (v.q !== undefined && !v.q.includes("(") && !v.q.startsWith("local.") && ret.q === undefined) ret.q = v.q;
    if (v.secret) ret.secret ??= v.secret;
    if (v.remote) ret.remote = true;
    if (v.decoded) ret.decoded = true;
    if (v.socket) ret.socket = true;
  }
  return ret;
}

/** Parameters with defaults are bound to them (`def f(run=exec): run(x)`), unless the name is bound elsewhere. */
function bindDefaults(root: Node, evaluator: Evaluator, bindings: Bindings): void {
  for (const def of root.descendantsOfType(["function_definition", "lambda"])) {
    for (const p of def.childForFieldName("parameters")?.namedChildren ?? []) {
      if (p.type !== "default_parameter" && p.type !== "typed_default_parameter") continue;
      const name = p.childForFieldName("name")?.text;
      const value = p.childForFieldName("value");
      if (name && value) bindings.setIfFree(name, () => evaluator.ev(value));
    }
  }
}

function isForever(node: Node, type: string): boolean {
  if (type === "while_statement") {
    const cond = node.childForFieldName("condition");
    return cond !== null && (cond.type === "true" || (cond.type === "integer" && cond.text !== "0"));
  }
  const right = node.childForFieldName("right");
  return right?.type === "call" && /^(itertools\.)?count\(|^iter\(int,\s*1\)/.test(right.text);
}

/** What an endless loop does without pausing: grow memory, fill the disk, or just spin. */
function endlessLoop(ctx: PyContext, node: Node): void {
  const body = node.childForFieldName("body");
  const text = body?.text ?? "";
  if (text.length > 4000 || /\b(break|return|raise|yield|await|sleep|wait|join|accept|recv\w*|read\w*|input|get|select|poll|serve_forever|exit)\b/.test(text)) return;
  if (/\.start\(\)|\bPopen\(|\bos\.(fork|system|spawn\w*)\(|\bsubprocess\.\w+\(/.test(text)) ctx.add(node, "resource-abuse", "high", "endless-spawn", "an endless loop starts processes or threads without pausing", "Bound the loop and use a pool with a limit.");
  else if (/\.(append|extend|insert)\(|\b(\w+)\s*(\+=|\*=)\s*\2\b|\b(\w+)\s*=\s*\4\s*[+*]\s*\4\b/.test(text)) ctx.add(node, "resource-abuse", "high", "endless-growth", "an endless loop grows a value each pass until memory runs out", "Bound the loop and the data it keeps.");
  else if (/\.(write|writelines)\(/.test(text)) ctx.add(node, "resource-abuse", "high", "endless-write", "an endless loop writes to a file without end, filling the disk", "Bound the loop and the data it writes.");
  else if (/^(pass|\.\.\.|continue|\d+)?$/.test(text.trim())) ctx.add(node, "resource-abuse", "medium", "endless-busy", "an endless loop spins without doing work or pausing", "Bound the loop, or wait on something in it.");
}

/** `for root, _, files in os.walk("/home")` / `Path.home().rglob("*")` with deletes or encryption inside. */
function massWalk(ctx: PyContext, node: Node): void {
  const right = node.childForFieldName("right");
  if (right?.type !== "call") return;
  const fnNode = right.childForFieldName("function");
  const q = ctx.ev.ev(fnNode).q ?? "";
  let dir: string | undefined;
  if (q === "os.walk" || q === "glob.glob" || q === "glob.iglob") {
    const a0 = ctx.ev.args(right).pos[0];
    dir = a0?.s?.replace(/\/\*\*?(\/\*)?$/, "");
  } else if (/^pathlib\.Path\(\)\.(rglob|glob|walk)$/.test(q)) dir = ctx.ev.ev(fnNode?.childForFieldName("object")).s;
  if (dir === undefined || !(isRootLikePath(dir) || dir === "/")) return;
  const body = node.childForFieldName("body")?.text ?? "";
  const action = /\b(os\.(remove|unlink)|shutil\.rmtree|\.unlink|\.rmtree)\(/.test(body) ? "deletes" : /encrypt\w*\(|\bAES\.new|Fernet/.test(body) ? "encrypts" : undefined;
  if (action) ctx.add(node, "filesystem", "high", action === "deletes" ? "mass-delete" : "mass-encrypt", `a loop over every file under "${dir}" ${action} them`, "Touch only the program's own files under /workspace.");
}

/** Callees some rule looks at; every other call is only checked for its keywords. */
const RULE_CALLEES =
  /^(builtins\.(eval|exec|compile|execfile|__import__|getattr|setattr|delattr|open)$|builtins\.open\(\)|os\.|subprocess\.|pty\.|asyncio\.create_subprocess|socket\.|ssl\.|requests\.|httpx\.|aiohttp\.|urllib|http\.client|pickle|dill|cloudpickle|shelve|jsonpickle|marshal|joblib|pandas\.read_pickle|numpy\.load|torch\.load|yaml\.|ctypes|cffi|mmap|shutil\.|pathlib\.Path\(\)\.|io\.open|codecs\.(open|decode)|types\.|runpy|importlib|platform\.popen|pexpect|tempfile\.mktemp|_?winreg|crontab|wget|smtplib|ftplib|telnetlib|paramiko|dns\.|multiprocessing|threading|code\.|tarfile|zipfile\.ZipFile\(\)|xml\.|lxml|setuptools|distutils|socketserver\.|http\.server\.)/;

function checkCall(ctx: PyContext, node: Node): void {
  const fnNode = node.childForFieldName("function");
  const fn = ctx.ev.ev(fnNode);
  // Most calls (print, len, df.groupby) reach nothing a rule knows: skip their arguments unless they
  // pass a keyword some rule reads on any callee (verify=False, host="0.0.0.0").
  if (!RULE_CALLEES.test(fn.q ?? "") && !fn.built && !fn.via) {
    // `(Path(x) / "a.pth").write_text(...)`: the receiver names the file.
    const method = fn.q === undefined && fnNode?.type === "attribute" ? fnNode.childForFieldName("attribute")?.text : undefined;
    const receiver = method === "write_text" || method === "write_bytes" ? (fnNode?.childForFieldName("object")?.text.slice(-20) ?? "") : "";
    const text = `${node.childForFieldName("arguments")?.text ?? ""}${receiver}`;
    if (!/verify|ssl|host|0\.0\.0\.0|debug|shell|docker\.sock|\.pth["']/.test(text)) return;
  }
  const { pos, kw, posNodes, kwNodes } = ctx.ev.args(node);
  const call: CallInfo = { node, fnNode, q: fn.q ?? "", fn, pos, kw, posNodes, kwNodes };
  checkCodeExec(ctx, call);
  checkProcess(ctx, call);
  checkDeserialization(ctx, call);
  checkNative(ctx, call);
  checkNetwork(ctx, call);
  checkFilesystem(ctx, call);
  if (call.q === "os.dup2") {
    const first = posNodes[0]?.text ?? "";
    // Any fd copied over stdio counts for the socket + shell rule; only a known socket is a finding alone.
    if (/fileno\(\)/.test(first) || pos[0]?.q?.startsWith("socket.") === true) ctx.facts.dup2 ??= posOf(node);
    if (pos[0]?.q?.startsWith("socket.") === true) {
      ctx.add(node, "reverse-shell", "high", "dup2-socket", "os.dup2 points the standard streams at a socket", "Remove this: it hands the process's input and output to a remote host.");
    }
  }
}

/** Findings that need two facts: a socket and a shell, credentials and a send. */
function correlate(ctx: PyContext): void {
  const f = ctx.facts;
  const socket = f.socketConnect ?? f.socketListen;
  const shell = f.dup2 ?? f.shellSpawn;
  if (socket && shell && (f.dup2 || f.shellSpawn)) {
    ctx.add(shell, "reverse-shell", "critical", "socket-shell", `a shell is wired to a network socket (socket at line ${socket.line}): a ${f.socketListen && !f.socketConnect ? "bind" : "reverse"} shell`, "Remove this code: it gives a remote host a shell.");
  }
  if (f.credentialRead && f.networkSend && !ctx.has("exfiltration", "critical")) {
    ctx.add(f.networkSend, "exfiltration", "critical", "credentials-sent", `credentials read at line ${f.credentialRead.line} and data sent over the network`, "Never send credentials or keys to a remote host.");
  }
}

/** Node types the rules read; everything else is reached through them. */
const WALK_TYPES = ["import_statement", "import_from_statement", "assignment", "augmented_assignment", "with_item", "while_statement", "for_statement", "call", "exec_statement"];
/** With attributes, for code that names a broken TLS setting. */
const WALK_TYPES_TLS = [...WALK_TYPES, "attribute"];
const TLS_NAMES = /CERT_NONE|PROTOCOL_(SSLv|TLSv1\b|TLSv1_1)/;
const WALKED: ReadonlySet<string> = new Set(WALK_TYPES_TLS);

function findings(root: Node, source: string, found: readonly FoundNode[]): Finding[] {
  const bindings = new Bindings();
  const evaluator: Evaluator = new Evaluator({ lookup: (name) => bindings.lookup(name), isDownloaded: (path): boolean => ctx.isDownloaded(path), isModule: (q) => bindings.modules.has(q) });
  const ctx: PyContext = new PyContext(evaluator);
  // Top-level functions and classes shadow builtins of the same name (a user's own `compile`).
  for (const child of root.namedChildren) {
    const def = child.type === "decorated_definition" ? child.childForFieldName("definition") : child;
    if (def?.type === "function_definition" || def?.type === "class_definition") {
      const name = def.childForFieldName("name")?.text;
      if (!name) continue;
      if (def.type === "class_definition") bindings.set(name, { q: `local.${name}` });
      else {
        // A function's result carries the taint of what it returns (def grab(): return dict(os.environ)).
        bindings.set(name, () => ({ q: `local.${name}`, ret: returnValue(def, evaluator) }));
      }
    }
  }
  if (/\bdef\b|\blambda\b/.test(source)) bindDefaults(root, evaluator, bindings);
  // The analyzer's one native pass collects the nodes rules read (searchTypes), in source order; walking
  // every node from JavaScript (cursor moves cross into wasm each time) costs several times more.
  const loops: { end: number; forever: boolean }[] = [];
  for (const { node, type } of found) {
    if (!WALKED.has(type)) continue;
    const start = node.startIndex;
    while (loops.length > 0 && (loops[loops.length - 1]?.end ?? 0) <= start) loops.pop();
    switch (type) {
      case "import_statement":
      case "import_from_statement":
        bindImport(node, type, bindings);
        break;
      case "assignment":
      case "augmented_assignment":
        bindAssignment(node, type, ctx, bindings);
        break;
      case "with_item": {
        const item = node.childForFieldName("value");
        if (item?.type === "as_pattern") {
          const target = item.childForFieldName("alias")?.namedChildren[0];
          const value = item.namedChildren[0];
          if (target?.type === "identifier") bindings.set(target.text, () => evaluator.ev(value));
        }
        break;
      }
      case "while_statement":
      case "for_statement":
        loops.push({ end: node.endIndex, forever: isForever(node, type) });
        if (loops[loops.length - 1]?.forever) endlessLoop(ctx, node);
        if (type === "for_statement") {
          bindLoopTarget(node, evaluator, bindings);
          massWalk(ctx, node);
        }
        break;
      case "exec_statement": {
        // Python 2's `exec code in ns`, still parsed: judged like exec(code).
        const codeNode = node.childForFieldName("code");
        const call: CallInfo = { node, fnNode: null, q: "builtins.exec", fn: { q: "builtins.exec" }, pos: [evaluator.ev(codeNode)], kw: new Map(), posNodes: codeNode ? [codeNode] : [], kwNodes: new Map() };
        checkCodeExec(ctx, call);
        break;
      }
      case "call":
        ctx.loop = loops.length === 0 ? undefined : loops.some((l) => l.forever) ? "forever" : "loop";
        checkCall(ctx, node);
        break;
      case "attribute": {
        const q = evaluator.ev(node).q;
        if (q === "ssl.CERT_NONE") ctx.add(node, "network", "high", "tls-cert-none", "ssl.CERT_NONE turns TLS certificate verification off", "Use ssl.CERT_REQUIRED with a CA bundle.");
        else if (q !== undefined && /^ssl\.PROTOCOL_(SSLv2|SSLv3|TLSv1|TLSv1_1)$/.test(q)) ctx.add(node, "network", "high", "tls-old-version", `${q} selects a broken TLS/SSL version`, "Use ssl.create_default_context(), which negotiates TLS 1.2 or newer.");
        break;
      }
      default:
    }
  }
  correlate(ctx);
  return ctx.findings;
}

export const pythonRules: LanguageRules = {
  grammar: "python",
  metricNodes: {
    function: ["function_definition", "lambda"],
    call: ["call"],
    import: ["import_statement", "import_from_statement", "future_import_statement"],
    branch: ["if_statement", "elif_clause", "for_statement", "while_statement", "except_clause", "boolean_operator", "conditional_expression", "case_clause", "for_in_clause", "if_clause"],
  },
  searchTypes: (source) => (TLS_NAMES.test(source) ? WALK_TYPES_TLS : WALK_TYPES),
  findings: (root, source, found) => findings(root, source, found),
};
