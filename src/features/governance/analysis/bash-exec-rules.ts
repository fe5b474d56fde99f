// Rules on what a bash command runs as code: eval, sh -c, source, interpreters and their inline
// programs, disguised or decoded command names, and code that arrives downloaded or decoded.

import { SHELL, INTERPRETER, place, type Command, type RuleEnv } from "./bash-context.js";
import { inlineCode, judgeInline } from "./bash-inline.js";
import { baseName, type Word } from "./bash-words.js";

/** Tools whose output is meant to be eval'd by a shell (`eval "$(ssh-agent -s)"`). */
const ENV_SETUP = /^(ssh-agent|pyenv|rbenv|nodenv|jenv|goenv|plenv|conda|micromamba|mamba|direnv|dircolors|brew|opam|starship|zoxide|thefuck|gpg-agent|keychain|luarocks|resize|tset|minikube|docker-machine|fnm|mise|rtx|asdf|kubectl|helm|gh|rustup|fzf|atuin|mcfly|navi|register-python-argcomplete|pip|poetry|pipx|npm|aws|gcloud|terraform|just|uv|pdm|hatch|oh-my-posh|lesspipa?|lesspipe\.sh|dbus-launch|ssh-add|perl|vagrant|nvm|sdk|tmux)$/;

function wholeVariable(word: Word): boolean {
  return /^"?\$(\{[^}]*\}|[A-Za-z_@*0-9][A-Za-z0-9_]*)"?$/.test(word.text);
}

