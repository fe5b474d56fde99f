// What a Python expression stands for, as far as a reader can tell without running it: a qualified
// name (through imports, aliases, getattr, __import__, globals()), a folded constant string, and taints.

import type { Node } from "web-tree-sitter";
import { append, charge, concat, join, reverse } from "./fold-budget.js";
import { DECODERS, HOST_IDENTITY, REMOTE_CALL, STRING_METHODS, decodeLiteral, unescape } from "./python-fold.js";
import { isCredentialPath } from "./python-paths.js";

/** Where a value's data came from, when that matters to a rule. */
export interface Taint {
  /** Built from encoded data: base64, hex, zlib, marshal, char codes, rot13. */
  decoded?: boolean;
  /** Fetched over the network (HTTP response, socket recv). */
  remote?: boolean;
  /** Received on a raw socket (a command channel). */
  socket?: boolean;
  /** Sensitive data: the whole environment, a credentials file, host identity. */
  secret?: string;
  /** One environment variable's value (by name): not secret alone, but not to be smuggled into a DNS name. */
  env?: string;
}

export interface Val extends Taint {
  /** Qualified name of a module, function or instance ("os.system", "socket.socket()"). */
  q?: string;
  /** The constant string, when the expression folds to one. */
  s?: string;
  /** Literal text with unknown parts as \u0000, for strings that only partly fold (f-strings). */
  t?: string;
  /** The name or string came out of folding pieces (concat, join, chr, decode, reversal). */
  built?: boolean;
  /** Elements of a literal list or tuple. */
  items?: Val[];
  /** A literal integer. */
  n?: number;
  /** An object opened on a path (open(), Path()). */
  path?: string;
  mode?: string;
  /** The name was reached through a lookup (getattr, __import__, globals(), sys.modules), not written. */
  via?: boolean;
  /** What calling it returns (lambdas, the program's functions). */
  ret?: Val;
  /** In a `ret`: the function returns this parameter (an identity function), given or defaulted. */
  param?: { index: number; name: string };
  /** Values of a dictionary under constant keys. */
  entries?: Map<string, Val>;
}

/** Callables a rule cares about, preferred when any element of a container may be the one used. */
const RISKY_CALLABLE = /^(builtins\.(eval|exec|compile|execfile|__import__|getattr|open|globals|vars)$|(os|subprocess|pty|socket|ctypes|pickle|marshal|importlib|shutil|posix)(\.|$))/;

/** A plain callable or module (`builtins.exec`, `os.system`), not the result of a call: what containers and functions hand on. */
function isCallableName(v: Val | undefined): v is Val & { q: string } {
  return v?.q !== undefined && !v.q.includes("(") && !v.q.startsWith("local.");
}

/**
 * The element a lookup of unknown key or a loop over `items` may give: the first plain callable among
 * them (`{"x": exec}[k]`, `for f in (exec,)`), else their taints together.
 */
export function anyItem(items: readonly Val[]): Val {
  const callable = items.find((item) => isCallableName(item) && RISKY_CALLABLE.test(item.q)) ?? items.find(isCallableName);
  if (callable) return { ...callable, via: true };
  const v: Val = {};
  for (const item of items) merge(v, item);
  return v;
}

/** Nesting of expressions the evaluator follows (a 30 000-term "a" + "b" + ... chain is 30 000 deep). */
const MAX_DEPTH = 400;

const DOTTED = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$/;

const BUILTIN_NAMES = new Set([
  "eval", "exec", "compile", "open", "__import__", "getattr", "setattr", "globals", "locals", "vars", "chr", "ord",
  "bytes", "bytearray", "str", "dict", "list", "input", "breakpoint", "memoryview", "map", "print", "repr", "format",
]);

const MODULE_ALIASES: Record<string, string> = {
  __builtin__: "builtins", cPickle: "pickle", _pickle: "pickle", "six.moves.cPickle": "pickle", commands: "subprocess",
  posix: "os", nt: "os", "urllib2": "urllib.request", "six.moves.urllib.request": "urllib.request", httplib: "http.client",
  "_thread": "threading", "_posixsubprocess": "subprocess",
};

const ALIAS_HEADS = new Set(Object.keys(MODULE_ALIASES).map((k) => k.split(".")[0]));

