// Rules across commands: what flows through a pipeline (downloads or decoded text into a shell,
// secrets into a sender, a socket wired to a shell), fork bombs, endless loops that spawn work, and
// facts joined at the end (a downloaded file later run, credentials read and data sent).

import type { Node } from "web-tree-sitter";
import { SHELL, place, type Ancestor, type BashContext, type CommandFacts, type Command, type Report } from "./bash-context.js";
import { foldStages } from "./bash-fold.js";
import { baseName, type Taint } from "./bash-words.js";

function emptyFacts(): CommandFacts {
  return { produces: new Set(), runsStdin: false, sends: false, network: false, shell: false };
}

function stageCommand(stage: Node): Node | undefined {
  if (stage.type === "command") return stage;
  if (stage.type === "redirected_statement") {
    const body = stage.childForFieldName("body");
    return body?.type === "command" ? body : undefined;
  }
  return undefined;
}

/** The facts of one pipeline stage: a command, or the union of the commands in a group or loop. */
function stageFacts(stage: Node, ctx: BashContext): CommandFacts {
  const direct = stageCommand(stage);
  if (direct) return ctx.commandFacts.get(direct.id) ?? emptyFacts();
  return ctx.stageFacts.get(stage.id) ?? emptyFacts();
}

/** Merges a command's facts into the pipeline stages (groups, subshells, loops) around it (`ancestors`: nearest first). */
export function mergeIntoStages(facts: CommandFacts, commands: readonly Command[], ancestors: readonly Ancestor[], ctx: BashContext): void {
  for (let i = 0; i + 1 < ancestors.length; i++) {
    const stage = ancestors[i] as Ancestor;
    if ((ancestors[i + 1] as Ancestor).type !== "pipeline" || !stage.node || stage.type === "command") continue;
    let merged = ctx.stageFacts.get(stage.node.id);
    if (!merged) ctx.stageFacts.set(stage.node.id, (merged = emptyFacts()));
    for (const taint of facts.produces) merged.produces.add(taint);
    merged.sends ||= facts.sends;
    merged.network ||= facts.network;
    merged.shell ||= facts.shell;
    const name = commands[0]?.name;
    merged.runsStdin ||= stage.type === "while_statement" ? name === undefined || name === "eval" : facts.runsStdin;
  }
}

function interactiveShell(stage: Node, ctx: BashContext): boolean {
  const command = stageCommand(stage);
  const first: Command | undefined = command ? ctx.commands.get(command.id)?.[0] : undefined;
  return !!first?.name && SHELL.test(first.name) && first.args.some((arg) => /^-[a-z]*i/.test(arg.value ?? ""));
}

/** tree-sitter nests `a | b 2>&1 | c` as pipelines inside redirected statements; the stages, flat. */
export function flatStages(node: Node): Node[] {
  const out: Node[] = [];
  for (const stage of node.namedChildren) {
    const body = stage.type === "redirected_statement" ? stage.childForFieldName("body") : null;
    if (stage.type === "pipeline") out.push(...flatStages(stage));
    else if (body?.type === "pipeline") out.push(...flatStages(body));
    else out.push(stage);
  }
  return out;
}

/** `node` is the outermost pipeline of its stages (`ancestors`: nearest first). */
export function pipelineRules(node: Node, ancestors: readonly Ancestor[], ctx: BashContext, report: Report, snippet: (code: string, at: Node) => void): void {
  const [parent, grandparent] = ancestors;
  if (parent?.type === "pipeline" || (parent?.type === "redirected_statement" && grandparent?.type === "pipeline")) return;
  const stages = flatStages(node);
  const facts = stages.map((stage) => stageFacts(stage, ctx));
  const upstream = new Set<Taint>();
  const rawNetwork = facts.some((fact) => fact.produces.has("network"));
  for (let i = 0; i < stages.length; i++) {
    const fact = facts[i] as CommandFacts;
    const stage = stages[i] as Node;
    if (i > 0 && fact.runsStdin) {
      const folded = foldStages(stages.slice(0, i).map((before) => ctx.commands.get(stageCommand(before)?.id ?? -1)));
      if (upstream.has("download")) report(stage, "pipe-to-shell", "download-exec", "critical", "downloaded content is piped straight into an interpreter (curl | sh)", "Download to a file, verify its checksum or signature, review it, then run it.");
      else if (upstream.has("network") || rawNetwork) report(stage, "network-to-shell", "reverse-shell", "critical", "data from a raw network connection is piped into a shell (a reverse shell)", "Remove this: it lets a remote host run commands here.");
      else if (upstream.has("decoded") || folded?.decoded) report(stage, "decode-to-shell", "obfuscation", "critical", "decoded data (base64, hex, escapes, rot13) is piped into an interpreter", "Run readable code; decoding a payload and executing it hides what runs.");
      else report(stage, "pipe-generated-code", "code-exec", "medium", "generated text is piped into a shell and run as commands", "Review generated commands before running them, or run them directly.");
      if (folded) snippet(folded.value, stage);
    }
    if (i > 0 && fact.sends) {
      if (["secret", "sensitive", "metadata"].some((taint) => upstream.has(taint as Taint))) report(stage, "pipe-secrets-out", "exfiltration", "critical", "credentials, keys or the environment are piped into a command that sends them over the network", "Never send secrets or environment dumps anywhere.");
      else if (upstream.has("recon")) report(stage, "pipe-host-info-out", "exfiltration", "high", "information about this machine is piped into a command that sends it over the network", "Do not report host details to remote servers.");
    }
    if (rawNetwork && (interactiveShell(stage, ctx) || (fact.runsStdin && i > 0)) && stages.length > 1) {
      report(stage, "shell-on-socket", "reverse-shell", "critical", "a shell's input or output is connected to a network tool in the same pipeline (a reverse shell)", "Remove this: it lets a remote host run commands here.");
    }
    if (i > 0) pipedWrites(stage, upstream, ctx);
    for (const taint of fact.produces) upstream.add(taint);
  }
}

