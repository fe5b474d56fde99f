// The detectors: every kind of personal data sandgate finds, each confirmed by a validator, not a loose
// pattern, and one scan that runs the kinds asked for and settles overlaps (stronger kinds first).

import { findCustom } from "./custom.js";
import { findCreditCards } from "./kinds/credit-card.js";
import { findEmails } from "./kinds/email.js";
import { findIbans } from "./kinds/iban.js";
import { findIpAddresses } from "./kinds/ip-address.js";
import { findNames } from "./kinds/name.js";
import { findPhones } from "./kinds/phone.js";
import type { Detector, Span } from "./kinds/span.js";
import { findSsns } from "./kinds/ssn.js";
import type { DetectOptions, PiiMatch, PiiType } from "./types.js";

export { compilePatterns } from "./custom.js";

/** One detector per built-in kind; the order is the precedence when two kinds claim the same text. */
const DETECTORS: Record<PiiType, Detector> = {
  email: findEmails,
  iban: findIbans,
  credit_card: findCreditCards,
  ssn: findSsns,
  ip_address: findIpAddresses,
  phone: findPhones,
  name: findNames,
};
const BUILT_IN = Object.keys(DETECTORS) as PiiType[];

/** Every match of the kinds in `options` in `text`, sorted by start, never overlapping. */
export function detectPii(text: string, options: DetectOptions): PiiMatch[] {
  if (text.length === 0 || options.types.length === 0) return [];
  const found: PiiMatch[] = [];
  const wanted = new Set(options.types);
  // Custom patterns come after the built-in kinds in precedence, in config order.
  for (const type of BUILT_IN) {
    if (wanted.has(type)) for (const span of DETECTORS[type](text)) found.push(matchOf(text, type, span));
  }
  for (const pattern of options.patterns ?? []) {
    if (wanted.has(pattern.name) && !BUILT_IN.includes(pattern.name as PiiType)) {
      for (const span of findCustom(pattern, text)) found.push(matchOf(text, pattern.name, span));
    }
  }
  return settle(found);
}

function matchOf(text: string, type: string, span: Span): PiiMatch {
  return { type, start: span.start, end: span.end, value: text.slice(span.start, span.end) };
}

/** Keeps, in precedence order (the order found), each match that overlaps none kept before; sorted by start. */
function settle(found: PiiMatch[]): PiiMatch[] {
  const kept: PiiMatch[] = [];
  for (const match of found) {
    // kept is sorted by start: find the first kept match that ends after this one starts.
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((kept[mid]?.end ?? 0) <= match.start) lo = mid + 1;
      else hi = mid;
    }
    const next = kept[lo];
    if (next !== undefined && next.start < match.end) continue;
    kept.splice(lo, 0, match);
  }
  return kept;
}
