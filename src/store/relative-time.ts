// Times as the audit query takes them: ISO 8601, or a span back from now ("90s", "15m", "1h", "7d", "2w").

import { SandgateError } from "../errors/index.js";

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Milliseconds since the epoch of `text`, relative spans counted back from `now`. */
export function parseTimeBound(text: string, field: string, now = Date.now()): number {
  const relative = /^(\d+(?:\.\d+)?)\s*([smhdw])$/.exec(text.trim());
  if (relative) return now - Number(relative[1]) * (UNIT_MS[relative[2] ?? "s"] ?? 1000);
  // Date-only and full ISO 8601 forms; Date.parse alone would also take "1" or "May 5".
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text.trim())) {
    const ms = Date.parse(text.trim());
    if (Number.isFinite(ms)) return ms;
  }
  throw new SandgateError("INVALID_INPUT", `${field} ${JSON.stringify(text)} is neither an ISO 8601 time nor a span like 30m, 1h, 7d`, { data: { field } });
}