/**
 * Files a stage writes from its standard input carry what came down the pipe: `base64 -d | tee x.sh`
 * makes x.sh decoded, so a later `. x.sh` runs decoded code.
 */
function pipedWrites(stage: Node, upstream: ReadonlySet<Taint>, ctx: BashContext): void {
  if (!upstream.has("download") && !upstream.has("decoded")) return;
  for (const command of ctx.commands.get(stageCommand(stage)?.id ?? -1) ?? []) {
    const files: string[] = [];
    if (command.name === "tee") for (const arg of command.args) if (arg.value !== undefined && !arg.value.startsWith("-")) files.push(arg.value);
    if (command.name === "tee" || (command.name === "cat" && command.args.length === 0) || command.name === "dd") {
      for (const redirect of command.redirects) if (/^>|^>>$/.test(redirect.op) && redirect.target.value !== undefined) files.push(redirect.target.value);
    }
    if (command.name === "dd") for (const arg of command.args) if (arg.value?.startsWith("of=")) files.push(arg.value.slice(3));
    for (const file of files) {
      if (/^\/dev\//.test(file)) continue;
      if (upstream.has("download")) ctx.facts.downloaded.set(baseName(file), place(ctx, command.node));
      if (upstream.has("decoded")) ctx.facts.decodedFiles.set(baseName(file), place(ctx, command.node));
    }
  }
}

/** `:(){ :|:& };:` and named variants: a function that starts itself more than once, or in the background. */
export function functionRules(node: Node, ctx: BashContext, report: Report): void {
  const name = node.childForFieldName("name")?.text;
  const body = node.childForFieldName("body");
  if (!name || !body) return;
  ctx.functions.add(name);
  // A call names the function in the body's text: most bodies need no search for one.
  if (!body.text.includes(name)) return;
  const calls = body.descendantsOfType("command").filter((command) => command.childForFieldName("name")?.text === name);
  if (calls.length === 0) return;
  if (calls.some((call) => ctx.background.has(call.id) || ctx.piped.has(call.id))) {
    report(node, "fork-bomb", "resource-abuse", "critical", `function ${name} starts copies of itself without end (a fork bomb)`, "Remove the self-spawning function; bound recursion and background work.");
  }
}

const ENDLESS = /^(true|:|\[\s+1\s+\]|\[\[\s+1\s+\]\]|\(\(\s*1\s*\)\)|\[\s+1\s+-eq\s+1\s+\])$/;

/** An endless loop that keeps starting background work with nothing to wait for or slow it down. */
export function loopRules(node: Node, ctx: BashContext, report: Report): void {
  let endless = false;
  if (node.type === "c_style_for_statement") endless = /^for\s*\(\(\s*;\s*;\s*\)\)/.test(node.text);
  else if (node.type === "while_statement") {
    const condition = node.childForFieldName("condition")?.text.replace(/;\s*$/, "").trim() ?? "";
    endless = node.text.startsWith("until") ? /^(false)$/.test(condition) : ENDLESS.test(condition);
  }
  if (node.type === "for_statement") return cpuLoop(node, ctx, report);
  if (!endless) return;
  const body = node.childForFieldName("body");
  if (!body) return;
  const commands = body.descendantsOfType("command");
  // A pause that runs in the background (`sleep 9 &`) does not slow the loop down.
  const names = commands.map((command) => (ctx.background.has(command.id) ? "&" : ctx.commands.get(command.id)?.[0]?.name));
  if (names.some((name) => name !== undefined && /^(sleep|wait|break|exit|return|read|timeout)$/.test(name))) return;
  if (commands.some((command) => ctx.background.has(command.id))) {
    report(node, "endless-spawn", "resource-abuse", "high", "an endless loop starts background processes without waiting or pausing", "Bound the loop and wait for the jobs it starts (or sleep between them).");
  } else if (/(^|[\s;])([A-Za-z_][A-Za-z0-9_]*)=["']?\$\{?\2\}?\$\{?\2\}?/.test(body.text)) {
    report(node, "endless-doubling", "resource-abuse", "high", "an endless loop doubles a value each pass until memory runs out", "Bound the loop and the data it builds.");
  } else if (/(^|[^<>&0-9])>>?\s*["']?(?!\/dev\/(null|std|tty|fd))[^\s&]/.test(body.text)) {
    report(node, "endless-write", "resource-abuse", "high", "an endless loop writes to a file without end, filling the disk", "Bound the loop and the data it writes.");
  } else if (names.every((name) => name === undefined || /^(:|true|false|yes)$/.test(name))) {
    report(node, "endless-busy", "resource-abuse", "medium", "an endless loop spins without doing work or pausing", "Bound the loop, or wait on something (sleep, read, wait) in it.");
  }
}

/** `for i in $(seq $(nproc))` starting a busy job per CPU; `for f in $(find /home ...)` deleting or encrypting each. */
function cpuLoop(node: Node, ctx: BashContext, report: Report): void {
  const over = node.childForFieldName("value")?.text ?? node.text.slice(0, 200);
  const walked = /\bfind\s+["']?(\/|~|\$HOME|\/home|\/root)["']?(\/\*?)?\s/.exec(over)?.[1];
  if (walked) {
    const body = node.childForFieldName("body");
    const names = (body?.descendantsOfType("command") ?? []).map((command) => ctx.commands.get(command.id)?.[0]?.name);
    if (names.some((name) => name !== undefined && /^(rm|shred|unlink|gpg|openssl|ccrypt)$/.test(name))) report(node, "mass-delete", "filesystem", "high", `a loop over every file find lists under ${walked} deletes, shreds or encrypts them`, "Touch only the program's own files under /workspace.");
    return;
  }
  if (!/nproc|_NPROCESSORS_ONLN|\/proc\/cpuinfo/.test(over)) return;
  const body = node.childForFieldName("body");
  const jobs = (body?.descendantsOfType(["command", "while_statement"]) ?? []).filter((inner) => /^while\s/.test(inner.text) || ctx.background.has(inner.id));
  if (jobs.some((job) => job.type === "while_statement" || /^(yes|cat|sha\d*sum|md5sum|openssl|dd|:|true)$/.test(ctx.commands.get(job.id)?.[0]?.name ?? ""))) {
    report(node, "cpu-burn", "resource-abuse", "high", "a loop starts a busy job on every CPU", "Do not burn CPU; bound the work and the number of jobs.");
  }
}

/** Facts joined over the whole program once the walk is done. */
export function programRules(ctx: BashContext, report: Report): void {
  const facts = ctx.facts;
  const ranDownloads = new Set<string>();
  for (const run of facts.runs) {
    const downloaded = facts.downloaded.get(run.base);
    const direct = run.explicit || facts.executable.has(run.base);
    if (downloaded && downloaded.startIndex < run.node.startIndex && direct) {
      ranDownloads.add(run.base);
      report(run.node, "run-downloaded-file", "download-exec", "critical", `${run.base} is downloaded and then run`, "Verify downloads (checksum or signature) and review them before running; prefer packages from the allowed registries.");
    }
    const decoded = facts.decodedFiles.get(run.base);
    if (decoded && decoded.startIndex < run.node.startIndex && direct) report(run.node, "run-decoded-file", "obfuscation", "critical", `${run.base} is decoded from hidden data and then run`, "Run readable code; decoding a payload and executing it hides what runs.");
  }
  for (const [base, node] of facts.executable) {
    if (ranDownloads.has(base)) continue;
    if (facts.downloaded.has(base)) report(node, "chmod-downloaded", "download-exec", "high", `${base} is downloaded and made executable`, "Verify downloads (checksum or signature) before making them executable.");
    else if (facts.unknownDownload && facts.runs.some((run) => run.base === base && run.node.startIndex > node.startIndex)) {
      report(node, "chmod-run-after-download", "download-exec", "high", `${base} is made executable and run after a download whose file name is not known`, "Verify downloads (checksum or signature) before running them.");
    }
  }
  const exfiltrated = ctx.findings.some((finding) => finding.category === "exfiltration" && finding.severity === "critical");
  const secretRead = facts.secretRead;
  if (secretRead && !exfiltrated) {
    const send = facts.sends.find((node) => node.startIndex > secretRead.startIndex);
    if (send) report(send, "read-then-send", "exfiltration", "critical", "credentials are read and data is then sent over the network", "Never send credentials anywhere; remove the upload.");
  }
}
