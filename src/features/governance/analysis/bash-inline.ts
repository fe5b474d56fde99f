// Code handed to another interpreter on the command line (python -c, perl -e, ruby -e, php -r,
// node -e, awk programs): found in the command's words and judged with a few patterns on that string.

import type { Node } from "web-tree-sitter";
import { INTERPRETER, PYTHON, type Command, type Report } from "./bash-context.js";

export type InlineLanguage = "python" | "perl" | "ruby" | "php" | "node" | "lua" | "awk" | "other";

export interface InlineCode {
  language: InlineLanguage;
  code: string;
  node: Node;
}

function languageOf(name: string): InlineLanguage {
  if (PYTHON.test(name)) return "python";
  if (/^perl/.test(name)) return "perl";
  if (/^ruby/.test(name)) return "ruby";
  if (/^php/.test(name)) return "php";
  if (/^(node|nodejs|deno|bun)$/.test(name)) return "node";
  if (/^lua/.test(name)) return "lua";
  if (/^[gmn]?awk$/.test(name)) return "awk";
  return "other";
}

const CODE_FLAG: Record<InlineLanguage, RegExp> = {
  python: /^-[A-Za-z]*c$/,
  perl: /^-[A-Za-z]*[eE]$/,
  ruby: /^-[A-Za-z]*e$/,
  php: /^-r$/,
  node: /^(-e|-p|--eval|--print|-pe)$/,
  lua: /^-e$/,
  awk: /^$/,
  other: /^(-e|-c|-Command|-command)$/,
};

/** The inline program of an interpreter command, with `-M`/`-r` modules added for perl and ruby. */
export function inlineCode(command: Command): InlineCode | undefined {
  const name = command.name;
  if (!name || !(INTERPRETER.test(name) || /^[gmn]?awk$/.test(name))) return undefined;
  const language = languageOf(name);
  const args = command.args;
  if (language === "awk") {
    for (let i = 0; i < args.length; i++) {
      const value = args[i]?.value ?? "";
      if (/^-[Fvf]$/.test(value)) i++;
      else if (value.startsWith("-") && value.length > 1) continue;
      else return { language, code: args[i]?.value ?? args[i]?.text ?? "", node: (args[i] ?? command).node };
    }
    return undefined;
  }
  let modules = "";
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const value = arg?.value ?? "";
    if ((language === "perl" && value.startsWith("-M")) || (language === "ruby" && value.startsWith("-r"))) modules += ` ${value.slice(2)}`;
    const attached = /^-([A-Za-z]*)[eE](.+)$/s.exec(value);
    if ((language === "perl" || language === "ruby") && attached && !/^[A-Za-z]*[eE]?$/.test(attached[2] ?? "")) {
      return { language, code: `${attached[2] ?? ""}${modules}`, node: (arg ?? command).node };
    }
    if (CODE_FLAG[language].test(value)) {
      const code = args[i + 1];
      if (code) return { language, code: `${code.value ?? code.text}${modules}`, node: code.node };
    }
    if (!value.startsWith("-")) break;
  }
  if (command.stdinText !== undefined && !args.some((arg) => !(arg.value ?? "").startsWith("-") || arg.value === "-")) {
    return { language, code: command.stdinText + modules, node: command.node };
  }
  if (command.stdinText !== undefined && args.some((arg) => arg.value === "-")) return { language, code: command.stdinText + modules, node: command.node };
  return undefined;
}

