// Short summaries of tool descriptions for search results at the `summary` detail level.
// A summary is the first sentence, plus more while it is still very short; cut at a word when one sentence is too long.

import { cleanText } from "./json-schema.js";

const SUMMARY_MAX = 200;
/** Below this length the next sentence is added too (e.g. "Short." alone says too little). */
const SUMMARY_ENOUGH = 60;

/** The first sentence(s) of `text`, at most `max` characters, on one line. */
export function summarize(text: string, max: number = SUMMARY_MAX): string {
  const flat = cleanText(text, 10_000).replace(/\s+/g, " ").trim();
  let out = "";
  for (const sentence of flat.split(/(?<=[.!?])\s+/)) {
    const next = out === "" ? sentence : `${out} ${sentence}`;
    if (next.length > max) break;
    out = next;
    if (out.length >= SUMMARY_ENOUGH) break;
  }
  if (out.length > 0) return out;
  const cut = flat.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/, "")}…`;
}
