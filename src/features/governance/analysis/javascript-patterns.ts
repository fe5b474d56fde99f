// What makes a string dangerous for the JavaScript rules: shell command lines handed to child_process,
// credential and system paths, and suspicious hosts. Tested on folded strings only, never on the whole source.

import type { Category, Severity } from "../types.js";

export interface CommandPattern {
  name: string;
  category: Category;
  severity: Severity;
  pattern: RegExp;
  message: string;
  recommendation: string;
}

/** Shell command lines that are an attack whatever runs them. */
export const COMMAND_PATTERNS: readonly CommandPattern[] = [
  {
    name: "shell-to-socket",
    category: "reverse-shell",
    severity: "critical",
    pattern: /\/dev\/(tcp|udp)\/|\b(python[23]?|perl|ruby|php)\b.*(socket|fsockopen|TCPSocket).*(dup2|exec|spawn|pty|\/bin\/(ba)?sh|popen|system)|\btelnet\b[^|]*\|\s*(\/bin\/)?(ba)?sh\b|\bn(c|cat|etcat)\b[^|;&]*\s-[a-z]*[ec]\b|\bsocat\b.*\bexec:|\bmkfifo\b.*\b(nc|sh|bash)\b|\b(ba|z)?sh\s+-i\b.*[<>]&/i,
    message: "runs a shell wired to a network connection (reverse or bind shell)",
    recommendation: "Remove it: a shell on a socket gives a remote party control of the sandbox.",
  },
  {
    name: "download-pipe-shell",
    category: "download-exec",
    severity: "critical",
    pattern:
      /\b(curl|wget|fetch)\b[^|;&]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b|\b(curl|wget)\b.*(&&|;|\|\|)\s*(chmod\s+[+0-7ux]*x|\.\/|(ba)?sh\s)|\b(curl|wget)\b[^|]*\|\s*(python3?|node|perl|ruby)\b/i,
    message: "downloads a program and runs it",
    recommendation: "Install dependencies with the package manager, pinned and verified; never run what a URL returns.",
  },
  {
    name: "decode-pipe-shell",
    category: "obfuscation",
    severity: "critical",
    pattern: /\bbase64\s+(-d|--decode|-D)\b[^;&]*\|\s*(ba|z)?sh\b|\bxxd\s+-r\b[^;&]*\|\s*(ba)?sh\b/i,
    message: "decodes hidden text and runs it as a shell script",
    recommendation: "Run readable commands only; decoded payloads hide what runs.",
  },
  {
    name: "curl-sends-secrets",
    category: "exfiltration",
    severity: "critical",
    pattern:
      /\b(curl|wget|nc)\b.*(\.ssh\/|\/etc\/(shadow|passwd)|\.aws\/credentials|\$\(\s*(env|printenv)\s*\)|`(env|printenv)`)|\b(env|printenv)\b\s*\|\s*(curl|nc|wget)\b/i,
    message: "sends credentials or the environment over the network",
    recommendation: "Never send keys, credential files or the environment out of the sandbox.",
  },
  {
    name: "fork-bomb",
    category: "resource-abuse",
    severity: "critical",
    pattern: /:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;?\s*:|\b(\w+)\s*\(\s*\)\s*\{\s*\1\s*\|\s*\1\s*&/,
    message: "is a fork bomb",
    recommendation: "Remove it: it exhausts the process table.",
  },
  {
    name: "rm-rf-root",
    category: "filesystem",
    severity: "critical",
    pattern: /\brm\s+(-[a-z]*\s+)*-[a-z]*[rR][a-z]*\s+(-[a-z-]+\s+)*(\/\*?|~\/?\*?|\$HOME\/?\*?|\/(etc|usr|bin|boot|var|lib|home|root|sbin|opt|sys|proc)\/?\*?)(\s|$|;|&)/,
    message: "deletes the root, home or a system directory recursively",
    recommendation: "Delete only paths under /workspace that your program created.",
  },
  {
    name: "persistence",
    category: "persistence",
    severity: "critical",
    pattern: /\bcrontab(\s+(?!-l\b)|\s*$)|\|\s*crontab\b|\/etc\/cron|>>?\s*\S*\.(bashrc|bash_profile|profile|zshrc)\b|authorized_keys|systemctl\s+enable|\/etc\/systemd\/|\/etc\/rc\.local|\/etc\/init\.d\//,
    message: "installs itself to run again later (cron, shell profile, ssh keys, services)",
    recommendation: "Do not change start-up files, cron tables or ssh keys from code.",
  },
  {
    name: "chmod-world",
    category: "filesystem",
    severity: "high",
    pattern: /\bchmod\s+(-[a-zA-Z]+\s+)*(0?[0-7]?[0-7][0-7][2367]\b|[ao]?\+[rwx]*w|777)/,
    message: "makes files world-writable",
    recommendation: "Use the narrowest mode that works (e.g. 644 or 755).",
  },
  {
    name: "setuid",
    category: "privilege",
    severity: "high",
    pattern: /\bchmod\s+(-[a-zA-Z]+\s+)*([ugo]*\+[rwx]*s|[4-7][0-7]{3}\b)|\bchown\s+root\b/,
    message: "sets setuid/setgid bits or hands files to root",
    recommendation: "Do not raise privileges from sandboxed code.",
  },
  {
    name: "container-escape",
    category: "privilege",
    severity: "high",
    pattern: /\b(docker|podman|nerdctl)\s+(run|create|exec)\b[^;&|]*(--privileged|(-v|--volume)[\s=]+\/:|docker\.sock|--pid[\s=]+host|--cap-add[\s=]+(ALL|SYS_ADMIN))/,
    message: "starts a container with host-level access (privileged, the host root or the Docker socket)",
    recommendation: "Run containers unprivileged without host mounts.",
  },
  {
    name: "sudo",
    category: "privilege",
    severity: "high",
    pattern: /(^|[;&|]\s*|\s)(sudo|pkexec|doas|setcap)(\s|$)|(^|[;&|]\s*|\s)su\s+(-|root\b)/,
    message: "runs a command as root (sudo, pkexec, doas, su) or grants file capabilities (setcap)",
    recommendation: "Sandboxed code runs unprivileged; do not try to gain root.",
  },
];

/** Credential and secret files: reading them is sensitive, sending them out is exfiltration. */
const CREDENTIAL_PATH =
  /(^|\/|~)\.ssh(\/|$)|id_(rsa|dsa|ecdsa|ed25519)|\/etc\/(shadow|gshadow|sudoers)|\.aws\/(credentials|config)|\.npmrc|\.netrc|\.pgpass|\.git-credentials|\.docker\/config\.json|\.kube\/config|\.gnupg|\.config\/gcloud|\.azure\/|(^|\/)\.env$|wallet\.dat|Local State|Login Data|\.bash_history|\.zsh_history|\/proc\/self\/environ|\/etc\/passwd/;

/** Files that make code run again later when written. */
const PERSISTENCE_PATH =
  /\.(bashrc|bash_profile|profile|zshrc|zprofile|bash_login)$|authorized_keys|\/etc\/cron|\/var\/spool\/cron|crontab|\/etc\/systemd\/|\.config\/systemd\/|\/etc\/rc\.local|\/etc\/init\.d\/|\.config\/autostart\/|\/etc\/profile|\/etc\/ld\.so\.preload|(^|\/)\.git\/hooks\/[^/]+$/;

const PRIVILEGE_PATH = /^\/etc\/(passwd|shadow|sudoers|group)(\.d\/|$)/;

/** System directories (and the root and home themselves). */
const SYSTEM_DIR = /^(\/|\/\*|~|~\/|~\/\*|\/(etc|usr|bin|boot|var|lib|lib64|home|root|sbin|opt|sys|proc|dev|srv|run)(\/.*)?)$/;
const ROOT_OR_HOME = /^(\/|\/\*|~\/?\*?|\/(etc|usr|bin|boot|var|lib|lib64|home|root|sbin|opt|sys|proc|dev)\/?\*?)$/;

const METADATA_HOST = /169\.254\.169\.254|metadata\.google\.internal|100\.100\.100\.200|fd00:ec2::254/;
const SHADY_HOST =
  /discord(app)?\.com\/api\/webhooks|pastebin\.com\/raw|paste\.ee|hastebin|ngrok\.io|ngrok-free\.app|transfer\.sh|requestbin|pipedream\.net|webhook\.site|burpcollaborator|interact\.sh|oast\.(fun|pro|live|site|me)|\.onion\b|api\.telegram\.org\/bot/i;

export function isCredentialPath(path: string): boolean {
  return CREDENTIAL_PATH.test(path);
}
export function isPersistencePath(path: string): boolean {
  return PERSISTENCE_PATH.test(path);
}
export function isPrivilegePath(path: string): boolean {
  return PRIVILEGE_PATH.test(path);
}
export function isSystemPath(path: string): boolean {
  return SYSTEM_DIR.test(path) && !path.startsWith("/tmp") && !path.startsWith("/workspace");
}
/** `rm -rf` of this path destroys the system or the user's home. */
export function isRootOrHome(path: string): boolean {
  return ROOT_OR_HOME.test(path.replace(/\/+$/, "") || "/");
}
export function isMetadataHost(text: string): boolean {
  return METADATA_HOST.test(text);
}
export function isShadyHost(text: string): boolean {
  return SHADY_HOST.test(text);
}

/** Programs that are a shell (spawned with a socket they become a reverse shell). */
export function isShellProgram(command: string): boolean {
  return /^(\/(usr\/)?bin\/)?(ba|z|da|k|c|tc|fi)?sh(\.exe)?$|^(cmd(\.exe)?|powershell(\.exe)?|pwsh)$/i.test(command.trim().split(/\s+/)[0] ?? "");
}