const NET = /(\bsocket\b|TCPSocket|UDPSocket|fsockopen|stream_socket_client|IO::Socket|PF_INET|AF_INET|\bnet\.(Socket|connect|createConnection)|require\(\s*['"](node:)?net['"]\s*\)|\/inet6?\/(tcp|udp)\/|socket\.tcp|Net::Telnet|\bnew\s+Socket\b)/;
const SPAWN = /(dup2|pty\.spawn|\/bin\/(ba|z|da|k)?sh\b|["'](ba|z)?sh["']|sh -i|cmd\.exe|\bspawn\s*\(|\bexec[lv]?p?e?\s*[("]|\bpopen|subprocess|\bsystem\s*\(|proc_open|shell_exec|passthru|os\.execute|io\.popen|child_process|\|&|open\(\s*STDIN|fdopen|\bsystem\s*\$|\bexec\s*\$)/;
const FETCH = /(urllib|urlopen|requests\.(get|post)|http\.client|httpx|LWP::|HTTP::Tiny|open-uri|Net::HTTP|URI\.open|file_get_contents\s*\(\s*['"]https?:|curl_exec|\bhttps?\.get\s*\(|\bfetch\s*\(|urlretrieve)/;
const RUN = /(\b(exec|eval|compile|execfile|system|instance_eval|popen|spawn|shell_exec|passthru|proc_open|loadstring|dofile|Function)\s*\(|subprocess|os\.system|(?<![.\w])load\s*\(|\beval\s+\$|\bexec\s+["'$]|\bchmod\b.*\b(0?755|0o755|\+x))/;
const DECODE = /(b64decode|base64|decodebytes|fromhex|unhexlify|decode\(\s*['"](hex|base64|rot.?13|zlib)|codecs\.decode|zlib\.decompress|marshal\.loads|pack\s*\(?\s*["']H|MIME::Base64|decode_base64|Base64\.decode|\batob\s*\(|Buffer\.from\([^)]*['"](base64|hex)|gzinflate|str_rot13|base64_decode|(chr\(\d+\)\s*[+.]\s*){3}|fromCharCode|(\\x[0-9a-fA-F]{2}){4})/;
const SECRET = /(os\.environ(?!\s*(\.get|\[))|environ\.copy|dict\(\s*os\.environ|process\.env(?![.[])|%ENV\b|\bENV\.to_h|\bgetenv\s*\(\s*\)|\/etc\/shadow|\/etc\/passwd|\.ssh\/|id_rsa|\.aws\/credentials|\.netrc|169\.254\.169\.254)/;
const DESERIALIZE = /(pickle\.loads?|cPickle|marshal\.loads?|yaml\.load\s*\((?![^)]*SafeLoader)|yaml\.unsafe_load|Marshal\.load|\bunserialize\s*\(|Storable|jsonpickle|shelve\.open)/;
const FORK = /(while[^:\n]*:\s*os\.fork|fork\s+while\s+fork|while\s*\(?\s*(1|true|True)\s*\)?\s*[:{]?\s*(os\.)?fork|loop\s*\{\s*fork|for\s*\(\s*;\s*;\s*\)\s*\{?\s*fork)/;
const PROCESS = /(os\.system|subprocess\.|os\.popen|os\.exec[lv]|pty\.spawn|\bsystem\s*\(|\bexec\s*\(|`[^`]+`|\bpopen|\bspawn\s*\(|child_process|shell_exec|passthru|proc_open|os\.execute|io\.popen|\|\s*"(\/bin\/)?(ba)?sh")/;
const DYNAMIC_EVAL = /\b(exec|eval)\s*\(\s*(?!['"])[A-Za-z_$]/;
const TLS_OFF = /(verify\s*=\s*False|CERT_NONE|_create_unverified_context|rejectUnauthorized\s*:\s*false|VERIFY_NONE|SSL_VERIFY_NONE|verify_mode\s*=\s*OpenSSL::SSL::VERIFY_NONE)/;

/** Judges one inline program; returns whether anything critical was found. */
/** Quoted strings of an inline program that look like shell commands, to analyse as bash. */
function shellStrings(code: string): string[] {
  const out: string[] = [];
  for (const match of code.matchAll(/"((?:[^"\\]|\\.){4,400})"|'((?:[^'\\]|\\.){4,400})'/g)) {
    const text = match[1] ?? match[2] ?? "";
    if (/\s/.test(text) && /^[\w./-]+\s/.test(text)) out.push(text);
    if (out.length >= 20) break;
  }
  return out;
}

export function judgeInline(inline: InlineCode, interpreter: string, report: Report, snippet: (code: string, at: Node) => void): void {
  const { code, node, language } = inline;
  if (code.length > 200_000) return;
  const net = NET.test(code);
  const where = `the inline ${interpreter} program`;
  if (language === "awk") {
    if (/\/inet6?\/(tcp|udp)\//.test(code)) {
      if (/\|&|system\s*\(|getline/.test(code)) report(node, "awk-inet-shell", "reverse-shell", "critical", `${where} opens a TCP connection (/inet/tcp) and runs what it reads`, "Remove the network shell; awk programs should only transform text.");
      else report(node, "awk-inet", "network", "high", `${where} opens a raw network connection through /inet`, "Use a normal client (curl) to reach network services, or none at all.");
    } else if (/system\s*\(\s*("[^"]*"\s*)?[$a-zA-Z_]/.test(code)) report(node, "awk-system-built", "process-exec", "medium", `${where} runs shell commands built from input fields with system()`, "Quote fields or print the commands and review them before running them.");
    else if (/\|\s*"(\/bin\/)?(ba|da|z)?sh"/.test(code)) report(node, "awk-pipe-shell", "code-exec", "medium", `${where} pipes generated text into a shell`, "Print the commands and review them instead of piping them into sh.");
    else if (/system\s*\(\s*"(\/bin\/)?(ba|da|z|k)?sh"\s*\)/.test(code)) report(node, "awk-shell", "process-exec", "medium", `${where} starts a shell with system()`, "Run the commands you need directly.");
    else if (/system\s*\(/.test(code)) report(node, "awk-system", "process-exec", "low", `${where} runs a command with system()`, "Run the commands directly from the script where they are visible.");
    for (const text of shellStrings(code)) snippet(text, node);
    return;
  }
  if (net && SPAWN.test(code)) {
    report(node, "inline-reverse-shell", "reverse-shell", "critical", `${where} connects a socket to a shell (a reverse or bind shell)`, "Remove this code: it hands control of the machine to a remote host.");
    return;
  }
  if (FORK.test(code)) {
    report(node, "inline-fork-bomb", "resource-abuse", "critical", `${where} forks in an endless loop (a fork bomb)`, "Remove the fork loop; start a bounded number of workers.");
    return;
  }
  if (FETCH.test(code) && RUN.test(code)) {
    report(node, "inline-download-exec", "download-exec", "critical", `${where} downloads code and runs it`, "Vendor the code, pin and verify it, and run it as a reviewed file instead.");
    return;
  }
  if (DECODE.test(code) && RUN.test(code)) {
    report(node, "inline-decode-exec", "obfuscation", "critical", `${where} decodes hidden data and executes it`, "Run readable code; decoding a payload and executing it hides what runs.");
    return;
  }
  if (SECRET.test(code) && (net || FETCH.test(code))) {
    report(node, "inline-exfiltration", "exfiltration", "critical", `${where} reads credentials or the environment and sends them over the network`, "Do not send secrets or environment dumps anywhere.");
    return;
  }
  if (PROCESS.test(code)) for (const text of shellStrings(code)) snippet(text, node);
  if (DESERIALIZE.test(code)) report(node, "inline-deserialize", "deserialization", "high", `${where} deserializes data with an unsafe loader (pickle, marshal, yaml.load)`, "Use JSON or a safe loader (yaml.safe_load).");
  if (TLS_OFF.test(code)) report(node, "inline-tls-off", "network", "high", `${where} turns off TLS certificate checks`, "Keep certificate verification on; add the CA instead.");
  if (DYNAMIC_EVAL.test(code) && language !== "perl") report(node, "inline-eval", "code-exec", "high", `${where} evaluates code held in a variable`, "Parse the data instead of evaluating it.");
  else if (net) report(node, "inline-socket", "network", "medium", `${where} opens network sockets`, "Prefer a plain HTTP client to raw sockets.");
  else if (PROCESS.test(code)) report(node, "inline-process", "process-exec", "medium", `${where} starts other processes`, "Run the commands directly from the script where they are visible.");
}
