// What a folded path or shell text is about: credentials, persistence places, system directories, and
// the shell one-liners (reverse shells, curl|sh, rm -rf /, fork bombs) that Python code hands to a shell.

/** Files whose content is a secret: keys, cloud and tool credentials, password hashes, browser stores. */
const CREDENTIAL = [
  /(^|\/)\.ssh\/(id_[a-z0-9]+|identity|[^/]*\.pem)?$/,
  /(^|\/)\.ssh\/id_/,
  /^\/etc\/(shadow|gshadow|sudoers)/,
  /(^|\/)\.aws\/(credentials|config)/,
  /(^|\/)\.config\/gcloud/,
  /(^|\/)\.azure\//,
  /(^|\/)\.kube\/config/,
  /(^|\/)\.docker\/config\.json/,
  /(^|\/)\.netrc$/,
  /(^|\/)\.git-credentials/,
  /(^|\/)\.pgpass/,
  /(^|\/)\.npmrc/,
  /(^|\/)\.pypirc/,
  /(^|\/)\.gnupg\//,
  /(^|\/)\.bash_history|(^|\/)\.zsh_history/,
  /Login Data|\/Cookies$|Local State|\.mozilla\/firefox|keychain|wallet\.dat|\.electrum|leveldb/i,
  /169\.254\.169\.254|metadata\.google\.internal|100\.100\.100\.200/,
  /\/proc\/self\/environ|\/proc\/\d+\/environ/,
];

/** Places whose change makes code run again later: shell start-up files, cron, systemd, ssh keys. */
const PERSISTENCE = [
  /(^|\/)\.(bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|bash_logout)$/,
  /^\/etc\/(profile|bash\.bashrc|environment|rc\.local|ld\.so\.preload)/,
  /^\/etc\/profile\.d\//,
  /^\/(etc|var\/spool)\/cron|(^|\/)crontab$|\/cron\.d\//,
  /systemd\/(system|user)\/|\/etc\/init\.d\//,
  /(^|\/)\.ssh\/authorized_keys/,
  /(^|\/)\.config\/autostart\//,
  /(^|\/)(sitecustomize|usercustomize)\.py$|site-packages\/[^/]+\.pth$/,
  /LaunchAgents|LaunchDaemons/,
];

const SYSTEM_DIR = /^\/(etc|usr|bin|sbin|lib|lib64|boot|var|opt|root|home|sys|proc|dev|srv)(\/|$)/;

export function isCredentialPath(p: string): boolean {
  return CREDENTIAL.some((r) => r.test(p));
}

export function isPersistencePath(p: string): boolean {
  return PERSISTENCE.some((r) => r.test(p));
}

export function isSystemPath(p: string): boolean {
  return SYSTEM_DIR.test(p);
}

/** "/", "/*", "~", "$HOME", a top-level system directory: deleting it recursively destroys the host. */
export function isRootLikePath(p: string): boolean {
  const t = p.trim().replace(/\/+$/, "");
  if (t === "" || t === "/*" || t === "~" || t === "~/*" || t === "$HOME" || t === "${HOME}" || t === ".." || t === "/..") return true;
  return /^\/(etc|usr|bin|sbin|lib|lib64|boot|var|opt|root|home|sys|dev|srv)(\/\*)?$/.test(t);
}

export interface ShellTextRisk {
  kind: "reverse-shell" | "download-exec" | "filesystem" | "resource-abuse" | "persistence" | "exfiltration";
  what: string;
}

/** Dangerous shapes in a command line; `text` may hold \u0000 where a part is unknown. */
export function shellTextRisk(text: string): ShellTextRisk | undefined {
  const t = text.replace(/\s+/g, " ");
  if (/\/dev\/(tcp|udp)\/|\bnc(at)?\b[^|;&]*\s-[a-z]*[ec]\b|\bsocat\b[^|;&]*exec|mkfifo[^;|&]*[;|&][^;]*\bnc\b|\bbash -i\b[^|;]*[>&]|\bsh -i\b[^|;]*[>&]/.test(t))
    return { kind: "reverse-shell", what: "a reverse shell" };
  if (/\b(curl|wget|fetch)\b[^|;&]*\|\s*(sudo\s+)?(ba|z|da)?sh\b|\b(curl|wget)\b[^|;&]*\|\s*python|(ba)?sh\s+(-c\s+)?["']?\$\((curl|wget)|\b(curl|wget)\b.*(&&|;)\s*chmod\s+\+?[0-7]*x/.test(t))
    return { kind: "download-exec", what: "a download piped into a shell" };
  if (/:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/.test(t)) return { kind: "resource-abuse", what: "a fork bomb" };
  const rm = /\brm\s+(-[a-zA-Z]*[rR][a-zA-Z]*\s+|-[a-zA-Z]+\s+-[a-zA-Z]+\s+|--recursive\s+|--no-preserve-root\s+)+([^\s;|&]+)/.exec(t);
  if (rm && (isRootLikePath(rm[2] ?? "") || /--no-preserve-root/.test(t))) return { kind: "filesystem", what: `rm -rf ${rm[2]}` };
  if (/\bcrontab\s+(?!-l)\S|>>?\s*~?\/?[^\s]*\.(bashrc|bash_profile|profile|zshrc)\b|authorized_keys|systemctl\s+enable/.test(t))
    return { kind: "persistence", what: "a change to start-up files or cron" };
  if (/\/etc\/shadow|\.ssh\/id_|\.aws\/credentials/.test(t) && /\b(curl|wget|nc)\b/.test(t)) return { kind: "exfiltration", what: "credentials sent out" };
  return undefined;
}

/** Programs run through subprocess that say nothing dangerous on their own. */
export const HARMLESS_PROGRAMS = new Set([
  "date", "ls", "pwd", "whoami", "id", "uname", "echo", "nproc", "hostname", "df", "du", "free", "uptime", "cat", "head",
  "tail", "wc", "sort", "grep", "which", "env", "printenv", "true", "false", "sleep", "git", "python", "python3", "node", "pip",
  "pip3", "nvidia-smi", "lscpu", "file", "stat", "ffmpeg", "convert", "pdftotext", "tar", "gzip", "unzip", "zip", "jq", "diff",
]);
