// Environment variables callers give sandboxed code (per call and per session): the check that
// refuses bad or reserved names, the merge of a session's and a call's, and which values are secret.

import { envSecretValues } from "../config/index.js";
import { SandgateError } from "../errors/index.js";
import { OutputMask, type SecretValue } from "../sandbox/index.js";
import type { UpstreamCallSummary } from "./upstream-call-scope.js";

export type EnvVars = Record<string, string>;

/** Variables one call (its session's and its own together) may carry, and their names and values in bytes. */
export const MAX_ENV_VARS = 64;
export const MAX_ENV_BYTES = 64 * 1024;

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** A UTF-16 surrogate without its pair: no UTF-8 for it, and Python's os.environ refuses it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Names sandgate, the runners or the programs they start rely on. Code may still change them
 * itself (the sandbox is the boundary, not this list); `env` refuses them so that a caller's
 * value cannot quietly break the sandbox's own set-up, and so the answer is a clear error instead.
 * Values are set by the runner in a running interpreter, so variables read only at an
 * interpreter's start (PYTHONPATH, NODE_OPTIONS) would reach only the processes code starts.
 */
const RESERVED: ReadonlyMap<string, string> = new Map([
  // Set by sandgate for every sandbox (src/sandbox/runner-command.ts): sandgate-tool and the
  // package shims are found on PATH; HOME is the workspace (caches, config files).
  ["PATH", "sandgate sets it (sandgate-tool and installed packages are found on it); extend it from your code instead"],
  ["HOME", "sandgate sets it to /workspace"],
  // Bash keeps these itself; some are read-only and an assignment would fail the call.
  ["PWD", "the shell keeps it"],
  ["OLDPWD", "the shell keeps it"],
  ["SHLVL", "the shell keeps it"],
  ["IFS", "the Bash runner splits its input with it"],
  ["SHELLOPTS", "Bash keeps it (read-only)"],
  ["BASHOPTS", "Bash keeps it (read-only)"],
  ["UID", "Bash keeps it (read-only)"],
  ["EUID", "Bash keeps it (read-only)"],
  ["PPID", "Bash keeps it (read-only)"],
  ["GROUPS", "Bash keeps it"],
  ["_", "the shell sets it after every command"],
  // Start-up files every non-interactive bash or POSIX sh would run.
  ["ENV", "sh would run the file it names at every start"],
  // Strings Bash expands, command substitutions included, on its own: PS4 before every command
  // traced by `set -x`, the prompts and PROMPT_COMMAND around every interactive command. Code run
  // from them is code the policy never saw (a blocked payload in PS4 with the code `set -x; true`).
  ["PS0", "Bash runs the command substitutions in it before every interactive command"],
  ["PS1", "Bash runs the command substitutions in it at every prompt"],
  ["PS2", "Bash runs the command substitutions in it at every prompt"],
  ["PS3", "Bash runs the command substitutions in it at every select prompt"],
  ["PS4", "Bash runs the command substitutions in it before every command `set -x` traces"],
  ["PROMPT_COMMAND", "Bash runs it as a command before every prompt"],
  ["POSIXLY_CORRECT", "it switches the Bash runner to POSIX mode"],
  ["TMOUT", "it ends the Bash runner's reads after that many seconds"],
  ["FUNCNEST", "it limits the Bash runner's own function calls"],
  // Where Python finds modules and its start-up hooks: the runner and the installed packages need them as sandgate set them.
  ["PYTHONPATH", "sandgate puts the installed packages and tool wrappers on the module path"],
  ["PYTHONHOME", "it moves the standard library away from every Python the code starts"],
  ["PYTHONSTARTUP", "it is a start-up hook"],
  ["PYTHONUSERBASE", "sandgate decides where user packages go"],
  ["PYTHONNOUSERSITE", "sandgate decides where user packages go"],
  ["PYTHONSAFEPATH", "it changes which modules every Python the code starts finds"],
  ["PYTHONPLATLIBDIR", "it moves the standard library away from every Python the code starts"],
  ["PYTHONEXECUTABLE", "it changes what sys.executable names"],
  ["PYTHONINSPECT", "every Python the code starts would wait for input after its script"],
  ["PYTHONWARNINGS", "every Python the code starts imports the modules named in its categories"],
  ["PYTHONBREAKPOINT", "breakpoint() imports and calls what it names"],
  ["PYTHONPYCACHEPREFIX", "it changes where every Python the code starts loads compiled modules from"],
  ["NODE_OPTIONS", "it holds the runner's memory flags and would inject code into every node the code starts"],
  ["NODE_PATH", "sandgate puts the installed packages on it"],
  ["NODE_REPL_EXTERNAL_MODULE", "node loads the module it names in place of its REPL"],
  ["NODE_PRESERVE_SYMLINKS", "it changes which modules every node the code starts finds"],
  ["NODE_PRESERVE_SYMLINKS_MAIN", "it changes which modules every node the code starts finds"],
  // The same for the other interpreters of the image: options and module paths that load code.
  ["PERL5OPT", "every perl the code starts takes its options (-M loads a module)"],
  ["PERL5LIB", "it changes which modules every perl the code starts loads"],
  ["PERLLIB", "it changes which modules every perl the code starts loads"],
  ["PERL5DB", "perl -d runs it as code"],
  ["RUBYOPT", "every ruby the code starts takes its options (-r loads a library)"],
  ["RUBYLIB", "it changes which libraries every ruby the code starts loads"],
  // Set for every sandbox (runner-command.ts) so that an install getting past the shims fails at
  // once: sandboxes have no network, and without them pip and npm retry until the time limit.
  ["PIP_NO_INDEX", "sandgate sets it: sandboxes have no network, and pip would retry the index until the time limit"],
  ["npm_config_offline", "sandgate sets it: sandboxes have no network, and npm would retry the registry until the time limit"],
  ["NPM_CONFIG_OFFLINE", "sandgate sets npm_config_offline: sandboxes have no network, and npm would retry the registry until the time limit"],
  ["GLIBC_TUNABLES", "the C library reads it in every process"],
  ["GCONV_PATH", "the C library loads code from where it points"],
]);

