// US Social Security numbers: AAA-GG-SSSS (dashes or spaces) with the SSA's rules (area not 000, 666
// or 9xx, group not 00, serial not 0000); nine bare digits only right after words like "SSN".

import { before, scan, type Span } from "./span.js";

const FORMATTED = /(?<![\w.\-+/@#])(\d{3})([ -])(\d{2})\2(\d{4})(?![\w\-/@]|[.,:]\d)/g;
// `#` may come before: the context below is required anyway (`SSN#123456789`).
const BARE = /(?<![\w.\-+/@])(\d{3})(\d{2})(\d{4})(?![\w\-/@]|[.,:]\d)/g;
const CONTEXT = /(?:\bssn|\bss#|social security|\bsoc\.? ?sec|\bsocial sec)[^\d\n]{0,24}$/;

function validParts(area: string, group: string, serial: string): boolean {
  return area !== "000" && area !== "666" && area[0] !== "9" && group !== "00" && serial !== "0000";
}

export function findSsns(text: string): Span[] {
  const out: Span[] = [];
  for (const m of scan(FORMATTED, text)) {
    const [value, area = "", separator, group = "", serial = ""] = m;
    if (!validParts(area, group, serial)) continue;
    const start = m.index;
    const end = start + value.length;
    // With spaces, a row of a numeric table ("120 45 6789 12") is not an SSN.
    if (separator === " " && (/\d[ \t]$/.test(text.slice(Math.max(0, start - 2), start)) || /^[ \t]\d/.test(text.slice(end, end + 2)))) {
      if (!CONTEXT.test(before(text, start, 40))) continue;
    }
    out.push({ start, end });
  }
  if (/ss|social/i.test(text)) {
    for (const m of scan(BARE, text)) {
      const [value, area = "", group = "", serial = ""] = m;
      if (!validParts(area, group, serial) || !CONTEXT.test(before(text, m.index, 40))) continue;
      out.push({ start: m.index, end: m.index + value.length });
    }
  }
  return out;
}
