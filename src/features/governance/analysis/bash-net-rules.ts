// Rules on what a bash command reads and sends: credentials and environment dumps, downloads and
// uploads, raw sockets (nc, socat, /dev/tcp), listeners, tunnels, and TLS checks turned off.

import { INTERPRETER, NETWORK_TOOL, SHELL, argValues, hasFlag, place, type Command, type RuleEnv } from "./bash-context.js";
import { isMetadataUrl, isSecretVariable, secretKind } from "./bash-paths.js";
import { transferOf } from "./bash-transfer.js";
import { baseName, type Taint, type Word } from "./bash-words.js";

const READERS = /^(cat|tac|head|tail|less|more|nl|base64|base32|xxd|od|hexdump|strings|cp|tar|zip|7z|7za|gzip|bzip2|xz|zstd|rsync|scp|grep|egrep|fgrep|rg|awk|gawk|sed|cut|sort|uniq|jq|gpg|openssl|dd|curl|wget|nc|ncat|socat|python[0-9.]*|perl|ruby|node|sqlite3|find|tee|strings|file|md5sum|sha256sum|wc)$/;
const RECON = /^(whoami|id|hostname|uname|ifconfig|ip|ps|netstat|ss|lscpu|w|who|last|arp|groups|hostnamectl|lsb_release)$/;
const DECODERS: Record<string, RegExp> = {
  base64: /^-(d|D|-decode)$|^-[a-z]*d[a-z]*$/,
  base32: /^-(d|-decode)$/,
  basenc: /^-(d|-decode)$/,
  xxd: /^-[a-z]*r/,
  uudecode: /./,
  gunzip: /./,
  zcat: /./,
  bzcat: /./,
  xzcat: /./,
  unxz: /./,
  rev: /./,
  gzip: /^-[a-z]*d|^--decompress$/,
  bzip2: /^-[a-z]*d|^--decompress$/,
  xz: /^-[a-z]*d|^--decompress$/,
  zstd: /^-[a-z]*d|^--decompress$/,
};
const SENDERS = /^(mail|mailx|sendmail|mutt|s-nail|msmtp|ftp|tftp|smbclient|sftp|ssh)$/;
const TUNNELS = /^(ngrok|cloudflared|lt|localtunnel|chisel|frpc|bore|inlets|pagekite|tunnelto)$/;
const SCANNERS = /^(nmap|masscan|zmap|hping3|unicornscan|rustscan)$/;

const SECRET_TAINTS: Taint[] = ["secret", "sensitive", "metadata"];

function taintsOf(words: Word[]): Set<Taint> {
  const out = new Set<Taint>();
  for (const word of words) {
    for (const taint of word.taints) out.add(taint);
    for (const match of word.text.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)) if (isSecretVariable(match[1] as string)) out.add("secret");
  }
  return out;
}

function reportSend(env: RuleEnv, command: Command, taints: ReadonlySet<Taint>, how: string): boolean {
  if (SECRET_TAINTS.some((taint) => taints.has(taint))) {
    env.report(command.node, "send-secrets", "exfiltration", "critical", `${how} sends credentials, keys or the environment over the network`, "Never send secrets or environment dumps anywhere; pass only the data the task needs.");
    return true;
  }
  if (taints.has("recon")) {
    env.report(command.node, "send-host-info", "exfiltration", "high", `${how} sends information about this machine (user, host, system) over the network`, "Do not report host details to remote servers.");
    return true;
  }
  return false;
}

/** Files the command reads, and what kind of secret each is. */
function readSecrets(env: RuleEnv, command: Command): void {
  const name = command.name ?? "";
  const paths: Word[] = [];
  if (READERS.test(name)) paths.push(...command.args.filter((arg) => arg.value !== undefined && !arg.value.startsWith("-")));
  for (const redirect of command.redirects) if (redirect.op === "<") paths.push(redirect.target);
  for (const word of paths) {
    const value = (word.value ?? "").replace(/^[A-Za-z-]*=?@/, "").replace(/^if=/, "");
    const kind = secretKind(value) ?? (env.ctx.facts.secretFiles.has(baseName(value)) ? "secret" : undefined);
    if (/^\/etc\/(hostname|os-release|issue|machine-id)$|^\/proc\/version$/.test(value)) env.facts.produces.add("recon");
    if (!kind) continue;
    env.facts.produces.add(kind);
    if (kind === "secret") {
      env.ctx.facts.secretRead ??= place(env.ctx, command.node);
      env.report(word.node, "read-credentials", "exfiltration", "high", `${name} reads credentials or keys (${value})`, "Do not read credential stores, private keys or other users' secrets from code.");
    }
  }
}