function substitutionTool(word: Word): string | undefined {
  return /\$\(\s*(?:command\s+)?([A-Za-z0-9_./-]+)/.exec(word.text)?.[1]?.replace(/^.*\//, "");
}

/** Judges code that is not a constant: where it comes from decides the severity. */
function judgeDynamic(env: RuleEnv, words: Word[], what: string, at: Word): void {
  const taints = new Set(words.flatMap((word) => [...word.taints]));
  const node = at.node;
  if (taints.has("download")) {
    env.report(node, "download-run-code", "download-exec", "critical", `${what} runs code downloaded from the network`, "Download to a file, verify its checksum or signature, review it, then run it.");
  } else if (taints.has("decoded")) {
    env.report(node, "decoded-run-code", "obfuscation", "critical", `${what} runs code decoded at run time (base64, hex, escapes)`, "Run readable code; decoding a payload and executing it hides what runs.");
  } else if (taints.has("network")) {
    env.report(node, "network-run-code", "reverse-shell", "critical", `${what} runs commands read from a network connection`, "Remove this: it lets a remote host run commands here.");
  } else if (words.some((word) => word.substitution)) {
    const tool = words.map(substitutionTool).find((name) => name !== undefined);
    if (tool && ENV_SETUP.test(tool)) env.report(node, "eval-tool-output", "code-exec", "low", `${what} runs the shell setup printed by ${tool}`, "Fine for known setup tools; avoid it for anything else.");
    else env.report(node, "run-command-output", "code-exec", "medium", `${what} runs the output of a command as code`, "Run the commands directly instead of generating code and evaluating it.");
  } else if (words.length > 0 && words.every(wholeVariable)) {
    env.report(node, "run-variable", "code-exec", "high", `${what} runs code held in a variable (${at.text})`, "Call a function or a fixed command with the data as arguments instead of evaluating it as code.");
  } else {
    env.report(node, "run-built-code", "code-exec", "medium", `${what} runs code built from variables`, "Pass values as arguments (sh -c '...' _ \"$x\") instead of splicing them into code.");
  }
}

/** Code given as one word: analysed as bash when constant, judged by origin when not. */
function runCode(env: RuleEnv, word: Word, what: string): void {
  if (word.value !== undefined) {
    if (word.rebuilt) env.report(word.node, "decoded-run-code", "obfuscation", "critical", `${what} runs code decoded at run time (base64, hex, escapes)`, "Run readable code; decoding a payload and executing it hides what runs.");
    env.snippet(word.value, word.node);
    return;
  }
  judgeDynamic(env, [word], what, word);
  const inner = /^["']([\s\S]*)["']$/.exec(word.text)?.[1];
  if (inner) env.snippet(inner, word.node);
}

function scriptRun(env: RuleEnv, command: Command, script: Word, what: string): void {
  if (script.taints.size > 0 && [...script.taints].some((taint) => taint === "download" || taint === "decoded" || taint === "network")) {
    judgeDynamic(env, [script], what, script);
    return;
  }
  const value = script.value;
  if (value === undefined && /^(source|\.)/.test(what)) {
    env.report(script.node, "source-variable", "code-exec", "low", `${what} runs a file whose name comes from a variable`, "Source only fixed, known files.");
    return;
  }
  if (value === "-" || value === "/dev/stdin") {
    env.facts.runsStdin = true;
    return;
  }
  if (value) env.ctx.facts.runs.push({ base: baseName(value), node: place(env.ctx, command.node), explicit: true });
}

function checkName(env: RuleEnv, command: Command): void {
  const word = command.nameWord;
  if (!word) return;
  if (command.name === undefined) {
    // `| $SHELL` is a shell whatever the variable holds.
    if (/^"?\$\{?SHELL\}?"?$/.test(word.text)) {
      env.facts.shell = true;
      const script = command.args.find((arg) => !(arg.value ?? "-").startsWith("-"));
      if (script) scriptRun(env, command, script, `$SHELL ${script.text}`);
      else if (!command.args.some((arg) => /^-[A-Za-z]*c/.test(arg.value ?? ""))) env.facts.runsStdin = true;
      return;
    }
    if (word.taints.size > 0 && [...word.taints].some((taint) => taint === "download" || taint === "decoded" || taint === "network")) {
      judgeDynamic(env, [word], "the command name", word);
    } else if (word.rebuilt || word.disguised) {
      env.report(word.node, "assembled-name", "obfuscation", "high", `the command name ${word.text} is assembled at run time from slices or escapes`, "Write the command name plainly.");
    } else if (word.substitution) {
      env.report(word.node, "name-from-output", "code-exec", "low", `the command to run comes from the output of ${word.text}`, "Name the program directly.");
    }
    return;
  }
  const pieces = word.node.type === "concatenation" ? word.node.namedChildren : [];
  if (pieces.length >= 2 && pieces.every((piece) => piece.type === "simple_expansion" || piece.type === "expansion")) {
    env.report(word.node, "assembled-name", "obfuscation", "high", `the command name "${command.name}" is assembled from the variables ${word.text}`, "Write the command name plainly.");
  }
  if (word.rebuilt) {
    env.report(word.node, "decoded-name", "obfuscation", "critical", `the command name "${command.name}" is decoded at run time from ${word.text}`, "Write the command name plainly; decoding it hides what runs.");
  } else if (word.disguised) {
    env.report(word.node, "disguised-name", "obfuscation", "high", `the command name "${command.name}" is disguised as ${word.text}`, "Write the command name plainly.");
  }
}

/** A shell or interpreter reading its program from standard input: judged by where that input comes from. */
function stdinProgram(env: RuleEnv, command: Command): void {
  env.facts.runsStdin = true;
  const herestring = command.redirects.find((redirect) => redirect.op === "<<<")?.target;
  if (herestring && [...command.stdinTaints].some((taint) => taint === "download" || taint === "decoded" || taint === "network")) {
    judgeDynamic(env, [{ ...herestring, taints: new Set(command.stdinTaints) }], `${command.name ?? "a shell"} <<<`, herestring);
  }
  if (command.stdinText !== undefined && command.name && SHELL.test(command.name)) env.snippet(command.stdinText, command.node);
  else if (command.via.length > 0 && command.via.every((via) => via !== "xargs") && command.stdinText === undefined) {
    env.report(command.node, "spawn-shell", "process-exec", "medium", `${command.via.join(" ")} starts an interactive ${command.name ?? "shell"}`, "Run the commands you need directly instead of starting a shell from another program.");
  }
}

function shellCommand(env: RuleEnv, command: Command): void {
  const args = command.args;
  if (command.via.includes("xargs")) {
    const code = args[args.findIndex((arg) => /^-[A-Za-z]*c[A-Za-z]*$/.test(arg.value ?? "")) + 1];
    if (!code || /^\{\}$|^\$[@*1]$/.test(code.value ?? "")) {
      env.facts.runsStdin = true;
      if (!env.ctx.piped.has(command.node.id)) env.report(command.node, "run-input-lines", "code-exec", "medium", `xargs runs each line of its input as ${command.name} code`, "Run fixed commands with the input as arguments instead.");
      return;
    }
  }
  for (let i = 0; i < args.length; i++) {
    const value = args[i]?.value ?? "";
    if (value === "--" || value === "-") {
      if (value === "-") env.facts.runsStdin = true;
      break;
    }
    if (/^-[A-Za-z]*c[A-Za-z]*$/.test(value) && !value.startsWith("--")) {
      const code = args[i + 1];
      if (code) runCode(env, code, `${command.name} -c`);
      return;
    }
    if (/^-[A-Za-z]*s[A-Za-z]*$/.test(value)) return stdinProgram(env, command);
    if (value.startsWith("-") || value.startsWith("+")) {
      if (/^[-+]o$/.test(value)) i++;
      continue;
    }
    const script = args[i];
    if (script) scriptRun(env, command, script, `${command.name} ${script.text}`);
    return;
  }
  stdinProgram(env, command);
}

function interpreterCommand(env: RuleEnv, command: Command, name: string): void {
  const inline = inlineCode(command);
  if (inline) {
    const word = command.args.find((arg) => arg.node.id === inline.node.id);
    if (word && word.value === undefined) judgeDynamic(env, [word], `${name} inline code`, word);
    judgeInline(inline, name, env.report, env.snippet);
    return;
  }
  if (name.startsWith("python") && command.args.some((arg) => arg.value === "-m")) {
    const module = command.args[command.args.findIndex((arg) => arg.value === "-m") + 1]?.value ?? "";
    if (/^(http\.server|SimpleHTTPServer|pyftpdlib|smtpd|uploadserver)$/.test(module) && !command.args.some((arg) => /^(127\.|localhost$|::1$)/.test(arg.value ?? ""))) {
      env.report(command.node, "serve-all-interfaces", "network", "medium", `python -m ${module} serves files on every network interface (0.0.0.0)`, "Bind to 127.0.0.1 (--bind 127.0.0.1) unless the service must be reachable from outside.");
    }
    return;
  }
  if (/^(php|node|deno|bun|ruby|python)/.test(name) && command.args.some((arg) => /^-S$/.test(arg.value ?? "")) && command.args.some((arg) => /^0\.0\.0\.0/.test(arg.value ?? ""))) return;
  const script = command.args.find((arg) => !(arg.value ?? "x").startsWith("-") || arg.value === "-");
  if (script) scriptRun(env, command, script, `${name} ${script.text}`);
  else if (!command.args.some((arg) => /^-(m|c|e|E|r|p|n|-version|V|h|-help)$/.test(arg.value ?? ""))) stdinProgram(env, command);
}

export function execRules(command: Command, env: RuleEnv): void {
  checkName(env, command);
  const name = command.name;
  if (!name) return;
  if (command.path?.includes("/")) env.ctx.facts.runs.push({ base: baseName(command.path), node: place(env.ctx, command.node), explicit: true });
  else env.ctx.facts.runs.push({ base: name, node: place(env.ctx, command.node), explicit: false });
  if (name === "eval") {
    const words = command.args;
    if (words.length === 0) return;
    if (words.every((word) => word.value !== undefined)) {
      const rebuilt = words.find((word) => word.rebuilt);
      if (rebuilt) env.report(rebuilt.node, "decoded-run-code", "obfuscation", "critical", "eval runs code decoded at run time (base64, hex, escapes)", "Run readable code; decoding a payload and executing it hides what runs.");
      env.snippet(words.map((word) => word.value).join(" "), command.node);
    } else judgeDynamic(env, words, "eval", words.find((word) => word.value === undefined) ?? (words[0] as Word));
    return;
  }
  if (SHELL.test(name) && name !== "busybox") return shellCommand(env, command);
  if (INTERPRETER.test(name) || /^[gmn]?awk$/.test(name)) return interpreterCommand(env, command, name);
  if (name === "source" || name === ".") {
    const script = command.args[0];
    if (script) scriptRun(env, command, script, `${name} ${script.text}`);
    return;
  }
  if ((name === "su" || name === "runuser" || name === "script") && command.args.some((arg) => /^(-c|--command)$/.test(arg.value ?? ""))) {
    const code = command.args[command.args.findIndex((arg) => /^(-c|--command)$/.test(arg.value ?? "")) + 1];
    if (code) runCode(env, code, `${name} -c`);
    return;
  }
  if (name === "watch") {
    const code = command.args.filter((arg, i) => !(arg.value ?? "").startsWith("-") && !/^-[nd]$/.test(command.args[i - 1]?.value ?? ""));
    if (code.length > 0 && code.every((word) => word.value !== undefined)) env.snippet(code.map((word) => word.value).join(" "), command.node);
    return;
  }
  if (name === "trap") {
    const code = command.args[0];
    if (code?.value && !code.value.startsWith("-")) env.snippet(code.value, code.node);
  }
}