export function normalize(q: string): string {
  const dot = q.indexOf(".");
  if (!ALIAS_HEADS.has(dot < 0 ? q : q.slice(0, dot))) return q;
  for (const [from, to] of Object.entries(MODULE_ALIASES)) {
    if (q === from || q.startsWith(from + ".")) return to + q.slice(from.length);
  }
  return q;
}


function merge(into: Val, from: Val | undefined): Val {
  if (!from) return into;
  if (from.decoded) into.decoded = true;
  if (from.remote) into.remote = true;
  if (from.socket) into.socket = true;
  if (from.secret && !into.secret) into.secret = from.secret;
  if (from.env && !into.env) into.env = from.env;
  return into;
}


/** The string of a list of char codes, without spreading (a payload may hold 100 000 of them). */
function charCodes(items: readonly Val[]): string {
  charge(items.length);
  let out = "";
  for (const item of items) out += String.fromCharCode((item.n ?? 0) & 0xffff);
  return out;
}

/** The names of a parameter list, in order (plain, typed, defaulted; not *args or **kwargs). */
export function parameterNames(list: Node | null | undefined): string[] {
  const names: string[] = [];
  for (const p of list?.namedChildren ?? []) {
    if (p.type === "identifier") names.push(p.text);
    else if (p.type === "typed_parameter") names.push(p.namedChildren.find((c) => c.type === "identifier")?.text ?? "");
    else if (p.type === "default_parameter" || p.type === "typed_default_parameter") names.push(p.childForFieldName("name")?.text ?? "");
  }
  return names;
}

export interface ValueHost {
  /** The binding of a plain name, if the program assigned or imported it. */
  lookup(name: string): Val | undefined;
  /** Whether `q` names a module the program imported (not a value). */
  isModule?(q: string): boolean;
  /** Whether the program wrote downloaded data to this path. */
  isDownloaded?(path: string): boolean;
}

/** Evaluates expressions to Vals, memoised per node so nested calls are folded once. */
export class Evaluator {
  private readonly memo = new Map<number, Val>();
  private depth = 0;

  constructor(private readonly host: ValueHost) {}

  ev(node: Node | null | undefined): Val {
    if (!node) return {};
    const hit = this.memo.get(node.id);
    if (hit) return hit;
    // Deeper than any real expression: give up on this one rather than overflow the stack.
    if (this.depth >= MAX_DEPTH) return {};
    this.depth++;
    try {
      const v = this.compute(node);
      this.memo.set(node.id, v);
      return v;
    } finally {
      this.depth--;
    }
  }