function produces(env: RuleEnv, command: Command): void {
  const name = command.name ?? "";
  const values = argValues(command);
  const out = env.facts.produces;
  if ((name === "env" || name === "printenv") && values.every((value) => value.startsWith("-"))) out.add("sensitive");
  if ((name === "export" || name === "declare" || name === "typeset") && values.length > 0 && values.every((value) => /^-[px]+$/.test(value))) out.add("sensitive");
  if ((name === "set" || name === "compgen") && (values.length === 0 || values.join(" ") === "-e")) out.add("sensitive");
  if (name === "history") out.add("sensitive");
  if (RECON.test(name)) out.add("recon");
  if (name === "echo" || name === "printf") for (const taint of taintsOf(command.args)) out.add(taint);
  const decoder = DECODERS[name];
  if (decoder && (decoder.source === "." || values.some((value) => decoder.test(value)))) out.add("decoded");
  if (name === "openssl" && values.includes("-d") && values.some((value) => /^(base64|enc|-a|-base64)$/.test(value))) out.add("decoded");
  if (name === "tr" && values.some((value) => /N-Z|n-z/.test(value))) out.add("decoded");
  if ((name === "printf" && /\\(x[0-9a-fA-F]|[0-7]{3})/.test(values[0] ?? "")) || (name === "echo" && values.some((value) => /^-[a-zA-Z]*e/.test(value)) && values.some((value) => /\\x[0-9a-fA-F]/.test(value)))) out.add("decoded");
  for (const taint of command.stdinTaints) if (name === "cat") out.add(taint);
}

