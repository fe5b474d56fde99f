// The logger of one-shot CLI commands (doctor, tools): what the library logs reaches the admin's
// terminal as one readable line ("sandgate: warn: ..."), not the JSON lines `serve` writes for machines.

import type { Writable } from "node:stream";
import { pino } from "pino";
import type { Logger } from "../util/logger.js";

const LEVELS: Record<number, string> = { 10: "trace", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal" };

/** One pino JSON line as a line for people: level, message, then the error's message or the upstream it names. */
export function readableLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return `sandgate: ${json.trim()}`;
  }
  const level = LEVELS[Number(entry.level)] ?? "log";
  const err = entry.err as { message?: unknown } | string | undefined;
  const details = [
    typeof entry.server === "string" ? `server ${entry.server}` : undefined,
    typeof err === "string" ? err : typeof err?.message === "string" ? err.message : typeof entry.error === "string" ? entry.error : undefined,
  ].filter((d): d is string => d !== undefined);
  // Control characters from an upstream's message would drive the terminal: shown escaped.
  const msg = typeof entry.msg === "string" ? entry.msg : "";
  // eslint-disable-next-line no-control-regex -- these are the characters to escape
  const text = `${msg}${details.length > 0 ? ` (${details.join("; ")})` : ""}`.replace(/[\u0000-\u001f\u007f-\u009f]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, "0")}`);
  return `sandgate: ${level}: ${text}`;
}

/** Warnings and errors (or `level`, when lower) as readable lines on `stderr` (the command's). */
export function createCliLogger(stderr: Writable, level = "info"): Logger {
  const shown = level === "debug" || level === "trace" ? level : "warn";
  return pino({ level: shown }, { write: (line: string) => void stderr.write(`${readableLine(line)}\n`) });
}