  private compute(node: Node): Val {
    switch (node.type) {
      case "identifier":
        return this.identifier(node.text);
      case "attribute": {
        // A plain dotted name (os.path.join) is resolved from its text, without child nodes.
        const text = node.text;
        if (DOTTED.test(text)) {
          const parts = text.split(".");
          let v = this.identifier(parts[0] ?? "");
          for (let i = 1; i < parts.length; i++) v = this.member(v, parts[i] ?? "");
          return v;
        }
        return this.member(this.ev(node.childForFieldName("object")), node.childForFieldName("attribute")?.text ?? "");
      }
      case "string":
        return this.stringVal(node);
      case "concatenated_string": {
        const parts = node.namedChildren.map((c) => this.ev(c));
        return this.concat(parts, false);
      }
      case "integer": {
        const text = node.text.replace(/_/g, "");
        const n = /^0[oO]/.test(text) ? parseInt(text.slice(2), 8) : Number(text);
        return Number.isFinite(n) ? { n } : {};
      }
      case "parenthesized_expression":
      case "await":
        return this.ev(node.namedChildren[0]);
      case "unary_operator": {
        const operand = this.ev(node.childForFieldName("argument"));
        if (node.childForFieldName("operator")?.text === "-" && operand.n !== undefined) return { n: -operand.n };
        return merge({}, operand);
      }
      case "binary_operator": {
        const left = this.ev(node.childForFieldName("left"));
        const right = this.ev(node.childForFieldName("right"));
        const op = node.childForFieldName("operator")?.text;
        if (op === "+") return this.concat([left, right], true);
        if (op === "/" && left.s !== undefined && right.s !== undefined) return { q: left.q, s: concat([left.s.replace(/\/$/, ""), "/", right.s]) };
        if (op === "|" && left.n !== undefined && right.n !== undefined) return { n: left.n | right.n };
        if (op === "%") return merge(merge({ t: left.s ?? left.t }, left), right);
        return merge(merge({}, left), right);
      }
      case "subscript":
        return this.subscript(node);
      case "call":
        return this.call(node);
      case "list":
      case "tuple":
      case "expression_list": {
        const items = node.namedChildren.map((c) => this.ev(c));
        const v: Val = { items };
        for (const item of items) merge(v, item);
        return v;
      }
      case "lambda": {
        const body = node.childForFieldName("body");
        const params = parameterNames(node.childForFieldName("parameters"));
        const index = body?.type === "identifier" ? params.indexOf(body.text) : -1;
        return { ret: index >= 0 ? { param: { index, name: body?.text ?? "" } } : this.ev(body) };
      }
      case "list_comprehension":
      case "dictionary_comprehension":
      case "set_comprehension":
      case "generator_expression": {
        // `{k: v for k, v in os.environ.items()}` carries the taint of what it iterates.
        const v: Val = {};
        for (const c of node.namedChildren) merge(v, this.ev(c.type === "for_in_clause" ? c.childForFieldName("right") : c.type === "if_clause" ? null : c));
        return v;
      }
      case "dictionary": {
        // Values by constant key, and all of them as items: `{"x": exec}["x"]`, `d[k]`, `d.values()`.
        const v: Val = { items: [], entries: new Map() };
        for (const c of node.namedChildren) {
          if (c.type !== "pair") {
            merge(v, this.ev(c));
            continue;
          }
          const value = this.ev(c.childForFieldName("value"));
          const key = this.ev(c.childForFieldName("key"));
          merge(v, value);
          v.items?.push(value);
          if (key.s !== undefined) v.entries?.set(key.s, value);
        }
        return v;
      }
      case "set": {
        const items = node.namedChildren.map((c) => this.ev(c));
        const v: Val = { items };
        for (const item of items) merge(v, item);
        return v;
      }
      case "conditional_expression":
      case "boolean_operator": {
        // Either side may be the value: a callable on one side is handed on (`exec if x else print`).
        return anyItem(node.namedChildren.map((c) => this.ev(c)));
      }
      case "pair":
      case "dictionary_splat":
      case "list_splat": {
        const v: Val = {};
        for (const c of node.namedChildren) merge(v, this.ev(c));
        return v;
      }
      default:
        return {};
    }
  }

  private member(obj: Val, attr: string): Val {
    const v: Val = merge({}, obj);
    if (obj.q) v.q = attr === "__dict__" ? obj.q : normalize(`${obj.q}.${attr}`);
    if (obj.q && obj.via) v.via = true;
    if (obj.q && obj.built) v.built = true;
    if (v.q === "os.environ") v.secret = "the whole environment";
    if (obj.path !== undefined) v.path = obj.path;
    else if (obj.q === "pathlib.Path()" && obj.s !== undefined) v.path = obj.s;
    return v;
  }

  private identifier(name: string): Val {
    const bound = this.host.lookup(name);
    if (bound) return bound;
    if (name === "__builtins__") return { q: "builtins", via: true };
    if (BUILTIN_NAMES.has(name)) return { q: `builtins.${name}` };
    return {};
  }