/** Families of reserved names, by prefix. */
const RESERVED_PREFIXES: ReadonlyArray<[string, string]> = [
  ["LD_", "the dynamic linker reads it in every process the code starts (LD_PRELOAD, LD_LIBRARY_PATH)"],
  ["SANDGATE_", "sandgate's own variables (sandgate-tool finds its pipes in one)"],
  ["BASH", "Bash runs what it names (BASH_ENV, BASH_FUNC_*), reads it at start-up (BASHOPTS) or keeps it itself (BASHPID, BASH_ARGV0)"],
  ["__", "names starting with __ are the runners' own (the Bash runner's __sg_*, JavaScript's __proto__)"],
];

/** The reserved names for display: exact names, then prefixes as `LD_*`. */
export function reservedEnvNames(): string[] {
  return [...RESERVED.keys(), ...RESERVED_PREFIXES.map(([prefix]) => `${prefix}*`)];
}

/** Why `name` cannot be set through `env`, or undefined when it can. */
export function reservedReason(name: string): string | undefined {
  const exact = RESERVED.get(name);
  if (exact) return exact;
  const upper = name.toUpperCase();
  return RESERVED_PREFIXES.find(([prefix]) => upper.startsWith(prefix))?.[1];
}

/**
 * Checks variables given as `field` ("env", "session_env"): an object of names to strings, names
 * of letters, digits and `_` not reserved, no NUL, within the bounds. Errors name the variable,
 * never its value (they reach logs).
 */
export function checkEnv(env: unknown, field: string): EnvVars {
  const fail = (message: string, name?: string): never => {
    throw new SandgateError("INVALID_INPUT", `${field}: ${message}`, { data: { field: name === undefined ? field : `${field}.${name}` } });
  };
  if (typeof env !== "object" || env === null || Array.isArray(env)) return fail("must be an object of variable names to string values");
  const entries = Object.entries(env as Record<string, unknown>);
  if (entries.length > MAX_ENV_VARS) fail(`${entries.length} variables, more than the ${MAX_ENV_VARS} allowed`);
  let bytes = 0;
  entries.forEach(([name, value], i) => {
    if (!NAME.test(name)) fail(`variable #${i + 1} has a name that is not 1-128 letters, digits or _ starting with a letter or _`);
    const reserved = reservedReason(name);
    if (reserved) fail(`${name} cannot be set: ${reserved}`, name);
    if (typeof value !== "string") fail(`${name} must be a string`, name);
    if ((value as string).includes("\u0000")) fail(`${name} must not contain NUL bytes`, name);
    if (LONE_SURROGATE.test(value as string)) fail(`${name} must be valid Unicode text (it holds a lone surrogate)`, name);
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value as string);
  });
  if (bytes > MAX_ENV_BYTES) fail(`names and values take ${bytes} bytes, more than the ${MAX_ENV_BYTES} allowed`);
  return Object.fromEntries(entries) as EnvVars;
}

