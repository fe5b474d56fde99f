// The host's /etc entries that every sandbox sees read-only, so that what a program finds under
// /usr (alternatives, shared libraries, CA certificates, zones, fonts) works inside: one table.

import { lstatSync, readdirSync, readlinkSync, realpathSync } from "node:fs";

export interface HostEtcEntry {
  /** Host path, mounted at the same path inside (a fixed path under /etc, or a pattern of names directly in /etc). */
  path: string | RegExp;
  why: string;
  /**
   * Bound from the host rather than copied into the sandbox's /etc (host-etc-image.ts): a directory
   * of hundreds of links that packages change, which a bind shows live at the cost of one mount.
   */
  bind?: true;
}

/**
 * Mounted read-only when present on the host. Nothing here is writable from inside, and nothing
 * holds a secret: files root keeps to itself stay unreadable inside too (the sandbox runs as
 * another host uid). Entries that are symlinks are recreated as links when they point under /usr
 * or into another entry, and left out otherwise: the table never reaches past /usr and itself.
 */
export const HOST_ETC_ENTRIES: readonly HostEtcEntry[] = [
  { path: "/etc/alternatives", why: "about 400 links under /usr (awk, which, cc, vi, nodejs, libblas.so.3) resolve through it", bind: true },
  { path: "/etc/ld.so.cache", why: "the dynamic linker finds shared libraries through it" },
  { path: "/etc/ld.so.conf", why: "the dynamic linker's library directories (read by ldconfig -p and build tools)" },
  { path: "/etc/ld.so.conf.d", why: "the rest of the dynamic linker's library directories" },
  { path: "/etc/ssl/certs", why: "public CA certificates (OpenSSL, Python ssl, curl, Node with --use-openssl-ca)", bind: true },
  { path: "/etc/ssl/openssl.cnf", why: "OpenSSL's configuration (/usr/lib/ssl/openssl.cnf links here)" },
  { path: "/etc/ssl/cert.pem", why: "the CA bundle's path on some distributions" },
  { path: "/etc/pki/tls/certs", why: "public CA certificates on Red Hat-style hosts" },
  { path: "/etc/pki/ca-trust/extracted", why: "the CA bundles that /etc/pki/tls/certs links to" },
  { path: "/etc/localtime", why: "the host's time zone" },
  { path: "/etc/timezone", why: "the host's time zone by name" },
  { path: "/etc/locale.alias", why: "locale names' aliases (glibc, Python locale)" },
  { path: "/etc/default/locale", why: "the host's default locale, for tools that read it" },
  { path: "/etc/fonts", why: "fontconfig's configuration (matplotlib, Pillow, anything that renders text)" },
  { path: "/etc/matplotlibrc", why: "Debian's matplotlib reads its defaults here" },
  { path: /^python3(\.\d+)?$/, why: "Debian's Python configuration (sitecustomize.py links here)" },
  { path: "/etc/mime.types", why: "file-type tables (Python mimetypes, file servers)" },
  { path: "/etc/magic", why: "file(1)'s local magic" },
  { path: "/etc/magic.mime", why: "file(1)'s local MIME magic" },
  { path: "/etc/protocols", why: "protocol names (getprotobyname, Python socket)" },
  { path: "/etc/services", why: "service names (getservbyname, Python socket)" },
  { path: "/etc/os-release", why: "the distribution's name and version (platform, pip, tools)" },
  { path: "/etc/debian_version", why: "the Debian version, for tools that check it" },
  { path: "/etc/vim", why: "vim's system vimrc (/usr/share/vim/vimrc links here)" },
  { path: "/etc/R", why: "R's system configuration (/usr/lib/R/etc links here)" },
  { path: /^java-\d+-openjdk$/, why: "the JDK's configuration (/usr/lib/jvm/*/conf links here)" },
  { path: /^ImageMagick-\d+$/, why: "ImageMagick's configuration and resource policy" },
];

/**
 * Host /etc entries deliberately never mounted, and why (documentation and tests; the sandbox's
 * /etc is a private tmpfs, so everything not in the table above is absent anyway).
 */
export const HOST_ETC_NEVER: readonly HostEtcEntry[] = [
  { path: "/etc/passwd", why: "replaced by a synthetic file naming only the sandbox user" },
  { path: "/etc/group", why: "replaced by a synthetic file" },
  { path: "/etc/hosts", why: "replaced by a synthetic file (localhost and the sandbox's name)" },
  { path: "/etc/hostname", why: "replaced by a synthetic file" },
  { path: "/etc/shadow", why: "password hashes" },
  { path: "/etc/gshadow", why: "group password hashes" },
  { path: "/etc/sudoers", why: "privilege configuration" },
  { path: "/etc/ssh", why: "host keys" },
  { path: "/etc/ssl/private", why: "private keys" },
  { path: "/etc/machine-id", why: "a stable identifier of the host" },
  { path: "/etc/resolv.conf", why: "sandboxes have no network" },
  { path: "/etc/nsswitch.conf", why: "may name host services (sss, ldap, systemd); glibc's default (files, dns) suits the synthetic files" },
  { path: "/etc/environment", why: "host environment; sandboxes get only an allowlist" },
  { path: "/etc/gitconfig", why: "may hold credentials or headers with tokens" },
  { path: "/etc/npmrc", why: "may hold registry tokens" },
  { path: "/etc/pip.conf", why: "may hold package index credentials" },
  { path: "/etc/wgetrc", why: "may hold proxy credentials" },
  { path: "/etc/perl", why: "site configuration of Perl modules (CPAN's may hold proxy credentials); Perl runs without it" },
];

