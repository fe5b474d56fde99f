// Secrets in the configuration, masked for display (`sandgate config --print`, logs, status):
// env and header values, and what an upstream's args or URL carry (flag values, tokens, query).

import type { SandgateConfig, UpstreamServerConfig } from "./schema.js";

export const SECRET_MASK = "********";

/** Secret values shorter than this are not masked in free text: masking every "1" or "on" hides more than it protects. */
const MIN_SECRET_LENGTH = 4;

/** Words that make a flag, a `KEY=value` key or a query parameter name a secret. */
const SECRET_WORDS = new Set([
  "token", "secret", "password", "passwd", "passphrase", "pwd", "pass", "apikey", "auth", "authorization",
  "bearer", "credential", "credentials", "cookie", "pat", "sig", "signature", "jwt", "privatekey", "accesskey", "dsn",
  // Plurals, and well-known names written as one word (libpq's PGPASSWORD).
  "secrets", "passwords", "pgpassword",
]);
/** A flag named like a secret but followed by where the secret is, not the secret itself. */
const LOCATION_WORDS = new Set(["file", "path", "dir", "directory", "url", "uri", "endpoint", "host", "env", "var", "type", "mode", "method", "scheme"]);

/** Prefixes and shapes of well-known credentials. */
const CREDENTIAL_PATTERNS = [
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bglpat-[A-Za-z0-9_-]{20,}/g,
  /\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{16,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /\b(?:Bearer|Basic|Token)\s+([A-Za-z0-9._~+/=-]{8,})/g,
];

/** Words of a name: `--api-key` → api, key (and the joined "apikey"); `GITHUB_TOKEN` → github, token. */
function nameWords(name: string): string[] {
  const words = name
    .replace(/^-+/, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  const joined = words.slice(1).map((w, i) => `${words[i]!}${w}`);
  return [...words, ...joined];
}

/** True for a flag, env-style key or query parameter name that holds a secret (`--token`, `API_KEY`, `access_token`). */
function isSecretName(name: string): boolean {
  const words = nameWords(name);
  if (words.length === 0) return false;
  const last = name.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean).at(-1) ?? "";
  if (LOCATION_WORDS.has(last)) return false;
  return words.some((w) => SECRET_WORDS.has(w)) || /(?:^|[-_])key$/i.test(name.replace(/^-+/, ""));
}

function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / text.length) * Math.log2(n / text.length);
  return bits;
}

/**
 * A whole value that looks like a random token: no path or URL punctuation, and one part (between
 * `-`, `_`, `.`) of 20+ characters mixing letters and digits with high entropy. Words joined by
 * dashes, paths, package names and UUIDs are not.
 */
function looksRandom(value: string): boolean {
  if (!/^[A-Za-z0-9_+=.~-]{20,}$/.test(value)) return false;
  return value.split(/[-_.]/).some((part) => part.length >= 20 && /[A-Za-z]/.test(part) && /[0-9]/.test(part) && entropy(part) >= 3.5);
}

/** Credentials found inside `text` by their known shapes (the token itself, without a `Bearer ` prefix). */
function credentialsIn(text: string): string[] {
  const found: string[] = [];
  for (const pattern of CREDENTIAL_PATTERNS) {
    for (const match of text.matchAll(pattern)) found.push(match[1] ?? match[0]);
  }
  return found;
}

interface UrlParts {
  /** The URL for display: no userinfo, every query value and the fragment masked. */
  display: string;
  secrets: string[];
}

function splitUrl(raw: string): UrlParts | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (!/^[a-z][a-z0-9+.-]*:$/.test(url.protocol) || url.host === "") return undefined;
  const secrets: string[] = [];
  // With a password the user name is just a name; alone it is the credential (https://TOKEN@host).
  for (const part of url.password === "" ? [url.username] : [url.password]) if (part !== "") secrets.push(part, safeDecode(part));
  url.username = "";
  url.password = "";
  const params = [...url.searchParams];
  for (const [key, value] of params) {
    if (value !== "" && (isSecretName(key) || credentialsIn(value).length > 0 || looksRandom(value))) secrets.push(value, encodeURIComponent(value));
  }
  if (url.hash.length > 1) secrets.push(url.hash.slice(1), safeDecode(url.hash.slice(1)));
  const query = params.map(([key]) => `${encodeURIComponent(key)}=${SECRET_MASK}`).join("&");
  const display = `${url.protocol}//${url.host}${url.pathname}${query ? `?${query}` : ""}${url.hash.length > 1 ? `#${SECRET_MASK}` : ""}`;
  return { display, secrets };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;