function socketRules(env: RuleEnv, command: Command): void {
  const name = command.name ?? "";
  for (const redirect of command.redirects) {
    const target = redirect.target.value ?? redirect.target.text;
    const fdUse = /^[<>]&$/.test(redirect.op) || redirect.op === ">&" ? target : undefined;
    if (fdUse && env.ctx.facts.socketFds.has(fdUse)) {
      if (!name || SHELL.test(name) || INTERPRETER.test(name)) {
        env.report(command.node, "socket-fd-shell", "reverse-shell", "critical", `${name || command.nameWord?.text || "a command"} reads or writes a network socket opened on fd ${fdUse} (a reverse shell)`, "Remove this: it lets a remote host run commands here.");
      }
      env.facts.produces.add("network");
      env.facts.network = true;
      continue;
    }
    if (!/^\/dev\/(tcp|udp)\//.test(target)) continue;
    env.facts.network = true;
    env.ctx.facts.sends.push(place(env.ctx, command.node));
    if (name && (SHELL.test(name) || INTERPRETER.test(name))) {
      env.report(command.node, "dev-tcp-shell", "reverse-shell", "critical", `${name} is wired to a network connection (${target}): a reverse shell`, "Remove this: it lets a remote host run commands here.");
    } else if (name === "exec" && command.args.length === 0) {
      if (redirect.fd) env.ctx.facts.socketFds.add(redirect.fd);
      env.report(command.node, "dev-tcp-fd", "reverse-shell", "high", `exec opens a raw network connection (${target}) as a file descriptor, the core of a bash reverse shell`, "Use a normal client (curl) for network access, or none at all.");
    } else if (redirect.op.includes(">") && !reportSend(env, command, env.facts.produces, `writing to ${target}`)) {
      env.report(command.node, "dev-tcp", "network", "high", `${name || "a command"} opens a raw network connection through ${target}`, "Use a normal client (curl) for network access, or none at all.");
    } else if (redirect.op.includes("<")) {
      env.facts.produces.add("network");
      env.report(command.node, "dev-tcp", "network", "high", `${name || "a command"} opens a raw network connection through ${target}`, "Use a normal client (curl) for network access, or none at all.");
    }
  }
}

function networkTool(env: RuleEnv, command: Command, name: string): void {
  env.facts.network = true;
  env.facts.sends = true;
  env.facts.produces.add("network");
  env.ctx.facts.sends.push(place(env.ctx, command.node));
  const values = argValues(command);
  if (name === "socat") {
    if (values.some((value) => /(^|[,:!])(exec|system):/i.test(value))) {
      env.report(command.node, "socat-exec", "reverse-shell", "critical", "socat connects a program (EXEC:/SYSTEM:) to a network socket: a reverse or bind shell", "Remove this: it lets a remote host run commands here.");
      return;
    }
    if (values.some((value) => /listen/i.test(value))) env.report(command.node, "listen", "network", "medium", "socat listens for network connections", "Do not open listening sockets from sandboxed code.");
    else env.report(command.node, "raw-connect", "network", "medium", "socat opens a raw network connection", "Use a normal client (curl) for network access.");
    return;
  }
  const execFlag = values.some((value) => /^--(exec|sh-exec|lua-exec)(=|$)/.test(value) || (/^-[a-zA-Z]*[ec][a-zA-Z]*$/.test(value) && name !== "telnet"));
  const listen = hasFlag(command, name === "telnet" ? "" : "l", "--listen");
  if (execFlag) {
    env.report(command.node, listen ? "bind-shell" : "nc-exec", "reverse-shell", "critical", `${name} ${listen ? "serves" : "connects"} a program over the network (-e/-c): a ${listen ? "bind" : "reverse"} shell`, "Remove this: it lets a remote host run commands here.");
    return;
  }
  if (listen) env.report(command.node, "listen", "network", "medium", `${name} listens for network connections`, "Do not open listening sockets from sandboxed code.");
  else if (hasFlag(command, name === "telnet" ? "" : "z")) env.report(command.node, "port-scan", "network", "low", `${name} probes ports`, "Port checks are fine for your own services; do not scan other hosts.");
  else env.report(command.node, "raw-connect", "network", "medium", `${name} opens a raw network connection`, "Use a normal client (curl) for network access.");
}

function tlsOff(env: RuleEnv, command: Command, what: string): void {
  env.report(command.node, "tls-off", "network", "high", `${what} turns off TLS certificate verification`, "Keep verification on; install the server's CA certificate instead.");
}

export function netRules(command: Command, env: RuleEnv): void {
  const name = command.name ?? "";
  produces(env, command);
  readSecrets(env, command);
  socketRules(env, command);
  for (const [key, value] of command.env) if (/^(NODE_TLS_REJECT_UNAUTHORIZED|PYTHONHTTPSVERIFY)$/.test(key) && value === "0" || (key === "GIT_SSL_NO_VERIFY" && value && value !== "0" && value !== "false")) tlsOff(env, command, key);
  if (!name) return;
  const values = argValues(command);
  const transfer = transferOf(command);
  if (transfer) {
    env.facts.network = true;
    if (transfer.insecure) tlsOff(env, command, `${name} (-k/--insecure/--no-check-certificate)`);
    const all = [...transfer.urls, ...transfer.sent];
    if (all.some((word) => isMetadataUrl(word.value ?? word.text))) {
      env.facts.produces.add("metadata");
      env.report(command.node, "cloud-metadata", "exfiltration", "high", `${name} reads the cloud metadata service, which hands out the machine's credentials`, "Do not query instance metadata from sandboxed code.");
    }
    if (transfer.toStdout) env.facts.produces.add("download");
    else if (transfer.file) env.ctx.facts.downloaded.set(baseName(transfer.file), place(env.ctx, command.node));
    else env.ctx.facts.unknownDownload = true;
    const secretUpload = transfer.files.some((file) => secretKind(file) !== undefined || env.ctx.facts.secretFiles.has(baseName(file)) || file === "-");
    const urlTaints = taintsOf(transfer.urls.filter((word) => word.substitution || word.value === undefined));
    if (transfer.sends || urlTaints.size > 0) {
      env.facts.sends = true;
      env.ctx.facts.sends.push(place(env.ctx, command.node));
      const taints = taintsOf(transfer.sent);
      for (const taint of urlTaints) taints.add(taint);
      if (secretUpload && transfer.files.some((file) => file !== "-")) taints.add("secret");
      reportSend(env, command, taints, name);
    }
    return;
  }
  if (NETWORK_TOOL.test(name)) return networkTool(env, command, name);
  if (name === "openssl" && values[0] === "s_client") {
    env.facts.network = true;
    env.facts.sends = true;
    env.facts.produces.add("network");
    env.ctx.facts.sends.push(place(env.ctx, command.node));
    env.report(command.node, "raw-connect", "network", "medium", "openssl s_client opens a raw TLS connection", "Use a normal client (curl) for network access.");
    return;
  }
  if (/^(nslookup|dig|host|drill|ping|ping6)$/.test(name)) {
    const taints = taintsOf(command.args.filter((word) => word.value === undefined));
    if (taints.size > 0) reportSend(env, command, taints, `${name} (a DNS lookup carrying data)`);
    else if (name !== "ping" && name !== "ping6" && command.args.some((word) => word.value === undefined && /\$[{(]?[A-Za-z_][^.]*\.[A-Za-z0-9-]+\.[A-Za-z]{2,}\b/.test(word.text))) {
      env.report(command.node, "dns-label-data", "exfiltration", "medium", `${name} looks up a host name whose first label is a variable, the way data is smuggled out over DNS`, "Look up fixed host names; never put data into DNS names.");
    }
    return;
  }
  if (/^(scp|rsync|rclone|sftp)$/.test(name) || (name === "aws" && values[0] === "s3") || (name === "gsutil" && values[0] === "cp")) {
    const remote = values.some((value) => /^([A-Za-z0-9_.-]+@)?[A-Za-z0-9_.-]+:/.test(value) && !/^[a-z]+:\/\/$/.test(value)) || values.some((value) => /^(s3|gs):\/\//.test(value));
    if (remote) {
      env.facts.sends = true;
      env.ctx.facts.sends.push(place(env.ctx, command.node));
      const local = command.args.filter((word) => word.value && !word.value.startsWith("-") && !word.value.includes(":"));
      const taints = taintsOf(local);
      if (local.some((word) => secretKind(word.value ?? "") !== undefined || env.ctx.facts.secretFiles.has(baseName(word.value ?? "")))) taints.add("secret");
      reportSend(env, command, taints, name);
    }
    return;
  }
  if (SENDERS.test(name)) {
    env.facts.sends = true;
    env.facts.network = true;
    env.ctx.facts.sends.push(place(env.ctx, command.node));
    if (name === "ssh" && values.some((value) => /^-[a-zA-Z]*R/.test(value))) env.report(command.node, "tunnel", "network", "high", "ssh -R opens a reverse tunnel that exposes this machine to a remote host", "Do not open tunnels from sandboxed code.");
    else if (name === "ssh" && values.some((value) => /^-[a-zA-Z]*D/.test(value))) env.report(command.node, "tunnel", "network", "medium", "ssh -D opens a SOCKS proxy", "Do not open tunnels from sandboxed code.");
    reportSend(env, command, taintsOf(command.args), name);
    return;
  }
  if (TUNNELS.test(name)) env.report(command.node, "tunnel", "network", "high", `${name} opens a tunnel that exposes this machine to the internet`, "Do not open tunnels from sandboxed code.");
  else if (SCANNERS.test(name)) env.report(command.node, "scan", "network", "medium", `${name} scans networks`, "Do not scan hosts from sandboxed code.");
  else if (name === "ztcp") env.report(command.node, "ztcp", "reverse-shell", "high", "ztcp opens a raw TCP connection from zsh, the core of a zsh reverse shell", "Use a normal client (curl) for network access, or none at all.");
  else if (name === "xterm" && values.includes("-display")) env.report(command.node, "xterm-display", "reverse-shell", "high", "xterm -display opens a terminal on a remote X server (a reverse shell)", "Remove this.");
  const joined = values.join(" ");
  if (joined.includes("0.0.0.0") && values.some((value) => /(^|[=:/\s])0\.0\.0\.0(:\d+)?$|^0\.0\.0\.0:/.test(value))) env.report(command.node, "bind-all", "network", "medium", `${name} binds to every network interface (0.0.0.0)`, "Bind to 127.0.0.1 unless the service must be reachable from outside.");
  if (
    (name === "git" && /http\.sslverify[= ]+(false|0|no)/i.test(joined)) ||
    (/^(npm|yarn|pnpm)$/.test(name) && /strict-ssl[= ]+false/.test(joined)) ||
    (/^(pip|pip3|uv)$/.test(name) && /--trusted-host/.test(joined))
  ) tlsOff(env, command, name);
}
