// Python rules on calls that run code or programs: eval/exec/compile, dynamic imports and builtin
// lookups, os.system/subprocess/os.exec*/pty, deserializers that run code, ctypes, fork and spawn loops.

import type { Node } from "web-tree-sitter";
import type { PyContext } from "./python-context.js";
import { HARMLESS_PROGRAMS, shellTextRisk } from "./python-paths.js";
import type { Val } from "./python-values.js";

export interface CallInfo {
  node: Node;
  fnNode: Node | null;
  /** Qualified name of the callee, "" when unknown. */
  q: string;
  fn: Val;
  pos: Val[];
  kw: Map<string, Val>;
  posNodes: Node[];
  kwNodes: Map<string, Node>;
}

const DANGEROUS_MODULES = new Set(["os", "subprocess", "socket", "pty", "ctypes", "builtins", "marshal", "pickle", "shutil", "importlib", "sys", "pexpect", "commands", "posix"]);
const DANGEROUS_BUILTINS = new Set(["eval", "exec", "compile", "__import__", "execfile", "open", "getattr", "globals", "vars"]);

/** A name reached through string folding or lookups (getattr, globals(), __import__) rather than written. */
function isIndirect(call: CallInfo): boolean {
  return call.fn.built === true || call.fn.via === true;
}

export function isDangerousName(q: string): boolean {
  const [mod, name] = q.split(".");
  if (mod === "builtins") return name !== undefined && DANGEROUS_BUILTINS.has(name);
  return mod !== undefined && DANGEROUS_MODULES.has(mod) && q !== mod;
}

const CODE_EXEC = new Set(["builtins.eval", "builtins.exec", "builtins.compile", "builtins.execfile", "code.InteractiveInterpreter().runsource", "code.InteractiveConsole().push", "code.interact"]);

const CODE_WORDS = /\b(import|__import__|exec|eval|system|popen|subprocess|socket|b64decode|open|getattr|compile)\b/;

