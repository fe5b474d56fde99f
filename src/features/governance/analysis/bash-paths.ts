// Which paths matter to the bash rules: credentials, startup files and other persistence places,
// system directories, block devices. Paths arrive with `$HOME` already folded to `~`.

export type SecretKind = "secret" | "sensitive";

/** `/root/x` and `/home/alice/x` count as `~/x`. */
export function homeRelative(path: string): string {
  if (path === "~" || path.startsWith("~/")) return path;
  const match = /^(?:\/root|\/home\/[^/]+|~[A-Za-z0-9_-]+)(\/.*)?$/.exec(path);
  return match ? `~${match[1] ?? ""}` : path;
}

const SECRET_FILES: readonly RegExp[] = [
  /^~\/\.ssh(\/(?!.*\.pub$)(?!known_hosts)(?!config$).*)?$/,
  /(^|\/)id_(rsa|dsa|ecdsa|ed25519)$/,
  /^~\/\.(aws|azure|gnupg|password-store|docker|kube|vault-token|git-credentials|netrc|npmrc|pypirc|pgpass|my\.cnf|s3cfg|boto)(\/|$)/,
  /^~\/\.config\/(gcloud|gh|hub|solana|rclone|doctl|op)(\/|$)/,
  /^~\/\.(bitcoin|electrum|ethereum|monero|exodus)(\/|$)/,
  /(^|\/)wallet\.dat$/,
  /^~\/\.(mozilla|config\/google-chrome|config\/chromium|config\/BraveSoftware)(\/|$)/,
  /(^|\/)(Login Data|Cookies|cookies\.sqlite|logins\.json|key[34]\.db)$/,
  /^\/etc\/(shadow|gshadow|sudoers|master\.passwd)(\.d)?(\/|-|$)/,
  /^\/etc\/ssh\/ssh_host_[a-z0-9]+_key$/,
  /^\/proc\/(self|[0-9]+|\*|\$\$|thread-self)\/environ$/,
  /^\/(var\/)?run\/secrets(\/|$)/,
  /^~\/\.terraform\.d\/credentials/,
];

const SENSITIVE_FILES: readonly RegExp[] = [
  /^\/etc\/(passwd|group|hosts)$/,
  /^~\/\.ssh\/(known_hosts|config)$/,
  /^~\/\.(bash|zsh|sh|python|mysql|psql|node_repl)_history$/,
  /^~\/\.history$/,
  /(^|\/)\.env(\.[A-Za-z]+)?$/,
  /^\/proc\/(self|[0-9]+)\/(cmdline|maps)$/,
];

/** Patterns (no flags, no backreferences) joined into one alternation: one match instead of one per pattern. */
function anyOf(patterns: readonly RegExp[]): RegExp {
  return new RegExp(patterns.map((pattern) => `(?:${pattern.source})`).join("|"));
}

const SECRET_FILE = anyOf(SECRET_FILES);
const SENSITIVE_FILE = anyOf(SENSITIVE_FILES);

export function secretKind(raw: string): SecretKind | undefined {
  const path = homeRelative(raw);
  if (SECRET_FILE.test(path)) return "secret";
  if (SENSITIVE_FILE.test(path)) return "sensitive";
  return undefined;
}

export type PersistKind = "startup" | "cron" | "service" | "ssh-keys" | "preload" | "accounts" | "kernel";