  private stringVal(node: Node): Val {
    const start = node.namedChildren[0];
    const prefix = (start?.type === "string_start" ? start.text : "").replace(/['"]/g, "");
    const raw = /r/i.test(prefix);
    let s = "";
    let t = "";
    let whole = true;
    const v: Val = {};
    for (const child of node.namedChildren) {
      const type = child.type;
      if (type === "string_content") {
        const content = child.text;
        const text = raw ? content : unescape(content);
        if (!raw && /\\(x|u|[0-7])/.test(content)) v.built = true;
        s = append(s, text);
        t = append(t, text);
      } else if (type === "interpolation") {
        const inner = this.ev(child.childForFieldName("expression"));
        merge(v, inner);
        if (inner.s !== undefined && !child.childForFieldName("format_specifier")) {
          s = append(s, inner.s);
          t = append(t, inner.s);
          v.built = true;
        } else {
          whole = false;
          t = append(t, "\u0000");
        }
      }
    }
    if (whole) v.s = s;
    v.t = t;
    return v;
  }

  private concat(parts: Val[], built: boolean): Val {
    const v: Val = {};
    for (const p of parts) {
      merge(v, p);
      if (p.built) v.built = true;
    }
    if (parts.every((p) => p.s !== undefined)) {
      v.s = concat(parts.map((p) => p.s ?? ""));
      v.t = v.s;
      if (built) v.built = true;
    } else v.t = concat(parts.map((p) => p.s ?? p.t ?? "\u0000"));
    if (parts.every((p) => p.items)) v.items = parts.flatMap((p) => p.items ?? []);
    return v;
  }

  private subscript(node: Node): Val {
    const base = this.ev(node.childForFieldName("value"));
    const keyNode = node.childForFieldName("subscript");
    if (keyNode?.type === "slice") {
      const v = merge({}, base);
      if (base.s !== undefined && keyNode.text.replace(/\s/g, "") === "::-1") {
        v.s = reverse(base.s);
        v.built = true;
      }
      return v;
    }
    const key = this.ev(keyNode);
    if (base.q && key.s !== undefined) {
      if (base.q === "builtins.globals()" || base.q === "builtins.locals()" || base.q === "builtins.vars()") {
        if (key.s === "__builtins__") return { q: "builtins", built: key.built, via: true };
        const bound = this.host.lookup(key.s);
        return { ...(bound ?? { q: `builtins.${key.s}` }), built: key.built, via: true };
      }
      if (base.q === "sys.modules") return { q: normalize(key.s), built: key.built, via: true };
      if (base.q === "builtins") return { q: `builtins.${key.s}`, built: key.built, via: true };
      if (base.q === "os.environ") return key.s === "HOME" ? { s: "~" } : { env: key.s };
      // A module's namespace by key: os.__dict__["system"], vars(os)["popen"].
      if (!base.q.includes("(") && /^[A-Za-z_]\w*$/.test(key.s) && (this.host.isModule?.(base.q) ?? false)) {
        return { q: normalize(`${base.q}.${key.s}`), built: key.built, via: true };
      }
    }
    const v = merge({}, base);
    if (base.entries && key.s !== undefined && base.entries.has(key.s)) return base.entries.get(key.s) ?? v;
    if (base.items && key.n !== undefined && base.items[key.n < 0 ? base.items.length + key.n : key.n]) return base.items[key.n < 0 ? base.items.length + key.n : key.n] ?? v;
    // A key the analysis cannot tell: any element may come out.
    if (base.items && base.items.length > 0) return anyItem(base.items);
    return v;
  }

  /** Argument values: positional in order, keywords by name. */
  args(call: Node): { pos: Val[]; kw: Map<string, Val>; kwNodes: Map<string, Node>; posNodes: Node[] } {
    const pos: Val[] = [];
    const posNodes: Node[] = [];
    const kw = new Map<string, Val>();
    const kwNodes = new Map<string, Node>();
    const list = call.childForFieldName("arguments");
    if (list?.type === "argument_list") {
      for (const a of list.namedChildren) {
        const type = a.type;
        if (type === "keyword_argument") {
          const name = a.childForFieldName("name")?.text ?? "";
          const value = a.childForFieldName("value");
          kw.set(name, this.ev(value));
          if (value) kwNodes.set(name, value);
        } else if (type !== "comment") {
          pos.push(this.ev(a));
          posNodes.push(a);
        }
      }
    } else if (list) {
      pos.push(this.ev(list));
      posNodes.push(list);
    }
    return { pos, kw, kwNodes, posNodes };
  }

  private call(node: Node): Val {
    const fnNode = node.childForFieldName("function");
    const fn = this.ev(fnNode);
    const { pos, kw } = this.args(node);
    // What a lambda or the program's function hands back: a parameter (identity), or a callable it names.
    const param = fn.ret?.param;
    if (param) {
      const given = pos[param.index] ?? kw.get(param.name) ?? this.host.lookup(param.name);
      if (isCallableName(given)) return { ...given, via: true };
    } else if (isCallableName(fn.ret)) return { ...fn.ret, via: true };
    const q = fn.q;
    const a0 = pos[0];
    const out: Val = {};
    // Receiver and arguments pass their taint on (str(x), x.decode(), json.dumps(x), f.read()).
    merge(out, fn);
    merge(out, fn.ret);
    for (const p of pos) merge(out, p);
    for (const v of kw.values()) merge(out, v);
    if (q === "builtins.getattr" && pos[1]?.s !== undefined && pos[0]?.q) {
      return { q: normalize(`${pos[0].q}.${pos[1].s}`), built: pos[1].built || pos[0].built, via: true };
    }
    if ((q === "builtins.__import__" || q === "importlib.import_module") && a0?.s !== undefined) {
      return { q: normalize(a0.s), built: a0.built || a0.decoded, via: true };
    }
    if (q === "builtins.globals" || q === "builtins.locals") return { q: `${q}()` };
    if (q === "builtins.vars") return a0 ? { ...a0, q: a0.q === "builtins" ? "builtins" : a0.q } : { q: "builtins.vars()" };
    if (q === "builtins.chr" && a0?.n !== undefined) return { s: String.fromCharCode(a0.n), built: true, decoded: true };
    const dq = q?.replace(/^builtins\./, "");
    if (dq && DECODERS.has(dq)) {
      const decodedText = a0?.s !== undefined ? decodeLiteral(dq, a0.s, pos[1]?.s ?? kw.get("encoding")?.s) : undefined;
      const enc = (pos[1]?.s ?? "").toLowerCase();
      if (dq === "codecs.decode" && !/rot|hex|base64|zlib|bz2|uu/.test(enc)) return out;
      const v: Val = { ...out, decoded: true, built: true };
      delete v.q;
      if (decodedText !== undefined) v.s = decodedText;
      return v;
    }
    if (fnNode?.type === "attribute") {
      const method = fnNode.childForFieldName("attribute")?.text ?? "";
      const recv = this.ev(fnNode.childForFieldName("object"));
      if (method === "join" && recv.s !== undefined) {
        const joined = this.joinArg(node, pos[0]);
        if (joined) return merge({ ...joined, s: joined.s === undefined ? undefined : joined.items ? joined.s : joined.s }, out);
      }
      const fold = STRING_METHODS[method];
      if (fold && (recv.s !== undefined || recv.t !== undefined)) {
        const v: Val = merge({}, out);
        delete v.q;
        if (recv.s !== undefined) {
          const s = fold(recv.s, pos);
          if (s !== undefined) v.s = s;
        }
        v.t = recv.t ?? recv.s;
        v.built = recv.built || method === "format";
        return v;
      }
      if (recv.q === "pathlib.Path()" && recv.s !== undefined) {
        if (method === "expanduser" || method === "resolve" || method === "absolute") return { q: "pathlib.Path()", s: recv.s };
        if (method === "joinpath" && pos.every((p) => p.s !== undefined)) return { q: "pathlib.Path()", s: join([recv.s, ...pos.map((p) => p.s ?? "")], "/") };
        if ((method === "glob" || method === "rglob" || method === "iterdir") && isCredentialPath(`${recv.s}/${(pos[0]?.s ?? "x").replace(/\*/g, "x")}`)) {
          return { secret: recv.s };
        }
      }
      if (recv.q === "os.environ" && (method === "get" || method === "pop" || method === "setdefault")) return pos[0]?.s === "HOME" ? { s: "~" } : { env: pos[0]?.s ?? "?" };
      if (recv.items && recv.q === undefined) {
        if ((method === "get" || method === "pop" || method === "setdefault") && pos[0]?.s !== undefined && recv.entries?.has(pos[0].s)) return recv.entries.get(pos[0].s) ?? {};
        if (method === "get" || method === "pop" || method === "setdefault" || method === "popitem") return anyItem(recv.items);
        if (method === "values" || method === "copy") return { items: recv.items };
      }
    }
    if ((q === "os.listdir" || q === "os.scandir" || q === "os.walk" || q === "glob.glob" || q === "glob.iglob") && a0?.s !== undefined && isCredentialPath(`${a0.s}/id_x`.replace(/\*/g, "x"))) {
      return { secret: a0.s };
    }
    if (q === "os.getenv") return a0?.s === "HOME" ? { s: "~" } : { env: a0?.s ?? "?" };
    if (q === "os.path.expanduser" || q === "pathlib.Path" || q === "pathlib.PurePath" || q === "pathlib.PosixPath" || q === "os.path.abspath" || q === "os.path.realpath" || q === "os.fspath" || q === "builtins.str") {
      const v = merge({}, out);
      v.q = q === "builtins.str" ? undefined : "pathlib.Path()";
      if (a0?.s !== undefined) v.s = a0.s;
      else if (a0?.t !== undefined) v.t = a0.t;
      if (q === "builtins.str") delete v.q;
      return v;
    }
    if (q === "pathlib.Path.home" || q === "os.path.expanduser") return { q: "pathlib.Path()", s: "~" };
    if (q === "os.path.join" && pos.length > 0) {
      if (pos.every((p) => p.s !== undefined)) return { s: join(pos.map((p) => p.s ?? ""), "/").replace(/\/+/g, "/") };
      return merge({ t: join(pos.map((p) => p.s ?? p.t ?? "\u0000"), "/") }, out);
    }
    if (q === "builtins.bytes" || q === "builtins.bytearray") {
      if (a0?.items?.every((i) => i.n !== undefined)) return { s: charCodes(a0.items), decoded: true, built: true };
      if (a0?.s !== undefined) return merge({ s: a0.s }, a0);
    }
    if (q === "builtins.open" || q === "io.open" || q === "codecs.open" || q === "os.open") {
      const path = a0?.s ?? a0?.t;
      const v: Val = { q: "builtins.open()", mode: pos[1]?.s ?? kw.get("mode")?.s ?? "r" };
      if (path !== undefined) v.path = path;
      if (path !== undefined && isCredentialPath(path)) v.secret = path;
      if (path !== undefined && this.host.isDownloaded?.(path)) v.remote = true;
      return v;
    }
    if (q && /\.(read_text|read_bytes|open)$/.test(q) && fn.path !== undefined) {
      const v: Val = merge({ q: "builtins.open()", path: fn.path, mode: pos[0]?.s ?? "r" }, out);
      if (isCredentialPath(fn.path)) v.secret = fn.path;
      if (q.endsWith(".open")) return v;
      delete v.q;
      return v;
    }
    if (q && REMOTE_CALL.test(q)) {
      out.remote = true;
      if (q.startsWith("socket.")) out.socket = true;
    }
    if (q && HOST_IDENTITY.has(q)) out.secret ??= "host identity";
    if (q && !q.endsWith("()")) out.q = `${q}()`;
    else delete out.q;
    return out;
  }

  /** `"".join(...)` of literal pieces, chr() of char codes, map(chr, [...]). */
  private joinArg(call: Node, arg: Val | undefined): Val | undefined {
    const list = call.childForFieldName("arguments");
    const argNode = list?.type === "generator_expression" ? list : list?.namedChildren[0];
    if (!argNode) return undefined;
    const sep = this.ev(call.childForFieldName("function")?.childForFieldName("object")).s ?? "";
    if (arg?.items && arg.items.every((i) => i.s !== undefined)) return { s: join(arg.items.map((i) => i.s ?? ""), sep), built: true, decoded: arg.decoded, items: undefined };
    if (argNode.type === "generator_expression" || argNode.type === "list_comprehension") {
      const body = argNode.childForFieldName("body");
      const clause = argNode.namedChildren.find((c) => c.type === "for_in_clause");
      const source = this.ev(clause?.childForFieldName("right"));
      if (body?.type === "call" && this.ev(body.childForFieldName("function")).q === "builtins.chr") {
        if (source.items?.every((i) => i.n !== undefined)) return { s: charCodes(source.items), built: true, decoded: true };
        return { built: true, decoded: true };
      }
      return undefined;
    }
    if (argNode.type === "call" && this.ev(argNode.childForFieldName("function")).q === "builtins.map") {
      const mapArgs = argNode.childForFieldName("arguments")?.namedChildren ?? [];
      if (mapArgs[0] && this.ev(mapArgs[0]).q === "builtins.chr") {
        const source = this.ev(mapArgs[1]);
        if (source.items?.every((i) => i.n !== undefined)) return { s: charCodes(source.items), built: true, decoded: true };
        return { built: true, decoded: true };
      }
    }
    return undefined;
  }
}
