// What a client may see of a failure: SandgateErrors with host paths replaced by what the
// sandbox calls them, anything else as INTERNAL with a reference id (the detail goes to the log).

import { randomBytes } from "node:crypto";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { SandgateError } from "./sandgate-error.js";

/** A host directory and the name clients see instead; `perEntry` also hides the next path segment (a workspace's id). */
export interface HostPathAlias {
  hostPath: string;
  shownAs: string;
  perEntry?: boolean;
}

interface Registered extends HostPathAlias {
  refs: number;
}

const aliases = new Map<string, Registered>();
let pattern: RegExp | undefined;

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function rebuild(): void {
  // Longest first, so a workspace inside the sandbox directory wins over the directory.
  const paths = [...aliases.keys()].sort((a, b) => b.length - a.length);
  pattern = paths.length === 0 ? undefined : new RegExp(`(${paths.map(escape).join("|")})(/[^/\\s'"\`:,;)\\]]+)?(?=[/\\s'"\`),:;\\]]|$)`, "g");
}

function variants(path: string): string[] {
  const trimmed = path.replace(/\/+$/, "");
  const out = [trimmed];
  try {
    const real = realpathSync(trimmed);
    if (real !== trimmed) out.push(real);
  } catch {
    // not there (yet): the name as given is all there is to hide
  }
  // "/" or a one-letter root would hide every path in a message, not just the host's.
  return out.filter((p) => p.length > 1);
}

/** Where sandgate itself is installed (src/errors or dist/errors, two levels down). */
const PACKAGE_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Makes scrubHostPaths replace these host directories (and their real paths) wherever they
 * appear. Returns the function that takes them back; each registration is counted.
 */
export function registerHostPaths(list: HostPathAlias[]): () => void {
  const added: string[] = [];
  for (const alias of list) {
    for (const path of variants(alias.hostPath)) {
      const existing = aliases.get(path);
      if (existing) existing.refs++;
      else aliases.set(path, { ...alias, hostPath: path, refs: 1 });
      added.push(path);
    }
  }
  rebuild();
  let done = false;
  return () => {
    if (done) return;
    done = true;
    for (const path of added) {
      const entry = aliases.get(path);
      if (entry && --entry.refs <= 0) aliases.delete(path);
    }
    rebuild();
  };
}

/** `text` with every registered host directory replaced by what clients may see. */
export function scrubHostPaths(text: string): string {
  if (!pattern) return text;
  return text.replace(pattern, (_match, root: string, next: string | undefined) => {
    const alias = aliases.get(root);
    if (!alias) return "<host path>";
    if (alias.perEntry) return alias.shownAs;
    return `${alias.shownAs}${next ?? ""}`;
  });
}

function scrubValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return scrubHostPaths(value);
  if (depth > 8 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubValue(v, depth + 1)]));
}

registerHostPaths([{ hostPath: PACKAGE_ROOT, shownAs: "<sandgate>" }]);

export interface ErrorLog {
  error(detail: Record<string, unknown>, message: string): void;
}

/**
 * The error as it may leave the server. A SandgateError keeps its code with host paths
 * scrubbed from message and data; anything else is logged in full and becomes INTERNAL
 * with a short reference that finds the log line.
 */
export function publicError(error: unknown, log?: ErrorLog): SandgateError {
  if (error instanceof SandgateError) {
    const message = scrubHostPaths(error.message);
    const data = scrubValue(error.data) as Record<string, unknown>;
    if (message === error.message && JSON.stringify(data) === JSON.stringify(error.data)) return error;
    return new SandgateError(error.code, message, { data, cause: error });
  }
  const ref = randomBytes(4).toString("hex");
  log?.error({ err: error, ref }, "unexpected error while handling a request");
  return new SandgateError("INTERNAL", `internal error (reference ${ref}); the server log has the details`, { data: { ref } });
}
