// Output shaping to a token budget: a JSON document keeps its structure and stays valid (long
// arrays, strings and objects summarized in place); other text keeps its first and last lines.

import { countTokens, estimateTokens, jsonText, safeCut } from "./tokens.js";

export interface ShapeOptions {
  budgetTokens: number;
}

export interface ShapedText {
  text: string;
  truncated: boolean;
  tokens: number;
  /** Exact up to 256 Ki characters, else a sampled estimate unless near the budget (note says "about"). */
  originalTokens: number;
  /** What was cut, for the caller to complete with where the full output is kept. */
  note?: string;
}

export interface ShapedValue {
  value: unknown;
  truncated: boolean;
  tokens: number;
  originalTokens: number;
  note?: string;
}

/** Limits on a JSON value, loosest first; the loosest level whose rendering fits is used. */
interface Level {
  items: number;
  tail: number;
  chars: number;
  keys: number;
  depth: number;
}
const level = (items: number, tail: number, chars: number, keys: number, depth: number): Level =>
  ({ items, tail, chars, keys, depth });
/** 27 levels, each keeping about 72% of the previous one's items, keys and string length. */
const LEVELS: readonly Level[] = Array.from({ length: 27 }, (_, k) => {
  const items = Math.floor(2000 * 0.72 ** k);
  const tail = items >= 20 ? 2 : items >= 2 ? 1 : 0;
  return level(items, tail, Math.floor(32_000 * 0.72 ** k), items, Math.max(0, 26 - k));
});

const UNLIMITED = level(Infinity, 0, Infinity, Infinity, Infinity);
const newStats = () => ({ arrays: 0, longest: 0, strings: 0, objects: 0, capped: 0 });
type Stats = ReturnType<typeof newStats>;
const HEAD_SHARE = 0.7;
const fmt = (n: number): string => n.toLocaleString("en-US");
const plural = (n: number, word: string): string => `${fmt(n)} ${word}${n === 1 ? "" : "s"}`;

function budgetOf(options: ShapeOptions): number {
  const budget = Number(options.budgetTokens);
  return Number.isNaN(budget) ? 0 : Math.max(0, Math.floor(budget));
}

/** Fits `text` into the budget; never throws. */
export function shapeText(text: string, options: ShapeOptions): ShapedText {
  const budget = budgetOf(options);
  let original = { tokens: 0, exact: true };
  try {
    original = estimateTokens(text);
    if (!original.exact && original.tokens <= budget * 2) original = { tokens: countTokens(text), exact: true };
    const originalTokens = original.tokens;
    if (originalTokens <= budget) return { text, truncated: false, tokens: originalTokens, originalTokens };
    const json = parseJsonDocument(text);
    if (json) {
      const fitted = fitJson(json.value, budget, json.indent, originalTokens / text.length);
      return { text: fitted.text, truncated: true, tokens: fitted.tokens, originalTokens, note: jsonNote(original, fitted) };
    }
    return cutText(text, budget, original);
  } catch (error) {
    const marker = `… output of ${fmt(text.length)} characters could not be shortened: ${String(error)} …`;
    const out = parseJsonDocument(text) ? JSON.stringify(marker) : marker;
    return { text: out, truncated: true, tokens: safeCount(out), originalTokens: original.tokens, note: marker.slice(2, -2) };
  }
}

/** Fits a value's JSON into the budget; a string is shaped as text. Never throws. */
export function shapeValue(value: unknown, options: ShapeOptions): ShapedValue {
  if (typeof value === "string") {
    const { text, ...rest } = shapeText(value, options);
    return { value: text, ...rest };
  }
  const budget = budgetOf(options);
  let originalTokens = 0;
  try {
    const text = jsonText(value) ?? jsonText(shapeNode(value, 0, UNLIMITED, newStats(), [])) ?? "";
    let original = estimateTokens(text);
    if (!original.exact && original.tokens <= budget * 2) original = { tokens: countTokens(text), exact: true };
    originalTokens = original.tokens;
    if (original.tokens <= budget) return { value, truncated: false, tokens: original.tokens, originalTokens };
    const fitted = fitJson(value, budget, undefined, original.tokens / Math.max(1, text.length));
    return { value: fitted.value, truncated: true, tokens: fitted.tokens, originalTokens, note: jsonNote(original, fitted) };
  } catch (error) {
    const marker = `… value could not be shortened: ${String(error)} …`;
    return { value: marker, truncated: true, tokens: safeCount(marker), originalTokens, note: marker.slice(2, -2) };
  }
}