export function checkCodeExec(ctx: PyContext, c: CallInfo): void {
  if (c.q && isIndirect(c) && isDangerousName(c.q)) {
    ctx.add(c.node, "obfuscation", c.fn.built ? "high" : "medium", "indirect-name",
      `${c.q.replace(/^builtins\./, "")} is reached through ${c.fn.built ? "a name built from strings" : "a lookup (getattr, globals(), __import__)"} instead of by its name`,
      "Call functions by their plain names; indirect lookups of dangerous builtins and modules hide what the code does.");
  }
  if (CODE_EXEC.has(c.q)) {
    const name = c.q.replace(/^builtins\./, "");
    const arg = c.pos[0] ?? c.kw.get("source") ?? {};
    if (arg.socket) ctx.add(c.node, "reverse-shell", "critical", "exec-socket-data", `${name} runs code received on a socket`, "Never execute data received over the network.");
    else if (arg.remote) ctx.add(c.node, "download-exec", "critical", "exec-downloaded", `${name} runs code downloaded from the network`, "Never execute downloaded code; pin and review dependencies instead.");
    else if (arg.decoded) ctx.add(c.node, "obfuscation", "critical", "exec-decoded", `${name} runs code decoded from an encoded blob (base64, hex, zlib, marshal or char codes)`, "Do not execute encoded payloads; ship readable source code.");
    else if (arg.s !== undefined) {
      const risky = shellTextRisk(arg.s);
      if (risky) ctx.add(c.node, risky.kind, "critical", `exec-literal-${risky.kind}`, `${name} runs a string that contains ${risky.what}`, "Remove the payload.");
      if (arg.built && CODE_WORDS.test(arg.s)) ctx.add(c.node, "obfuscation", "high", "exec-built-string", `${name} runs code assembled from string pieces`, "Write the code directly instead of assembling and executing it.");
      else if (CODE_WORDS.test(arg.s)) ctx.add(c.node, "code-exec", "medium", `${name}-literal-code`, `${name} runs a literal string of code that imports or calls dangerous functions`, "Write the code directly instead of executing a string.");
      else ctx.add(c.node, "code-exec", "low", `${name}-literal`, `${name} of a literal constant`, "Use ast.literal_eval or the value itself.");
    } else if (arg.q === "builtins.compile()" || arg.q === "builtins.open()") {
      ctx.add(c.node, "code-exec", "high", `${name}-dynamic`, `${name} runs code that is not a literal`, "Avoid executing code built at run time; use ast.literal_eval or json for data.");
    } else {
      ctx.add(c.node, "code-exec", "high", `${name}-dynamic`, `${name} runs code built from a variable`, "Avoid executing code built at run time; use ast.literal_eval or json for data.");
    }
    return;
  }
  switch (c.q) {
    case "builtins.__import__":
    case "importlib.import_module":
    case "importlib.__import__": {
      const arg = c.pos[0] ?? {};
      const name = c.q === "importlib.import_module" ? "importlib.import_module" : "__import__";
      if (arg.s === undefined) ctx.add(c.node, "code-exec", "medium", "dynamic-import", `${name} imports a module named by a variable`, "Import modules by name with an import statement.");
      else if (arg.built || arg.decoded) ctx.add(c.node, "obfuscation", "high", "built-import", `${name} imports "${arg.s}" through a name built from strings`, "Import modules by name with an import statement.");
      else if (DANGEROUS_MODULES.has(arg.s.split(".")[0] ?? "")) ctx.add(c.node, "code-exec", "medium", "import-call", `${name} imports ${arg.s} by a string`, "Import modules with an import statement so readers and tools see them.");
      return;
    }
    case "builtins.getattr":
    case "builtins.setattr":
    case "builtins.delattr": {
      const target = c.pos[0]?.q ?? "";
      const attr = c.pos[1];
      const mod = target.split(".")[0] ?? "";
      if (!DANGEROUS_MODULES.has(mod) || target.includes("(")) return;
      if (attr?.s === undefined) ctx.add(c.node, "code-exec", /^(builtins|os|subprocess|pty|socket|ctypes|importlib|posix)$/.test(mod) ? "high" : "medium", "getattr-computed", `${c.q.slice(9)} on ${target} with a computed attribute name`, "Call the function you need by name.");
      else if (c.q !== "builtins.getattr" || isDangerousName(`${target}.${attr.s}`)) ctx.add(c.node, "code-exec", "medium", "getattr-builtin", `${c.q.slice(9)} on ${target} with the literal name "${attr.s}"`, "Call the function you need by name.");
      return;
    }
    case "types.FunctionType":
    case "types.CodeType":
    case "types.LambdaType":
      ctx.add(c.node, "code-exec", "high", "code-object", `${c.q} builds a function from a code object`, "Define functions normally.");
      return;
    case "setuptools.setup":
    case "distutils.core.setup":
      if (c.kw.has("cmdclass")) ctx.add(c.node, "code-exec", "medium", "install-hook", "setup() replaces install commands (cmdclass), so installing the package runs this code", "Do not run code at install time; ship a plain package.");
      return;
    case "runpy.run_path":
    case "runpy.run_module":
      ctx.add(c.node, "code-exec", c.pos[0]?.s === undefined ? "high" : "medium", "runpy", `${c.q} runs another program's code`, "Import the module and call its functions.");
      return;
    default:
  }
}

const SHELL_FUNCS = new Set([
  "os.system", "os.popen", "os.popen2", "os.popen3", "os.popen4", "subprocess.getoutput", "subprocess.getstatusoutput",
  "asyncio.create_subprocess_shell", "platform.popen", "pexpect.run", "pexpect.spawn", "os.startfile",
]);
const ARGV_FUNCS = new Set([
  "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output", "subprocess.Popen",
  "asyncio.create_subprocess_exec", "pty.spawn", "os.posix_spawn", "os.posix_spawnp",
]);
const SHELLS = /^(\/usr)?(\/bin\/)?(ba|z|da|k|c|tc|fi)?sh$|^(\/usr)?(\/bin\/)?(python[0-9.]*|perl|ruby|node|php)$|^cmd(\.exe)?$|^powershell/;

