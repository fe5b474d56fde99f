// Person names (opt-in, precision over recall): a common first name followed by a capitalised
// surname, or an honorific (Mr, Ms, Dr...) before capitalised names. No model, no guessing of the rest.

import { FIRST_NAMES } from "./first-names.js";
import { scan, type Span } from "./span.js";

const WORD = "[A-Z][a-z]+(?:['-][A-Z][a-z]+)?";
const FULL = new RegExp(`(?<![\\p{L}\\p{N}_.@/-])(${WORD})(?: ([A-Z])\\.)? (${WORD})(?![\\p{L}\\p{N}_@/-]|\\.[\\p{L}])`, "gu");
const HONORIFIC = new RegExp(`(?<![\\p{L}\\p{N}_])(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame)\\.? (${WORD})(?: (${WORD}))?(?![\\p{L}\\p{N}_@/-])`, "gu");

/** Capitalised words that follow a first name without being a surname. */
const NOT_SURNAMES = new Set([
  "Street", "Road", "Avenue", "Lane", "Drive", "Park", "Square", "Hall", "House", "Center", "Centre", "Inc", "Ltd",
  "Corp", "University", "College", "School", "Hospital", "Foundation", "Company", "Group", "Bank", "Church",
  "Island", "Bay", "River", "Valley", "City", "County", "The", "And", "Or", "Of", "In", "On", "At", "To", "For",
  "With", "Is", "Was", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
  "January", "February", "March", "April", "June", "July", "August", "September", "October", "November", "December",
]);

export function findNames(text: string): Span[] {
  const out: Span[] = [];
  // Honorifics first: "Ms. Elena Petrova" is one name, not "Elena Petrova" after a word.
  for (const m of scan(HONORIFIC, text)) {
    const [value, first = "", second] = m;
    if (NOT_SURNAMES.has(first) || (second !== undefined && NOT_SURNAMES.has(second))) continue;
    out.push({ start: m.index, end: m.index + value.length });
  }
  for (const m of scan(FULL, text)) {
    const [value, first = "", , last = ""] = m;
    if (!FIRST_NAMES.has(first) || NOT_SURNAMES.has(last)) continue;
    out.push({ start: m.index, end: m.index + value.length });
  }
  return out;
}