function safeCount(text: string): number {
  try {
    return countTokens(text);
  } catch {
    return Math.ceil(text.length / 2);
  }
}

/** The whole text as one JSON object, array or string, and the indent it was printed with. */
function parseJsonDocument(text: string): { value: unknown; indent: string | undefined } | undefined {
  const first = /\S/.exec(text.slice(0, 1024))?.[0];
  const last = /\S\s*$/.exec(text.slice(-1024))?.[0][0];
  const pair = `${first}${last}`;
  if (pair !== "{}" && pair !== "[]" && pair !== '""') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return { value, indent: /^\s*[[{]\r?\n([ \t]{1,10})\S/.exec(text.slice(0, 1024))?.[1] };
}

interface Fitted {
  value: unknown;
  text: string;
  tokens: number;
  stats: Stats;
}

/** Binary search over LEVELS; renderings far over budget by a chars estimate are not counted. */
function fitJson(value: unknown, budget: number, indent: string | undefined, tokensPerChar: number): Fitted {
  const rendered = new Map<number, Fitted & { counted: boolean }>();
  const render = (index: number): Fitted & { counted: boolean } => {
    let found = rendered.get(index);
    if (!found) {
      const stats = newStats();
      const shaped = shapeNode(value, 0, LEVELS[index] ?? UNLIMITED, stats, []);
      found = { value: shaped, text: jsonText(shaped, indent) ?? "null", tokens: 0, stats, counted: false };
      rendered.set(index, found);
    }
    return found;
  };
  const fits = (index: number): boolean => {
    const candidate = render(index);
    if (candidate.text.length * tokensPerChar > budget * 2) return false;
    if (!candidate.counted) [candidate.tokens, candidate.counted] = [countTokens(candidate.text), true];
    return candidate.tokens <= budget;
  };
  let low = 0;
  let high = LEVELS.length - 1;
  if (fits(high)) {
    while (low < high) {
      const middle = (low + high) >> 1;
      if (fits(middle)) high = middle;
      else low = middle + 1;
    }
  }
  const chosen = render(high);
  if (!chosen.counted) chosen.tokens = countTokens(chosen.text);
  return chosen;
}

function jsonable(value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "function" || typeof value === "symbol") return undefined;
  try {
    if (typeof value === "object" && value !== null && "toJSON" in value && typeof value.toJSON === "function") {
      return (value.toJSON as () => unknown).call(value);
    }
  } catch {
    return "[unserializable]";
  }
  return value;
}

function read(container: object, key: string | number): unknown {
  try {
    return (container as Record<string | number, unknown>)[key];
  } catch {
    return "[unreadable]";
  }
}

function shapeNode(input: unknown, depth: number, lv: Level, stats: Stats, path: object[]): unknown {
  const value = jsonable(input);
  if (typeof value === "string") return cutString(value, lv.chars, stats);
  if (typeof value !== "object" || value === null) return value;
  if (path.includes(value)) return "[Circular]";
  const items = Array.isArray(value) ? value.length : 0;
  const keys = Array.isArray(value) ? [] : Object.keys(value);
  if (depth >= lv.depth) {
    stats.capped += 1;
    return Array.isArray(value) ? `[… ${plural(items, "item")} …]` : `{… ${plural(keys.length, "key")} …}`;
  }
  path.push(value);
  try {
    if (Array.isArray(value)) {
      const whole = items <= lv.items + lv.tail + 1;
      const head = whole ? items : lv.items;
      const shapeItem = (i: number): unknown => shapeNode(read(value, i), depth + 1, lv, stats, path) ?? null;
      const out: unknown[] = [];
      for (let i = 0; i < head; i++) out.push(shapeItem(i));
      if (whole) return out;
      stats.arrays += 1;
      stats.longest = Math.max(stats.longest, items);
      const cut = items - lv.items - lv.tail;
      out.push(head + lv.tail === 0 ? `… ${plural(items, "item")} …` : `… ${fmt(cut)} more items (of ${fmt(items)}) …`);
      for (let i = items - lv.tail; i < items; i++) out.push(shapeItem(i));
      return out;
    }
    const kept = keys.length <= lv.keys + 1 ? keys : keys.slice(0, lv.keys);
    const out: Record<string, unknown> = {};
    for (const key of kept) {
      const shaped = shapeNode(read(value, key), depth + 1, lv, stats, path);
      // defineProperty, because assigning a "__proto__" key would replace the prototype instead.
      if (shaped === undefined) continue;
      Object.defineProperty(out, key, { value: shaped, enumerable: true, writable: true, configurable: true });
    }
    if (kept.length < keys.length) {
      stats.objects += 1;
      const markerKey = Object.hasOwn(out, "…") ? "… (more)" : "…";
      out[markerKey] = `… ${fmt(keys.length - kept.length)} more keys (of ${fmt(keys.length)}) …`;
    }
    return out;
  } finally {
    path.pop();
  }
}

function cutString(text: string, keep: number, stats: Stats): string {
  const cut = text.length - keep;
  const marker = keep === 0 ? `… ${plural(text.length, "character")} …` : `… [${fmt(cut)} characters cut] …`;
  if (text.length <= keep + marker.length) return text;
  stats.strings += 1;
  if (keep === 0) return marker;
  const headEnd = safeCut(text, Math.ceil(keep * 0.6));
  return text.slice(0, headEnd) + marker + text.slice(safeCut(text, text.length - (keep - headEnd)));
}

function jsonNote(original: { tokens: number; exact: boolean }, fitted: Fitted): string {
  const { arrays, longest, strings, objects, capped } = fitted.stats;
  const parts = [
    arrays > 0 ? `${plural(arrays, "array")} shortened (the longest had ${fmt(longest)} items)` : "",
    strings > 0 ? `${plural(strings, "long string")} cut in the middle` : "",
    objects > 0 ? `${plural(objects, "object")} cut to their first keys` : "",
    capped > 0 ? `${plural(capped, "nested value")} past the depth limit summarized` : "",
  ].filter(Boolean);
  const from = `${original.exact ? "" : "about "}${fmt(original.tokens)}`;
  const what = parts.length > 0 ? `: ${parts.join(", ")}` : "";
  return `output shortened from ${from} to ${fmt(fitted.tokens)} tokens, still valid JSON${what}`;
}

/**
 * Where to cut so that the head (or, from the end, the tail) is about `budget` tokens, summing
 * counts of slices that each aim at 90% of what is left, sized by the text's chars per token.
 */
function cutPoint(text: Text, budget: number, charsPerToken: number, fromEnd: boolean, limit: number): number {
  let at = fromEnd ? text.length : 0;
  let used = 0;
  const aim = (left: number): number => Math.max(1, Math.floor(left * charsPerToken * 0.9));
  const move = (by: number): number => (fromEnd ? Math.max(limit, at - by) : Math.min(limit, at + by));
  for (let step = aim(budget); step >= 1 && at !== limit && used < budget; ) {
    let next = safeCut(text, move(step));
    if (next === at) next = move(2);
    const tokens = countTokens(fromEnd ? text.slice(next, at) : text.slice(at, next));
    if (used + tokens <= budget) [at, used, step] = [next, used + tokens, aim(budget - used - tokens)];
    else step = Math.floor(step / 2);
  }
  return at;
}

function countNewlines(text: Text, from: number, to: number): number {
  if (typeof text !== "string") return text.newlines(from, to);
  let count = 0;
  for (let i = text.indexOf("\n", from); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) count += 1;
  return count;
}

/**
 * A text longer than the budget as cutText reads it: a string, or a long output of which only the
 * head and the tail are decoded (long-output.ts). Slices and searches stay inside those two; the
 * lines between them are counted ahead.
 */
export interface TextWindows {
  readonly length: number;
  /** Characters decoded from the start: a head is cut within them. */
  readonly headChars: number;
  /** Where the decoded tail starts: a tail is cut from there on. */
  readonly tailFrom: number;
  slice(start: number, end?: number): string;
  charCodeAt(index: number): number;
  indexOf(char: string, position: number): number;
  lastIndexOf(char: string, position: number): number;
  /** Line ends in [from, to). */
  newlines(from: number, to: number): number;
}
type Text = string | TextWindows;

/** Head and tail around a marker line, on line boundaries unless that would lose 30% of either. */
export function cutText(text: Text, budget: number, original: { tokens: number; exact: boolean }): ShapedText {
  const headLimit = typeof text === "string" ? text.length : text.headChars;
  const tailLimit = (headEnd: number): number => (typeof text === "string" ? headEnd : Math.max(headEnd, text.tailFrom));
  const charsPerToken = Math.min(16, text.length / Math.max(1, original.tokens));
  let reserve = 24;
  for (let attempt = 0; ; attempt++) {
    const available = Math.max(0, budget - reserve);
    const headBudget = Math.floor(available * HEAD_SHARE);
    let headEnd = cutPoint(text, headBudget, charsPerToken, false, headLimit);
    const newline = text.lastIndexOf("\n", headEnd - 1);
    const space = text.lastIndexOf(" ", headEnd - 1);
    if (headEnd < text.length && newline >= 0 && newline + 1 >= headEnd * 0.7) headEnd = newline + 1;
    else if (headEnd < text.length && space > 0 && space >= headEnd - 64) headEnd = space;
    let tailStart = cutPoint(text, available - headBudget, charsPerToken, true, tailLimit(headEnd));
    const lineStart = text.indexOf("\n", tailStart - 1) + 1;
    const wordStart = text.indexOf(" ", tailStart - 1) + 1;
    if (lineStart > 0 && lineStart < text.length && lineStart - tailStart <= 0.3 * (text.length - tailStart)) {
      tailStart = lineStart;
    } else if (wordStart > 0 && wordStart < text.length && wordStart - tailStart <= 64) tailStart = wordStart;
    const head = text.slice(0, headEnd);
    const tail = text.slice(tailStart);
    const atLineStart = (index: number): boolean => index === 0 || index === text.length || text.charCodeAt(index - 1) === 10;
    const byLines = atLineStart(headEnd) && atLineStart(tailStart);
    const cutLines = countNewlines(text, headEnd, tailStart);
    const cutTokens = Math.max(0, original.tokens - countTokens(head) - countTokens(tail));
    const about = original.exact ? "" : "about ";
    const what = byLines && cutLines > 0 ? plural(cutLines, "line") : plural(tailStart - headEnd, "character");
    const marker = `… ${what} (${about}${plural(cutTokens, "token")}) cut …`;
    const shaped = `${head}${head === "" || head.endsWith("\n") ? "" : "\n"}${marker}${tail === "" ? "" : "\n"}${tail}`;
    const tokens = countTokens(shaped);
    if (tokens > budget && available > 0 && attempt < 5) {
      reserve += tokens - budget + 4;
      continue;
    }
    const headLines = countNewlines(head, 0, head.length) + (head === "" || head.endsWith("\n") ? 0 : 1);
    const tailLines = countNewlines(tail, 0, tail.length) + (tail === "" || tail.endsWith("\n") ? 0 : 1);
    const kept = byLines ? `the first ${fmt(headLines)} and last ${plural(tailLines, "line")}`
      : `the first ${fmt(head.length)} and last ${plural(tail.length, "character")}`;
    const note = `output shortened from ${about}${fmt(original.tokens)} to ${fmt(tokens)} tokens: kept ${kept}`;
    return { text: shaped, truncated: true, tokens, originalTokens: original.tokens, note };
  }
}