function textOf(v: Val): string | undefined {
  if (v.s !== undefined) return v.s;
  if (v.items) return v.items.map((i) => i.s ?? i.t ?? "\u0000").join(" ");
  return v.t;
}

function programOf(v: Val): string | undefined {
  const first = v.items ? v.items[0]?.s : v.s?.trim().split(/\s+/)[0];
  return first?.split("/").pop();
}

/** Shared by every way of starting a process: what the command says, and where it came from. */
function checkCommand(ctx: PyContext, c: CallInfo, cmd: Val, shell: boolean, name: string): void {
  const text = textOf(cmd);
  const runs = programOf(cmd);
  if (runs !== undefined && /^(sudo|su|doas|pkexec|setcap|chown)$/.test(runs) && (runs !== "chown" || /^(root|0)([:.]|$)/.test(cmd.items?.[1]?.s ?? text?.split(/\s+/)[1] ?? ""))) {
    ctx.add(c.node, "privilege", "high", "privileged-command", `${name} runs ${runs}, which acts as root`, "Do not gain or grant root from sandboxed code.");
  } else if (text !== undefined && /(^|[;&|]\s*)(sudo|pkexec|doas|setcap)\s|\b(docker|podman)\s+(run|create|exec)\b[^;&|]*(--privileged|(-v|--volume)[\s=]+\/:|docker\.sock|--pid[\s=]+host)/.test(text)) {
    ctx.add(c.node, "privilege", "high", "privileged-command", `${name} runs a command as root or a container with host access`, "Do not gain or grant root from sandboxed code.");
  }
  if (cmd.socket) {
    ctx.add(c.node, "reverse-shell", "critical", "exec-socket-command", `${name} runs commands received on a socket`, "Never run commands that arrive over the network.");
    return;
  }
  if (cmd.remote) {
    ctx.add(c.node, "download-exec", "critical", "run-downloaded", `${name} runs a command downloaded from the network`, "Never run downloaded commands or programs.");
    return;
  }
  if (cmd.decoded) {
    ctx.add(c.node, "obfuscation", "critical", "run-decoded", `${name} runs a command decoded from an encoded blob`, "Write commands in plain text; encoded commands hide what runs.");
    return;
  }
  if (text !== undefined) {
    const risk = shellTextRisk(text);
    if (risk) {
      ctx.add(c.node, risk.kind, "critical", `shell-${risk.kind}`, `${name} runs ${risk.what}`, "Remove this command.");
      return;
    }
    if (ctx.isDownloaded(text) || ctx.facts.downloads.some((d) => c.posNodes[0]?.text.includes(d))) {
      ctx.add(c.node, "download-exec", "critical", "run-downloaded-file", `${name} runs a file the program downloaded`, "Never run downloaded programs.");
      return;
    }
    // `wget -O P` / `curl -o P` in one command: a later command running P runs the download.
    const saved = /\b(?:wget|curl)\b[^;&|]*?\s(?:-O|-o|--output(?:-document)?)[\s=]*["']?([^\s"';&|]+)/.exec(text)?.[1];
    if (saved !== undefined && saved !== "-") ctx.facts.downloads.push(saved);
  }
  const program = programOf(cmd);
  const items = cmd.items?.map((i) => i.s) ?? [];
  const interactive = program !== undefined && SHELLS.test(program) && (items.includes("-i") || (cmd.s !== undefined && /\s-i\b/.test(cmd.s)) || items.length === 1 || cmd.s?.trim() === program || cmd.s?.trim() === `/bin/${program}`);
  if (interactive) ctx.facts.shellSpawn ??= { line: c.node.startPosition.row + 1, endLine: c.node.endPosition.row + 1, column: c.node.startPosition.column + 1 };
  for (const stream of ["stdin", "stdout", "stderr"]) {
    const v = c.kw.get(stream);
    if (v?.q?.startsWith("socket.") || v?.socket) {
      ctx.add(c.node, "reverse-shell", "critical", "socket-stdio", `${name} wires a process's ${stream} to a socket`, "Remove this: it hands a shell to a remote host.");
      return;
    }
  }
  if (shell) {
    if (cmd.s !== undefined) {
      const harmless = program !== undefined && HARMLESS_PROGRAMS.has(program) && !/[;&|`$<>]/.test(cmd.s);
      ctx.add(c.node, "process-exec", harmless ? "low" : "medium", "shell-literal", `${name} runs the shell command "${cmd.s.slice(0, 60)}"`, "Pass an argument list to subprocess.run without shell=True.");
    } else {
      ctx.add(c.node, "process-exec", "high", "shell-built", `${name} runs a shell command built from a variable`, "Pass an argument list to subprocess.run without shell=True, and validate inputs.");
    }
    return;
  }
  const inline = program !== undefined && SHELLS.test(program) && (items.includes("-c") || items.includes("-e"));
  if (inline && items.some((i, k) => k > 0 && i === undefined)) {
    ctx.add(c.node, "process-exec", "high", "shell-c-built", `${name} runs ${program} -c with code built from a variable`, "Run the program you need with a literal argument list.");
    return;
  }
  const literal = cmd.items ? cmd.items.every((i) => i.s !== undefined) : cmd.s !== undefined;
  const harmless = literal && program !== undefined && HARMLESS_PROGRAMS.has(program);
  ctx.add(c.node, "process-exec", harmless ? "low" : "medium", literal ? "process-literal" : "process-dynamic",
    `${name} starts ${program ? `"${program}"` : "a program"}${literal ? "" : " with arguments from variables"}`,
    "Make sure the program and its arguments cannot be chosen by untrusted input.");
}

function shellKw(c: CallInfo): boolean {
  const v = c.kwNodes.get("shell");
  return v !== undefined && !/^(False|0|None)$/.test(v.text);
}

export function checkProcess(ctx: PyContext, c: CallInfo): void {
  const q = c.q;
  if (SHELL_FUNCS.has(q)) {
    checkCommand(ctx, c, c.pos[0] ?? c.kw.get("cmd") ?? c.kw.get("command") ?? {}, true, q);
  } else if (ARGV_FUNCS.has(q)) {
    const cmd = c.pos[0] ?? c.kw.get("args") ?? {};
    if (q === "pty.spawn") {
      ctx.add(c.node, "process-exec", "high", "pty-spawn", "pty.spawn starts an interactive terminal", "Run programs with subprocess.run and an argument list.");
      ctx.facts.shellSpawn ??= { line: c.node.startPosition.row + 1, endLine: c.node.endPosition.row + 1, column: c.node.startPosition.column + 1 };
    }
    const argv = q === "asyncio.create_subprocess_exec" ? { items: c.pos } : cmd;
    checkCommand(ctx, c, argv, shellKw(c), q);
  } else if (/^os\.(exec|spawn)[lv]p?e?$/.test(q)) {
    const argv: Val = { items: c.pos.slice(1).flatMap((p) => p.items ?? [p]) };
    if (argv.items && argv.items.length === 0 && c.pos[0]) argv.items = [c.pos[0]];
    checkCommand(ctx, c, argv, false, q);
  } else if (/^paramiko\.SSHClient\(\)\.exec_command$/.test(q)) {
    const cmd = c.pos[0] ?? c.kw.get("command") ?? {};
    ctx.add(c.node, "process-exec", cmd.s === undefined ? "high" : "medium", "ssh-exec", `paramiko runs ${cmd.s === undefined ? "a command built from a variable" : `"${cmd.s.slice(0, 60)}"`} on a remote host`, "Run only fixed commands, and validate inputs.");
  } else if (shellKw(c) && q !== "") {
    ctx.add(c.node, "process-exec", "medium", "shell-true", `${q} is called with shell=True`, "Pass an argument list without shell=True.");
  } else if (q === "os.fork" || q === "os.forkpty") {
    if (ctx.loop === "forever") ctx.add(c.node, "resource-abuse", "critical", "fork-bomb", `${q} inside an endless loop: a fork bomb`, "Use a bounded pool (concurrent.futures) instead of forking in a loop.");
    else if (ctx.loop) ctx.add(c.node, "resource-abuse", "medium", "fork-loop", `${q} inside a loop`, "Use a bounded pool (concurrent.futures) instead of forking in a loop.");
    else ctx.add(c.node, "process-exec", q === "os.forkpty" ? "high" : "low", "fork", `${q} starts a child process`, "Prefer subprocess or multiprocessing with bounded pools.");
  }
  if (ctx.loop === "forever" && (/^(multiprocessing|threading)\.(Process|Thread)\(\)\.start$|^subprocess\.Popen$|^multiprocessing\.Pool$|^os\.(spawn|exec)/.test(q) || SHELL_FUNCS.has(q) || /^subprocess\./.test(q))) {
    ctx.add(c.node, "resource-abuse", "medium", "spawn-loop", `${q} in an endless loop keeps starting processes or threads`, "Bound the work with a pool and a limit.");
  }
}

const PICKLE = /^(pickle|dill|cloudpickle|shelve|jsonpickle|marshal|joblib|pandas|numpy|torch)\./;

export function checkDeserialization(ctx: PyContext, c: CallInfo): void {
  const q = c.q;
  if (!PICKLE.test(q) && !q.startsWith("yaml.")) return;
  const arg = c.pos[0] ?? {};
  const untrusted = arg.remote || arg.socket;
  const localFile = arg.q === "builtins.open()" && arg.path !== undefined && !arg.path.includes("\u0000") && !untrusted;
  const report = (severity: "medium" | "high" | "critical", what: string): void =>
    ctx.add(c.node, "deserialization", untrusted ? "critical" : severity, q.replace(/\(\)/g, "").replace(/\./g, "-"), `${q} ${what}${untrusted ? " from the network" : ""}`, "Load data with json or another format that cannot run code; never unpickle untrusted data.");
  if (/^(pickle|dill|cloudpickle)\.(loads?|Unpickler)$|^jsonpickle\.decode$|^marshal\.loads?$|^shelve\.open$/.test(q)) {
    report(localFile || q === "shelve.open" ? "medium" : "high", "deserializes data that can run code");
  } else if (q === "yaml.load" || q === "yaml.load_all") {
    const loader = c.kwNodes.get("Loader")?.text ?? c.posNodes[1]?.text ?? "";
    if (!/Safe|BaseLoader/.test(loader)) report("high", `without a safe Loader${loader ? ` (${loader})` : ""} can build arbitrary objects`);
  } else if (q === "yaml.unsafe_load" || q === "yaml.unsafe_load_all") report("high", "can build arbitrary objects");
  else if (q === "yaml.full_load" || q === "yaml.full_load_all") report("medium", "can build many Python objects");
  else if (q === "pandas.read_pickle" || q === "joblib.load") report("medium", "unpickles a file, which can run code");
  else if (q === "numpy.load" && c.kwNodes.get("allow_pickle")?.text === "True") report("medium", "with allow_pickle=True can run code");
  else if (q === "torch.load" && c.kwNodes.get("weights_only")?.text !== "True") report("medium", "without weights_only=True unpickles code");
}

export function checkNative(ctx: PyContext, c: CallInfo): void {
  const q = c.q;
  if (!/^(ctypes|cffi|mmap)\./.test(q)) return;
  const argText = c.node.childForFieldName("arguments")?.text ?? "";
  if ((q === "mmap.mmap" && /PROT_EXEC/.test(argText)) || /^ctypes\.(CFUNCTYPE|cast|memmove)/.test(q) && /PROT_EXEC|VirtualAlloc|shellcode|CFUNCTYPE|mmap/.test(argText)) {
    ctx.add(c.node, "code-exec", "high", "native-shellcode", `${q} makes memory executable or jumps into a buffer (shellcode)`, "Do not execute raw machine code.");
  } else if (/^ctypes\.(CDLL|PyDLL|cdll|windll|WinDLL|pythonapi|CFUNCTYPE|util\.find_library)|^cffi\.FFI\(\)\.dlopen/.test(q)) {
    ctx.add(c.node, "code-exec", "medium", "native-library", `${q} loads native code the sandbox analysis cannot see into`, "Use Python libraries rather than calling native code directly.");
  }
}