/** A call's variables: its session's, then its own on top; within the same bounds as each. */
function mergeEnv(session: EnvVars | undefined, call: EnvVars | undefined): EnvVars | undefined {
  if (!session || Object.keys(session).length === 0) return call && Object.keys(call).length > 0 ? call : undefined;
  if (!call || Object.keys(call).length === 0) return session;
  return checkEnv({ ...session, ...call }, "env (with the session's)");
}

/**
 * The values masked in a call's results: whole values of secret-looking names, and secrets
 * inside other values (a URL's password, a known token shape). Only literal values are found:
 * code that prints a secret base64- or hex-encoded, reversed or split is not caught.
 */
export function envSecrets(env: EnvVars | undefined): SecretValue[] {
  if (!env) return [];
  return Object.entries(env).flatMap(([name, value]) => [...new Set(envSecretValues(name, value))].map((secret) => ({ name, value: secret })));
}

/** Secret values a session remembers, and their characters together; beyond either the oldest are forgotten (every output is searched for all of them). */
const MAX_SESSION_SECRETS = 256;
const MAX_SESSION_SECRET_CHARS = 256 * 1024;

/**
 * A session's variables (set when it is created, or by a call's session_env) and every secret
 * value given to it so far, by either: code may keep a call's secret in a variable or a file and
 * print it in a later call, so the session's later results are masked for it too.
 */
export class SessionEnv {
  private current: EnvVars = {};
  /** Secret value -> its variable's name, oldest first. */
  private readonly known = new Map<string, string>();

  get vars(): EnvVars {
    return this.current;
  }

  get names(): string[] {
    return Object.keys(this.current);
  }

  /** Replaces the session's variables (checked by checkEnv). */
  set(vars: EnvVars): void {
    this.current = { ...vars };
    this.remember(envSecrets(vars));
  }

  remember(secrets: readonly SecretValue[]): void {
    for (const { name, value } of secrets) {
      this.known.delete(value);
      this.known.set(value, name);
    }
    let chars = 0;
    for (const value of this.known.keys()) chars += value.length;
    for (const oldest of this.known.keys()) {
      if (this.known.size <= MAX_SESSION_SECRETS && chars <= MAX_SESSION_SECRET_CHARS) break;
      this.known.delete(oldest);
      chars -= oldest.length;
    }
  }

  get secrets(): SecretValue[] {
    return [...this.known].map(([value, name]) => ({ name, value }));
  }
}

/** What a run gets of the variables: those the runner sets for the call, and the values masked in its results. */
export interface RunEnv {
  env?: EnvVars;
  secrets?: SecretValue[];
}

function runEnv(env: EnvVars | undefined, secrets: SecretValue[]): RunEnv {
  return { ...(env ? { env } : {}), ...(secrets.length > 0 ? { secrets } : {}) };
}

/** A stateless call's variables: its own. */
export function callRunEnv(call: EnvVars | undefined): RunEnv {
  return runEnv(call && Object.keys(call).length > 0 ? call : undefined, envSecrets(call));
}

/**
 * A session call's variables: the session's (replaced first by `sessionEnv` when given), then the
 * call's own on top. Throws INVALID_INPUT, changing nothing, when together they are over the bounds.
 */
export function sessionRunEnv(session: SessionEnv, call: EnvVars | undefined, sessionEnv: EnvVars | undefined): RunEnv {
  const merged = mergeEnv(sessionEnv ?? session.vars, call);
  if (sessionEnv) session.set(sessionEnv);
  // The session's own secrets are remembered again as the newest: other calls' secrets never push them out.
  else session.remember(envSecrets(session.vars));
  session.remember(envSecrets(call));
  return runEnv(merged, session.secrets);
}

/** `summary` with the secrets masked in what code or upstream servers put there: tool ids and errors. */
export function maskToolCalls(summary: UpstreamCallSummary | undefined, secrets: readonly SecretValue[] | undefined): UpstreamCallSummary | undefined {
  const mask = OutputMask.of(secrets);
  if (!summary || !mask) return summary;
  return { ...summary, calls: summary.calls.map((c) => ({ ...c, tool: mask.text(c.tool), ...(c.error === undefined ? {} : { error: mask.text(c.error) }) })) };
}