const PERSIST: readonly [RegExp, PersistKind][] = [
  [/^~\/\.(bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|zshenv|zlogin|kshrc|cshrc|tcshrc|xinitrc|xprofile|xsession)$/, "startup"],
  [/^~\/\.config\/(fish\/config\.fish|autostart\/.*)$/, "startup"],
  [/^\/etc\/(profile|bash\.bashrc|bashrc|zshrc|zsh\/.*|environment|profile\.d\/.*|xdg\/autostart\/.*|update-motd\.d\/.*)$/, "startup"],
  [/^\/etc\/(cron[^/]*|anacrontab)(\/.*)?$/, "cron"],
  [/^\/var\/spool\/cron(\/.*)?$/, "cron"],
  [/^\/(etc|lib|usr\/lib|run)\/systemd\/.+/, "service"],
  [/^~\/\.config\/systemd\/.+/, "service"],
  [/^\/etc\/(init\.d|init|rc[0-6S]?\.d)\/.+/, "service"],
  [/^\/etc\/rc\.local$/, "service"],
  [/^~\/\.ssh\/authorized_keys2?$/, "ssh-keys"],
  [/^\/etc\/ssh\/(sshd_config|authorized_keys.*)$/, "ssh-keys"],
  [/^\/etc\/ld\.so\.(preload|conf(\.d\/.*)?)$/, "preload"],
  [/^\/etc\/(passwd|shadow|group|gshadow|sudoers(\.d\/.*)?|pam\.d\/.*|security\/.*)$/, "accounts"],
  [/^\/proc\/sys\/kernel\/(core_pattern|modprobe)$/, "kernel"],
  [/(^|\/)release_agent$/, "kernel"],
  [/^\/sys\/kernel\/uevent_helper$/, "kernel"],
];

/** Whether any PERSIST pattern matches: most paths match none, and then one test answers. */
const ANY_PERSIST = anyOf(PERSIST.map(([pattern]) => pattern));

export function persistKind(raw: string): PersistKind | undefined {
  const path = homeRelative(raw);
  if (!ANY_PERSIST.test(path)) return undefined;
  for (const [pattern, kind] of PERSIST) if (pattern.test(path)) return kind;
  return undefined;
}

const SYSTEM_DIRS = ["bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "opt", "proc", "root", "sbin", "srv", "sys", "usr", "var", "snap", "mnt", "media"];
const SYSTEM_ROOT = new RegExp(`^/(${SYSTEM_DIRS.join("|")})(/(usr|local|lib|bin|sbin|share|include))?/?$`);

/** A path whose recursive deletion wrecks the system or the user's home: `/`, `/*`, `~`, `/usr`, `/etc/*`. */
export function isCatastrophicTarget(raw: string): boolean {
  let path = homeRelative(raw.trim());
  path = path.replace(/\/\.?\*$/, "/").replace(/\/+/g, "/");
  if (path === "" ) return false;
  if (path === "/" || path === "/." || path === "~" || path === "~/" || path === "/*" || path === "~/*") return true;
  return SYSTEM_ROOT.test(path);
}

/** Writing here changes the system rather than the program's own files. */
export function isSystemPath(raw: string): boolean {
  const path = homeRelative(raw);
  return /^\/(etc|usr|bin|sbin|lib|lib32|lib64|boot|sys|proc\/sys|root|var\/lib|opt)(\/|$)/.test(path);
}

/** A block device: writing to it destroys a file system. */
export function isBlockDevice(raw: string): boolean {
  return /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\/|mapper\/|md\d|dm-\d|loop\d)/.test(raw);
}

/** Where programs in a sandbox keep their own files: not a system path even when absolute. */
export function isScratchPath(raw: string): boolean {
  return /^(\/workspace|\/tmp|\/var\/tmp|\/dev\/shm)(\/|$)/.test(raw) || !raw.startsWith("/") && !raw.startsWith("~");
}

const METADATA = /(169\.254\.169\.254|169\.254\.170\.2|fd00:ec2::254|metadata\.google\.internal|100\.100\.100\.200|metadata\.azure\.com|\[?fd00:ec2::254\]?)/i;

/** A cloud instance metadata address, which hands out the machine's credentials. */
export function isMetadataUrl(text: string): boolean {
  return METADATA.test(text);
}

/** Environment variable names that hold credentials. */
export function isSecretVariable(name: string): boolean {
  return /(SECRET|TOKEN|PASSW|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL|AUTH)/i.test(name) && !/^(GPG_TTY|SSH_AUTH_SOCK)$/.test(name);
}
