// Words for search: identifiers split at camel humps, underscores, dashes and dots, lower-cased and lightly stemmed.
// The same function runs on tool text and on queries, so both sides agree on every word.

const STOPWORDS = new Set(
  "a an and are as at be by can for from has have if in into is it its of on or that the their then this to was were will with you your".split(" "),
);

/** A light plural stemmer: entities → entity, files → file, issues → issue; leaves -ss/-us/-is alone. */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && /(?:sses|xes|ches|shes)$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/** Search terms of `text` (stopwords kept when `keepStopwords`, e.g. for a query made only of them). */
export function tokenize(text: string, keepStopwords = false): string[] {
  const out: string[] = [];
  for (const chunk of text.split(/[^\p{L}\p{N}]+/u)) {
    if (chunk === "") continue;
    const parts = chunk.match(/[A-Z]+[0-9]*(?![a-z])|[A-Z]?[a-z]+[0-9]*|[0-9]+|[^A-Za-z0-9]+/g) ?? [chunk];
    for (const part of parts) {
      const word = part.toLowerCase();
      if (!keepStopwords && STOPWORDS.has(word)) continue;
      out.push(stem(word));
    }
  }
  return out;
}

// A few verbs agents reach for that tool authors spell differently; expansions score at reduced weight.
const SYNONYMS: Record<string, string[]> = {
  add: ["sum", "plus"],
  sum: ["add"],
  find: ["search", "lookup"],
  search: ["find", "query"],
  lookup: ["search", "find"],
  delete: ["remove"],
  remove: ["delete"],
  fetch: ["get", "read"],
  get: ["fetch", "read"],
  read: ["get", "open"],
  open: ["read"],
  create: ["new", "make"],
  make: ["create"],
  update: ["edit", "modify"],
  edit: ["update", "modify"],
  modify: ["update", "edit"],
  list: ["enumerate"],
  folder: ["directory"],
  directory: ["folder"],
  dir: ["directory"],
  repo: ["repository"],
  pr: ["pull"],
};

export function synonymsOf(term: string): readonly string[] {
  return SYNONYMS[term] ?? [];
}