/** A URL safe to show: no userinfo, query values and fragment masked; "(invalid url)" when it does not parse. */
export function maskUrl(url: string): string {
  return splitUrl(url)?.display ?? "(invalid url)";
}

/** One argument with the secrets it carries masked, and those secrets. */
function scanArg(arg: string, previous: string | undefined): { shown: string; secrets: string[] } {
  if (previous !== undefined && /^--?[A-Za-z]/.test(previous) && !previous.includes("=") && isSecretName(previous) && !/^--[A-Za-z]/.test(arg)) {
    return { shown: SECRET_MASK, secrets: [arg] };
  }
  const assignment = /^(--?[A-Za-z][A-Za-z0-9_.-]*|[A-Za-z_][A-Za-z0-9_.-]*)=([\s\S]*)$/.exec(arg);
  if (assignment && isSecretName(assignment[1]!) && assignment[2] !== "") {
    return { shown: `${assignment[1]!}=${SECRET_MASK}`, secrets: [assignment[2]!] };
  }
  const secrets: string[] = [];
  let shown = arg.replace(URL_IN_TEXT, (url) => {
    const parts = splitUrl(url);
    if (!parts) return url;
    secrets.push(...parts.secrets);
    return parts.display;
  });
  const credentials = looksRandom(shown) ? [shown] : credentialsIn(shown);
  secrets.push(...credentials);
  for (const secret of credentials) shown = shown.split(secret).join(SECRET_MASK);
  return { shown, secrets };
}

/**
 * The secrets an environment variable given to sandboxed code carries: its whole value when its
 * name says it is one (`API_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`), else what the value itself
 * holds (a URL's password or token query, a known token shape such as `ghp_...`).
 */
export function envSecretValues(name: string, value: string): string[] {
  if (isSecretName(name)) return [value];
  return scanArg(value, undefined).secrets;
}

/** The args of a stdio server for display, and the secret values found in them. */
function scanArgs(args: readonly string[]): { shown: string[]; secrets: string[] } {
  const shown: string[] = [];
  const secrets: string[] = [];
  args.forEach((arg, i) => {
    const scanned = scanArg(arg, args[i - 1]);
    shown.push(scanned.shown);
    secrets.push(...scanned.secrets);
  });
  return { shown, secrets };
}

/** A copy of `config` that is safe to print: every secret value replaced by a mask. */
export function maskSecrets(config: SandgateConfig): SandgateConfig {
  return {
    ...config,
    server: { ...config.server, ...(config.server.apiKey === undefined ? {} : { apiKey: SECRET_MASK }), apiKeys: maskValues(config.server.apiKeys) },
    mcpServers: Object.fromEntries(Object.entries(config.mcpServers).map(([name, server]) => [name, maskServer(server)])),
  };
}

function maskServer(server: UpstreamServerConfig): UpstreamServerConfig {
  if ("command" in server) return { ...server, args: scanArgs(server.args).shown, env: maskValues(server.env) };
  return { ...server, url: maskUrl(server.url), headers: maskValues(server.headers) };
}

/** The secret values of one upstream server: env and header values, and what its args or URL carry. */
export function serverSecretValues(server: UpstreamServerConfig): string[] {
  if ("command" in server) return [...Object.values(server.env), ...scanArgs(server.args).secrets];
  return [...Object.values(server.headers), ...(splitUrl(server.url)?.secrets ?? [])];
}

/**
 * The secret values of every upstream server, longest first so that one containing another is
 * masked whole; values under 4 characters are left out.
 */
export function upstreamSecretValues(config: SandgateConfig): string[] {
  return secretList(Object.values(config.mcpServers).flatMap(serverSecretValues));
}

/** Distinct values of at least 4 characters, longest first. */
export function secretList(values: Iterable<string>): string[] {
  return [...new Set(values)].filter((value) => value.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
}

/** `text` with every value of `secrets` (as from secretList) replaced by the mask. */
export function maskText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(SECRET_MASK);
  return out;
}

function maskValues(map: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(map).map((key) => [key, SECRET_MASK]));
}