/**
 * Configuration directories under /usr, hidden: /usr/local/etc (hand-installed tools) and /usr/etc
 * (npm's global npmrc when node's prefix is /usr); an npmrc or pip.conf may hold registry credentials.
 */
export const HIDDEN_USR_DIRS: readonly string[] = ["/usr/local/etc", "/usr/etc"];

/** Where the host image's links may point: under /usr (which sandboxes see) but never into its hidden configuration directories. */
function linkTargetVisible(real: string, mounted: readonly string[]): boolean {
  if (HIDDEN_USR_DIRS.some((dir) => real === dir || real.startsWith(`${dir}/`))) return false;
  if (real.startsWith("/usr/")) return true;
  return mounted.some((root) => real === root || real.startsWith(`${root}/`));
}

function expand(etcDir: string): Array<{ path: string; bind: boolean }> {
  const paths: Array<{ path: string; bind: boolean }> = [];
  let names: string[] | undefined;
  for (const entry of HOST_ETC_ENTRIES) {
    const bind = entry.bind === true;
    if (typeof entry.path === "string") {
      paths.push({ path: entry.path, bind });
      continue;
    }
    names ??= readdirSync(etcDir).sort();
    const pattern = entry.path;
    paths.push(...names.filter((name) => pattern.test(name)).map((name) => ({ path: `/etc/${name}`, bind })));
  }
  return paths;
}

/** What of the host's /etc a sandbox gets: entries to copy, entries to bind, and links to recreate (target, path). */
export interface HostImagePlan {
  entries: string[];
  binds: string[];
  links: Array<[target: string, path: string]>;
}

let cached: { etcMtimeMs: number; plan: HostImagePlan } | undefined;

/**
 * The host image's /etc entries as the host has them now. Rescanned when /etc itself changes, so
 * an entry that appears or goes later (a package installed) shows up in the next sandbox.
 */
export function hostImagePlan(): HostImagePlan {
  let etcMtimeMs = -1;
  try {
    etcMtimeMs = lstatSync("/etc").mtimeMs;
  } catch {
    // no /etc: nothing to mount
  }
  if (cached?.etcMtimeMs !== etcMtimeMs) cached = { etcMtimeMs, plan: etcMtimeMs < 0 ? { entries: [], binds: [], links: [] } : scanHostImage() };
  return cached.plan;
}

/** bubblewrap's arguments that bind the host image's entries one by one (`--ro-bind-try`) and recreate its links. */
export function hostImageArguments(): string[] {
  const { entries, binds, links } = hostImagePlan();
  const args: string[] = [];
  for (const path of [...entries, ...binds]) args.push("--ro-bind-try", path, path);
  for (const [target, path] of links) args.push("--symlink", target, path);
  return args;
}

function scanHostImage(): HostImagePlan {
  const entries: string[] = [];
  const binds: string[] = [];
  const candidates: Array<[string, string]> = [];
  for (const { path, bind } of expand("/etc")) {
    let isLink: boolean;
    try {
      isLink = lstatSync(path).isSymbolicLink();
    } catch {
      continue;
    }
    if (!isLink) {
      // Through a linked parent directory the bind would reach past /etc: leave such an entry out.
      if (realOrSelf(path) === path) (bind ? binds : entries).push(path);
      continue;
    }
    try {
      candidates.push([readlinkSync(path), path]);
    } catch {
      // gone since the lstat
    }
  }
  const links: Array<[string, string]> = [];
  for (const [target, path] of candidates) {
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      continue; // dangling on the host: dangling inside too, so leave it out
    }
    if (linkTargetVisible(real, [...entries, ...binds])) links.push([target, path]);
  }
  return { entries, binds, links };
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * /usr/local is part of the host image (tools and Python packages an admin installed by hand)
 * and is seen read-only with the rest of /usr, except the configuration directories above, each
 * hidden by an empty directory.
 */
export function usrLocalArguments(): string[] {
  const args: string[] = [];
  for (const dir of HIDDEN_USR_DIRS) {
    try {
      if (!lstatSync(dir).isDirectory()) continue;
    } catch {
      continue;
    }
    args.push("--tmpfs", dir, "--remount-ro", dir);
  }
  return args;
}
