// Rules on what a bash command does to the machine: recursive deletes, disks, permissions and
// owners, writes to system, startup and persistence files, cron and services, accounts, kernel.

import type { Node } from "web-tree-sitter";
import { SEVERITIES } from "../types.js";
import { SHELL, INTERPRETER, argValues, hasFlag, place, type Command, type RuleEnv } from "./bash-context.js";
import { isBlockDevice, isCatastrophicTarget, isScratchPath, isSystemPath, persistKind, secretKind } from "./bash-paths.js";
import { flatStages } from "./bash-flow.js";
import { foldStages } from "./bash-fold.js";
import { transferOf } from "./bash-transfer.js";
import { baseName, type Word } from "./bash-words.js";

interface Target {
  path: string;
  word: Word;
}

const QUIET_DEVICES = /^\/dev\/(null|zero|stdout|stderr|stdin|tty|fd\/\d+|shm\/.*|pts\/\d+|console)$/;
const SETTINGS_LINE = /^\s*(#.*|export\s+[A-Za-z_][A-Za-z0-9_]*(=.*)?|[A-Za-z_][A-Za-z0-9_]*=.*|alias\s+.*|unalias\s+.*|(source|\.)\s+\S+|set\s+-o\s+\w+|shopt\s+.*|umask\s+\d+|ulimit\s+.*|complete\s+.*|bind\s+.*|eval\s+"?\$\((pyenv|rbenv|nodenv|conda|direnv|dircolors|starship|zoxide|brew|fnm|mise|opam|ssh-agent)[^)]*\)"?|\[\s.*\]\s*&&\s*(source|\.)\s+\S+|(if|then|fi|else)\b.*|PS1=.*|cd\s+\S+|)\s*$/;

function operands(command: Command): Word[] {
  const out: Word[] = [];
  let rest = false;
  for (const arg of command.args) {
    const value = arg.value;
    if (!rest && value === "--") rest = true;
    else if (rest || value === undefined || !value.startsWith("-") || value === "-") out.push(arg);
  }
  return out;
}

function writeTargets(command: Command): Target[] {
  const targets: Target[] = [];
  const add = (word: Word | undefined, path = word?.value): void => {
    if (word && path !== undefined && !QUIET_DEVICES.test(path)) targets.push({ path, word });
  };
  for (const redirect of command.redirects) {
    if (!/>/.test(redirect.op) || (/&$/.test(redirect.op) && /^\d+$|^-$/.test(redirect.target.value ?? ""))) continue;
    add(redirect.target);
  }
  const name = command.name ?? "";
  const ops = operands(command);
  if (name === "tee") ops.forEach((word) => add(word));
  else if (/^(cp|mv|install|ln|rsync)$/.test(name) && ops.length >= 2) add(ops[ops.length - 1]);
  else if (name === "dd") {
    for (const arg of command.args) if (arg.value?.startsWith("of=")) add(arg, arg.value.slice(3));
  }  else if (name === "sed" && hasFlag(command, "i", "--in-place")) ops.slice(command.args.some((arg) => arg.value === "-e") ? 0 : 1).forEach((word) => add(word));
  else if (name === "truncate") ops.forEach((word) => add(word));
  const transfer = transferOf(command);
  if (transfer?.file) {
    const word = command.args.find((arg) => arg.value?.endsWith(transfer.file ?? "\0")) ?? command.nameWord;
    add(word, transfer.file);
  }
  return targets;
}

/** The text a command writes, when it is written in the program (echo, printf, here-documents, piped in). */
function writtenText(command: Command, env: RuleEnv): string | undefined {
  const name = command.name;
  if (name === "echo" || name === "printf") return command.args.map((arg) => arg.value ?? arg.text.replace(/^["']|["']$/g, "")).filter((text) => !/^-[neE]+$/.test(text)).join(" ");
  if (command.stdinText !== undefined) return command.stdinText;
  const pipeline = env.ctx.pipelineOf.get(command.node.id);
  if (!pipeline) return undefined;
  const stages: Node[] = [];
  for (const stage of flatStages(pipeline)) {
    if (stage.startIndex >= command.node.startIndex) break;
    stages.push(stage);
  }
  const folded = foldStages(stages.map((stage) => env.ctx.commands.get((stage.type === "command" ? stage : stage.namedChildren.find((child) => child.type === "command"))?.id ?? -1)));
  if (folded) return folded.value;
  const first = stages[0];
  const firstCommand = first && env.ctx.commands.get((first.type === "command" ? first : first.namedChildren.find((child) => child.type === "command"))?.id ?? -1)?.[0];
  return firstCommand && stages.length === 1 ? writtenText(firstCommand, env) : undefined;
}

/** Text a sed script inserts or appends (`1i text`, `$a text`), or "" when it only edits lines. */
function sedInsertion(command: Command): string {
  const script = command.args.find((arg) => arg.value !== undefined && !arg.value.startsWith("-"))?.value ?? "";
  return /^\s*[0-9$]*\s*[ia]\s*\\?\s*(.+)$/s.exec(script)?.[1] ?? "";
}

function startupWrite(env: RuleEnv, command: Command, target: Target): void {
  const content = command.name === "sed" ? sedInsertion(command) : writtenText(command, env);
  const what = `${command.name ?? "a command"} writes to the shell startup file ${target.path}`;
  if (content === undefined || env.facts.produces.has("download") || env.facts.produces.has("decoded")) {
    env.report(target.word.node, "startup-file", "persistence", "critical", `${what} with content that is not in the program, to run at every login`, "Do not modify shell startup files from sandboxed code.");
    return;
  }
  const before = env.ctx.findings.length;
  env.snippet(content, target.word.node);
  const added = env.ctx.findings.slice(before);
  if (added.some((finding) => SEVERITIES.indexOf(finding.severity) >= SEVERITIES.indexOf("medium"))) {
    env.report(target.word.node, "startup-file", "persistence", "critical", `${what}: the added code runs at every login`, "Do not modify shell startup files from sandboxed code.");
  } else if (content.split(/\n|;/).every((line) => SETTINGS_LINE.test(line))) {
    env.report(target.word.node, "startup-file-settings", "persistence", "medium", `${what} (environment or alias settings)`, "Set variables for the one run instead of editing startup files.");
  } else {
    env.report(target.word.node, "startup-file", "persistence", "high", `${what}: the added commands run at every login`, "Do not modify shell startup files from sandboxed code.");
  }
}

function judgeWrite(env: RuleEnv, command: Command, target: Target): void {
  const { path, word } = target;
  const kind = persistKind(path);
  const node = word.node;
  switch (kind) {
    case "startup":
      return startupWrite(env, command, target);
    case "cron":
    case "service":
      return env.report(node, kind === "cron" ? "cron-file" : "service-file", "persistence", "critical", `${command.name ?? "a command"} writes ${path}, which makes code run again later (${kind})`, "Do not install scheduled jobs or services from sandboxed code.");
    case "ssh-keys":
      return env.report(node, "authorized-keys", "persistence", "critical", `${command.name ?? "a command"} writes ${path}, which grants SSH access`, "Do not add SSH keys or change SSH configuration from code.");
    case "preload":
    case "accounts":
    case "kernel":
      return env.report(node, `${kind}-file`, "privilege", "critical", `${command.name ?? "a command"} writes ${path}, which changes who may do what on the system`, "Do not modify accounts, the dynamic loader or kernel settings from code.");
    case undefined:
      break;
  }
  if (isBlockDevice(path)) return env.report(node, "write-disk", "filesystem", "critical", `${command.name ?? "a command"} writes straight to the disk ${path}, destroying its file system`, "Never write to block devices.");
  if (/^~\/\.[a-z]*_?history$/.test(path) || /^\/var\/log\//.test(path)) {
    if (command.name !== "echo" || path.startsWith("~")) env.report(node, "erase-traces", "obfuscation", "medium", `${command.name ?? "a command"} overwrites ${path}, hiding what was done`, "Leave history and logs alone.");
    return;
  }
  if (isSystemPath(path)) {
    const binaries = /^\/(bin|sbin|usr\/bin|usr\/sbin|lib|lib64|usr\/lib|boot)(\/|$)/.test(path);
    env.report(node, "system-write", "filesystem", binaries ? "high" : "medium", `${command.name ?? "a command"} writes to the system path ${path}`, "Write inside /workspace; system files are not the program's to change.");
  }
}

function rm(env: RuleEnv, command: Command): void {
  const values = argValues(command);
  const recursive = hasFlag(command, "rR", "--recursive");
  if (values.includes("--no-preserve-root")) env.report(command.node, "rm-no-preserve-root", "filesystem", "critical", "rm --no-preserve-root deletes the whole file system", "Never delete /; delete only the program's own files.");
  for (const word of operands(command)) {
    const value = word.value;
    if (value !== undefined) {
      if (isCatastrophicTarget(value) && (recursive || value.endsWith("*"))) env.report(word.node, "rm-root", "filesystem", "critical", `rm ${recursive ? "-r " : ""}${value} deletes the system or the home directory`, "Delete only the program's own files, by explicit paths under /workspace.");
      else if (/^~\/\.[a-z]*_?history$|^\/var\/log\//.test(value)) env.report(word.node, "erase-traces", "obfuscation", "medium", `rm deletes ${value}, hiding what was done`, "Leave history and logs alone.");
      continue;
    }
    const leading = word.leadingVar;
    if (!leading || !recursive) continue;
    const rest = word.text.replace(/^"?\$\{?[A-Za-z_][A-Za-z0-9_]*[^/"]*\}?"?/, "").replace(/["']/g, "");
    if (!/^\/\*?$|^\/\.\*$/.test(rest)) continue;
    if (leading.guarded || env.ctx.facts.setU) continue;
    if (env.ctx.vars.has(leading.name)) env.report(word.node, "rm-var-root", "filesystem", "medium", `rm -r ${word.text} deletes from / if ${leading.name} is ever empty`, `Write "\${${leading.name}:?}" so an empty value stops the script.`);
    else env.report(word.node, "rm-var-root", "filesystem", "high", `rm -r ${word.text} deletes from / when ${leading.name} is unset or empty, and nothing here sets it`, `Write "\${${leading.name}:?}" so an empty value stops the script, or set -u.`);
  }
}

function find(env: RuleEnv, command: Command): void {
  const values = argValues(command);
  const deletes = values.includes("-delete") || values.some((value, i) => /^-exec/.test(value) && /^(rm|shred)$/.test(baseName(values[i + 1] ?? "")));
  const roots = command.args.slice(0, Math.max(0, command.args.findIndex((arg) => /^[-(!]/.test(arg.value ?? "")))).filter((arg) => arg.value !== undefined);
  const encrypts = values.some((value, i) => /^-exec/.test(value) && /^(openssl|gpg|ccrypt|age|7z|zip)$/.test(baseName(values[i + 1] ?? "")) && values.slice(i + 2, i + 6).some((arg) => /^(enc|-e|-c|--encrypt|--symmetric|-p.*|-P)$/.test(arg)));
  for (const root of roots) {
    const path = root.value ?? "";
    if (encrypts && isCatastrophicTarget(path)) env.report(root.node, "find-encrypt", "filesystem", "high", `find ${path} encrypts files across the system or home directory (ransomware)`, "Encrypt only the program's own files.");
    else if (values.some((value, i) => /^-exec/.test(value) && baseName(values[i + 1] ?? "") === "shred") && /^\/var\/log(\/|$)/.test(path)) env.report(root.node, "find-shred-logs", "filesystem", "high", `find ${path} shreds the system logs, destroying them and hiding what was done`, "Leave system logs alone.");
  }
  if (!deletes) return;
  const filtered = values.some((value) => /^-(name|iname|path|ipath|regex|iregex|newer|mtime|mmin|atime|ctime)$/.test(value));
  for (const root of roots) {
    if (isCatastrophicTarget(root.value ?? "")) env.report(root.node, "find-delete-root", "filesystem", filtered ? "medium" : "critical", `find ${root.value} deletes ${filtered ? "matching files across" : "everything under"} the system or home directory`, "Delete only the program's own files under /workspace.");
  }
}

function chmod(env: RuleEnv, command: Command): void {
  const ops = operands(command);
  const mode = ops[0]?.value ?? "";
  const targets = ops.slice(1);
  const recursive = hasFlag(command, "R", "--recursive");
  if (/(^|,)[ugoa]*\+[rw]*x/.test(mode) || /^[0-7]*[1357]$/.test(mode)) for (const target of targets) if (target.value) env.ctx.facts.executable.set(baseName(target.value), place(env.ctx, command.node));
  const setuid = /^0?[2-7][0-7]{3}$/.test(mode) && (parseInt(mode.slice(-4, -3), 8) & 6) !== 0 || /(^|,)[ugoa]*[+=][rwxXt]*s/.test(mode);
  const worldWritable = /^[0-7]*[2367]$/.test(mode) && mode.length >= 3 || /(^|,)[ug]*[ao][ugoa]*[+=][rwxXst]*w/.test(mode);
  for (const target of targets) {
    const path = target.value ?? target.text;
    if (setuid) {
      const shell = SHELL.test(baseName(path)) || INTERPRETER.test(baseName(path)) || /^(find|vim?|cp|nano|less|more|env|awk|tar|nmap|docker)$/.test(baseName(path));
      env.report(target.node, "setuid", "privilege", shell ? "critical" : "high", `chmod ${mode} makes ${path} run with its owner's privileges (setuid/setgid)${shell ? ", which on a shell or interpreter gives a root shell" : ""}`, "Do not set the setuid/setgid bits; grant the specific permission another way.");
    }
    if (!worldWritable) continue;
    if (isCatastrophicTarget(path)) env.report(target.node, "chmod-world-system", "filesystem", "critical", `chmod ${recursive ? "-R " : ""}${mode} ${path} makes the system world-writable`, "Never open up system directories; give your own files the least permissions they need.");
    else if (persistKind(path) || secretKind(path)) env.report(target.node, "chmod-world-sensitive", "privilege", "critical", `chmod ${mode} ${path} lets anyone modify a security-critical file`, "Leave system and credential files' permissions alone.");
    else if ((!isScratchPath(path) || target.value === undefined) && !/^0?1[0-7]{3}$/.test(mode)) env.report(target.node, "chmod-world-writable", "filesystem", "high", `chmod ${mode} makes ${path} writable by every user`, "Use 755/644 (or 700/600) instead of world-writable modes.");
    else env.report(target.node, "chmod-world-writable-local", "filesystem", "medium", `chmod ${mode} makes ${path} writable by every user`, "Use 755/644 (or 700/600) instead of world-writable modes.");
  }
}

function persistenceCommands(env: RuleEnv, command: Command, name: string, values: string[]): void {
  const node = command.node;
  if (name === "crontab") {
    if (values.includes("-l") && !values.some((value) => !value.startsWith("-"))) return;
    if (values.includes("-r")) return env.report(node, "crontab-remove", "persistence", "low", "crontab -r removes the user's scheduled jobs", "Leave the crontab alone.");
    if (values.includes("-e")) return env.report(node, "crontab-edit", "persistence", "medium", "crontab -e edits scheduled jobs", "Do not schedule jobs from sandboxed code.");
    return env.report(node, "crontab-install", "persistence", "critical", "crontab installs scheduled jobs that run again later", "Do not schedule jobs from sandboxed code.");
  }
  if ((name === "at" || name === "batch") && !values.some((value) => /^-[lrdc]$/.test(value))) return env.report(node, "at-job", "persistence", "high", `${name} schedules commands to run later`, "Do not schedule jobs from sandboxed code.");
  if (name === "systemctl" || name === "service" || name === "update-rc.d" || name === "chkconfig" || name === "launchctl") {
    const words = values.filter((value) => !value.startsWith("-"));
    const verb = name === "service" ? words[1] : words[0];
    const unit = (name === "service" ? words[0] : words[1]) ?? "";
    if (/^(stop|disable|mask|kill)$/.test(verb ?? "") && /(auditd|apparmor|firewalld|ufw|selinux|fail2ban|iptables|nftables|falco|osquery|clamav|rsyslog|syslog|journald|crowdstrike|falcon|wazuh|ossec)/.test(unit)) {
      return env.report(node, "disable-security-service", "privilege", "high", `${name} ${verb} ${unit} turns off a security or logging service`, "Leave security services running.");
    }
    if (/^(enable|reenable|link|preset|set-default|load|defaults|on|add-wants)$/.test(verb ?? "") || name === "update-rc.d" || name === "chkconfig") {
      return env.report(node, "enable-service", "persistence", "medium", `${name} ${words.join(" ")} makes a service start at boot`, "Do not install or enable services from sandboxed code.");
    }
    if (/^(poweroff|reboot|halt|kexec|emergency|rescue)$/.test(verb ?? "")) return env.report(node, "shutdown", "resource-abuse", "medium", `${name} ${verb} stops the machine`, "Do not shut down or reboot from code.");
  }
}

const PRIVILEGE_COMMANDS = new Set(["useradd", "adduser", "usermod", "chpasswd", "passwd", "insmod", "modprobe", "rmmod", "kexec", "mount", "sysctl", "iptables", "ip6tables", "ufw", "setenforce", "nft", "docker", "podman", "nerdctl", "nsenter", "setcap", "chown", "chgrp", "chattr"]);

function privilegeCommands(env: RuleEnv, command: Command, name: string, values: string[]): void {
  if (!PRIVILEGE_COMMANDS.has(name)) return;
  const node = command.node;
  const joined = values.join(" ");
  if (/^(useradd|adduser|usermod)$/.test(name)) {
    if (/(^|\s)(-u|--uid)\s*0(\s|$)|(^|\s)-o(\s|$)/.test(joined)) return env.report(node, "uid-zero", "privilege", "critical", `${name} creates an account with user id 0 (a second root)`, "Never create root-equivalent accounts.");
    const group = /(-a?G|--groups)\s*\S*\b(sudo|wheel|root|admin|adm|docker|lxd|disk)\b/.exec(joined)?.[2];
    if (group) return env.report(node, "admin-group", "privilege", /^(docker|lxd|adm)$/.test(group) ? "medium" : "high", `${name} adds a user to the ${group} group, which grants administrative rights`, "Do not grant admin rights from code.");
    if (name !== "usermod") return env.report(node, "add-user", "privilege", "medium", `${name} creates a user account`, "Do not create accounts from sandboxed code.");
    return;
  }
  if (name === "chpasswd") return env.report(node, "set-password", "privilege", "high", "chpasswd sets account passwords", "Do not change passwords from code.");
  if (name === "passwd" && values.length > 0) return env.report(node, "set-password", "privilege", "medium", "passwd changes an account's password", "Do not change passwords from code.");
  if (/^(insmod|modprobe|rmmod|kexec)$/.test(name)) return env.report(node, "kernel-module", "privilege", "high", `${name} loads or removes kernel code`, "Do not load kernel modules from code.");
  if (name === "mount" && values.length > 0 && !values.every((value) => /^-(l|t)$/.test(value))) return env.report(node, "mount", "privilege", "medium", "mount attaches a file system", "Do not mount file systems from sandboxed code.");
  if (name === "sysctl" && /(^|\s)-w|=/.test(joined)) return env.report(node, "sysctl", "privilege", "medium", "sysctl changes kernel settings", "Do not change kernel settings from code.");
  if ((/^(iptables|ip6tables)$/.test(name) && /(^|\s)-(F|X)(\s|$)|-P\s+\S+\s+ACCEPT|--flush/.test(joined)) || (name === "ufw" && /disable|default allow/.test(joined)) || (name === "setenforce" && /^(0|permissive)$/i.test(values[0] ?? "")) || (name === "nft" && /flush ruleset/.test(joined))) {
    return env.report(node, "firewall-off", "privilege", "high", `${name} ${joined} turns off a firewall or security enforcement`, "Leave firewalls and SELinux/AppArmor on.");
  }
  if (/^(docker|podman|nerdctl)$/.test(name) && /^(run|create|exec)$/.test(values[0] ?? "") && /--privileged|--pid[= ]host|docker\.sock|(-v|--volume)[= ]\/:|--cap-add[= ](ALL|SYS_ADMIN)|--security-opt[= ](apparmor|seccomp)[=:]unconfined/.test(joined)) {
    return env.report(node, "container-escape", "privilege", "high", `${name} ${values[0]} starts a container with host-level access (privileged, host root or the Docker socket)`, "Run containers unprivileged without host mounts.");
  }
  if (name === "nsenter" && /(-t|--target)[= ]?1\b|-t1\b/.test(joined)) return env.report(node, "nsenter-init", "privilege", "critical", "nsenter joins the namespaces of process 1 (a container escape)", "Do not enter other processes' namespaces.");
  if (name === "setcap") return env.report(node, "setcap", "privilege", /cap_(setuid|sys_admin|dac_override)|=ep/.test(joined) ? "high" : "medium", `setcap gives ${values[values.length - 1] ?? "a file"} capabilities (${values[0] ?? ""})`, "Do not grant file capabilities from code.");
  if (name === "chown" || name === "chgrp") {
    const owner = operands(command)[0]?.value ?? "";
    const targets = operands(command).slice(1);
    if (targets.some((target) => isCatastrophicTarget(target.value ?? "")) && hasFlag(command, "R", "--recursive")) return env.report(node, "chown-system", "filesystem", "critical", `${name} -R ${owner} changes the owner of the whole system or home`, "Change ownership only of the program's own files.");
    if (/^(root|0)([:.]|$)/.test(owner)) return env.report(node, "chown-root", "privilege", "medium", `${name} gives files to root`, "Keep the program's files owned by the user that runs it.");
    return;
  }
  if (name === "chattr" && /(^|\s)\+[a-z]*i/.test(joined)) return env.report(node, "immutable", "persistence", "medium", "chattr +i makes files immutable so they cannot be removed", "Do not lock files against deletion.");
}

const DOCKER_SOCKET = /(^|[=:/])(var\/)?run\/docker\.sock$/;

/** A root shell through sudo (`sudo -i`, `sudo -s`, `sudo su`, `sudo bash`) or sudo fed a password on stdin. */
function sudoShell(env: RuleEnv, command: Command, name: string, values: string[]): void {
  const node = command.node;
  if (name === "sudo" && values.some((value) => /^-[a-zA-Z]*[is]$|^--(login|shell)$/.test(value))) return env.report(node, "sudo-shell", "privilege", "high", "sudo opens a root shell", "Run the one command that needs root, not a shell.");
  if (!command.via.includes("sudo") && !command.via.includes("pkexec")) return;
  const interactive = !values.some((value) => /^-[A-Za-z]*c/.test(value) || !value.startsWith("-") && !(name === "su" && value === "root"));
  if ((/^(su|sudo)$/.test(name) || SHELL.test(name)) && interactive) env.report(node, "sudo-shell", "privilege", "high", `${command.via.includes("sudo") ? "sudo" : "pkexec"} ${name} opens a root shell`, "Run the one command that needs root, not a shell.");
  if (/(^|[\s;|&])sudo\s+(-[a-zA-Z]+\s+)*-[a-zA-Z]*S\b/.test(node.text)) env.report(node, "sudo-password-stdin", "privilege", "high", "sudo -S reads the password from standard input, a password written into the script", "Do not put passwords in scripts or run sudo from code.");
}

const RESOURCE_COMMANDS = new Set(["stress", "stress-ng", "kill", "pkill", "killall5", "shutdown", "reboot", "halt", "poweroff", "init", "telinit"]);

function resourceCommands(env: RuleEnv, command: Command, name: string, values: string[]): void {
  const node = command.node;
  const maybeMiner = /miner|^(xmrig|t-rex|xmr-stak)$/i.test(name) || values.some((value) => value.includes("stratum+"));
  if (maybeMiner && (/^(xmrig|minerd|cpuminer|ccminer|ethminer|nbminer|t-rex|lolminer|phoenixminer|xmr-stak|cgminer|bfgminer|nanominer|gminer|srbminer)$/i.test(name) || values.some((value) => /stratum\+(tcp|ssl|tls):\/\//i.test(value)))) {
    return env.report(node, "crypto-miner", "resource-abuse", "high", `${name} mines cryptocurrency`, "Do not run miners.");
  }
  if (name === "dd" && values.some((value) => /^if=\/dev\/(zero|u?random)$/.test(value))) {
    const target = values.find((value) => value.startsWith("of="))?.slice(3);
    const count = values.find((value) => value.startsWith("count="))?.slice(6);
    const bs = /^bs=(\d+)([kKMGT]?)/.exec(values.find((value) => value.startsWith("bs=")) ?? "bs=512");
    const bytes = Number(count ?? Infinity) * Number(bs?.[1] ?? 512) * 1024 ** " kMGT".indexOf((bs?.[2] ?? " ").toUpperCase().replace("K", "k") || " ");
    if (target && !target.startsWith("/dev/") && !(bytes < 2 ** 34)) return env.report(node, "fill-disk", "resource-abuse", "high", `dd writes ${count ? `${count} blocks` : "without end"} from ${values.find((value) => value.startsWith("if="))?.slice(3)} to ${target}, filling the disk`, "Write only the data you need.");
  }
  if (!RESOURCE_COMMANDS.has(name)) return;
  if (/^(stress|stress-ng)$/.test(name)) return env.report(node, "stress", "resource-abuse", "medium", `${name} deliberately exhausts CPU, memory or I/O`, "Do not load-test the sandbox host.");
  if ((name === "kill" || name === "pkill") && values.includes("-1") && values.indexOf("-1") === values.length - 1) return env.report(node, "kill-all", "resource-abuse", "high", `${name} -1 kills every process the user can signal`, "Signal only the processes the program started.");
  if (name === "killall5" || /^(shutdown|reboot|halt|poweroff)$/.test(name) || (/^(init|telinit)$/.test(name) && /^[06]$/.test(values[0] ?? ""))) return env.report(node, "shutdown", "resource-abuse", "medium", `${name} stops the machine or all processes`, "Do not shut down or reboot from code.");
}

export function systemRules(command: Command, env: RuleEnv): void {
  const name = command.name ?? "";
  const values = argValues(command);
  const preload = command.env.get("LD_PRELOAD");
  if (preload) env.report(command.node, "ld-preload", "privilege", "high", `LD_PRELOAD=${preload} injects a library into ${name || "the command"}`, "Do not preload libraries into other programs.");
  for (const target of writeTargets(command)) {
    judgeWrite(env, command, target);
    const base = baseName(target.path);
    if (env.facts.produces.has("download") && name !== "tee") env.ctx.facts.downloaded.set(base, place(env.ctx, command.node));
    if (env.facts.produces.has("decoded")) env.ctx.facts.decodedFiles.set(base, place(env.ctx, command.node));
    if (env.facts.produces.has("secret") || env.facts.produces.has("sensitive")) env.ctx.facts.secretFiles.set(base, place(env.ctx, command.node));
  }
  if (/^(tar|zip|7z|7za|gzip)$/.test(name) && env.facts.produces.has("secret")) {
    const archive = name === "tar" ? command.args[command.args.findIndex((arg) => /^-?[a-zA-Z]*f$/.test(arg.value ?? "")) + 1] : operands(command)[0];
    if (archive?.value) env.ctx.facts.secretFiles.set(baseName(archive.value), place(env.ctx, command.node));
  }
  if (values.some((value) => DOCKER_SOCKET.test(value)) || command.redirects.some((redirect) => DOCKER_SOCKET.test(redirect.target.value ?? ""))) {
    env.report(command.node, "docker-socket", "privilege", "high", `${name || "a command"} talks to the Docker socket, which gives root on the host`, "Do not use the Docker socket from sandboxed code.");
  }
  if (!name) return;
  const node = command.node;
  switch (name) {
    case "rm":
      return rm(env, command);
    case "find":
      return find(env, command);
    case "chmod":
      return chmod(env, command);
    case "mv":
      if (operands(command).some((word) => isCatastrophicTarget(word.value ?? "")) || values[values.length - 1] === "/dev/null" && operands(command).length > 1 && !isScratchPath(operands(command)[0]?.value ?? "x")) {
        env.report(node, "mv-system", "filesystem", "critical", "mv moves the system or home directory away", "Move only the program's own files.");
      }
      return;
    case "shred":
    case "wipefs":
    case "blkdiscard":
    case "sfdisk":
    case "fdisk":
    case "parted":
    case "sgdisk":
      if (values.some((value) => isBlockDevice(value))) env.report(node, "wipe-disk", "filesystem", "critical", `${name} wipes or repartitions a disk`, "Never touch block devices.");
      else if (values.some((value) => /^~\/\.[a-z]*_?history$|^\/var\/log\//.test(value))) env.report(node, "erase-traces", "obfuscation", "medium", `${name} destroys history or logs, hiding what was done`, "Leave history and logs alone.");
      return;
    case "history":
      if (values.some((value) => /^-[a-z]*c/.test(value)) || values.includes("-w") && values.includes("/dev/null")) env.report(node, "erase-traces", "obfuscation", "medium", "history -c erases the shell history, hiding what was done", "Leave the history alone.");
      return;
    case "unset":
      if (values.includes("HISTFILE")) env.report(node, "erase-traces", "obfuscation", "medium", "unset HISTFILE stops recording the shell history, hiding what is done", "Leave the history alone.");
      return;
    case "ln":
      if (values.includes("/dev/null") && values.some((value) => /_history$/.test(value))) env.report(node, "erase-traces", "obfuscation", "medium", "ln links the shell history to /dev/null, hiding what is done", "Leave the history alone.");
      return;
    default:
      break;
  }
  if (/^mkfs(\.\w+)?$|^(mke2fs|mkswap|mkntfs)$/.test(name)) {
    const device = values.some((value) => isBlockDevice(value));
    env.report(node, "mkfs", "filesystem", device ? "critical" : "medium", `${name} creates a file system${device ? " on a disk, erasing it" : ""}`, "Never format disks from code.");
    return;
  }
  persistenceCommands(env, command, name, values);
  sudoShell(env, command, name, values);
  privilegeCommands(env, command, name, values);
  resourceCommands(env, command, name, values);
}
