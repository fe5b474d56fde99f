// Ranked tool search: BM25F over names, titles, descriptions and parameters, names weighted highest.
// Query words that match nothing are ignored; prefixes and a few synonyms match at reduced weight.

import { propertiesOf, stringOf, type SchemaNode } from "./json-schema.js";
import { synonymsOf, tokenize } from "./tokenize.js";
import type { CatalogTool } from "./types.js";

const K1 = 1.2;
const SYNONYM_WEIGHT = 0.7;
const PREFIX_WEIGHT = 0.4;

interface FieldSpec {
  weight: number;
  /** Length normalisation strength (BM25 `b`). */
  b: number;
}

const FIELDS = {
  name: { weight: 3, b: 0.3 },
  title: { weight: 2, b: 0.3 },
  server: { weight: 1, b: 0 },
  description: { weight: 1, b: 0.75 },
  params: { weight: 1, b: 0.5 },
  paramDescriptions: { weight: 0.5, b: 0.75 },
} satisfies Record<string, FieldSpec>;

type Field = keyof typeof FIELDS;
const FIELD_NAMES = Object.keys(FIELDS) as Field[];

interface IndexedDoc {
  tool: CatalogTool;
  nameKey: string;
  lengths: Record<Field, number>;
  /** term → per-field counts */
  terms: Map<string, Record<Field, number>>;
}

export interface ScoredTool {
  tool: CatalogTool;
  score: number;
}

function emptyCounts(): Record<Field, number> {
  return { name: 0, title: 0, server: 0, description: 0, params: 0, paramDescriptions: 0 };
}

function fieldTexts(tool: CatalogTool): Record<Field, string> {
  const params = propertiesOf(tool.inputSchema);
  const describe = (node: SchemaNode): string => (typeof node === "boolean" ? "" : (stringOf(node, "description") ?? ""));
  return {
    name: tool.name,
    title: tool.title ?? "",
    server: tool.server,
    description: tool.description,
    params: params.map(([key]) => key).join(" "),
    paramDescriptions: params.map(([, node]) => describe(node)).join(" "),
  };
}

/** An immutable BM25F index over a snapshot of tools. */
export class SearchIndex {
  private readonly docs: IndexedDoc[] = [];
  private readonly df = new Map<string, number>();
  private readonly avg = emptyCounts();

  constructor(tools: readonly CatalogTool[]) {
    for (const tool of tools) {
      const texts = fieldTexts(tool);
      const doc: IndexedDoc = { tool, nameKey: tokenize(tool.name, true).join(" "), lengths: emptyCounts(), terms: new Map() };
      for (const field of FIELD_NAMES) {
        const words = tokenize(texts[field]).slice(0, 2000);
        doc.lengths[field] = words.length;
        this.avg[field] += words.length;
        for (const word of words) {
          let counts = doc.terms.get(word);
          if (counts === undefined) doc.terms.set(word, (counts = emptyCounts()));
          counts[field]++;
        }
      }
      for (const term of doc.terms.keys()) this.df.set(term, (this.df.get(term) ?? 0) + 1);
      this.docs.push(doc);
    }
    for (const field of FIELD_NAMES) this.avg[field] = this.docs.length === 0 ? 0 : this.avg[field] / this.docs.length || 1;
  }

  private idf(term: string): number {
    const n = this.docs.length;
    const df = this.df.get(term) ?? 0;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  /** Query terms with weights: exact 1, synonyms and words the term is a prefix of less. */
  private expand(query: string): Map<string, number> {
    const words = tokenize(query);
    const terms = words.length > 0 ? words : tokenize(query, true);
    const weights = new Map<string, number>();
    const add = (term: string, weight: number): void => {
      if (this.df.has(term)) weights.set(term, Math.max(weights.get(term) ?? 0, weight));
    };
    for (const term of terms.slice(0, 64)) {
      add(term, 1);
      for (const syn of synonymsOf(term)) add(syn, SYNONYM_WEIGHT);
      if (term.length >= 3) {
        let n = 0;
        for (const candidate of this.df.keys()) {
          if (candidate !== term && candidate.startsWith(term) && n++ < 5) add(candidate, PREFIX_WEIGHT);
        }
      }
    }
    return weights;
  }

  search(query: string, filter?: (tool: CatalogTool) => boolean): ScoredTool[] {
    const weights = this.expand(query);
    const phrase = tokenize(query, true).join(" ");
    const out: ScoredTool[] = [];
    for (const doc of this.docs) {
      if (filter !== undefined && !filter(doc.tool)) continue;
      let score = 0;
      for (const [term, weight] of weights) {
        const counts = doc.terms.get(term);
        if (counts === undefined) continue;
        let tf = 0;
        for (const field of FIELD_NAMES) {
          const spec: FieldSpec = FIELDS[field];
          if (counts[field] === 0) continue;
          tf += (spec.weight * counts[field]) / (1 - spec.b + (spec.b * doc.lengths[field]) / this.avg[field]);
        }
        score += weight * this.idf(term) * (tf / (K1 + tf));
      }
      // Naming the tool exactly (`read_file`, `github.search_issues`) puts it first.
      if (score > 0 && phrase !== "" && (phrase === doc.nameKey || phrase === `${tokenize(doc.tool.server, true).join(" ")} ${doc.nameKey}`)) score += 10;
      if (score > 0) out.push({ tool: doc.tool, score });
    }
    return out.sort((a, b) => b.score - a.score || a.tool.id.localeCompare(b.tool.id));
  }
}

/** detail "full" without a limit: signatures for at most this many best hits, each scoring at least FULL_SCORE_CUT of the best. */
export const FULL_SIGNATURES = 3;
const FULL_SCORE_CUT = 0.6;
/** Tools a query names exactly get their signatures, up to this many. */
const NAMED_SIGNATURES = 8;

/** What signedHits needs of a ranked hit. */
export interface RankedHit {
  id: string;
  name: string;
  score: number;
  /** The tool's description and title, read for a deprecation notice. */
  description?: string;
  title?: string;
}

const DEPRECATED = /\bdeprecated\b/i;

/** Whether `words` holds `part` as a run of consecutive words. */
function containsRun(words: readonly string[], part: readonly string[]): boolean {
  if (part.length === 0) return false;
  for (let i = 0; i + part.length <= words.length; i++) if (part.every((w, j) => words[i + j] === w)) return true;
  return false;
}

/**
 * Which of the ranked hits (best first) earn a full signature when the caller named no limit, as
 * indices. A query that names tools (`list_directory`, "read text file", `memory.create_entities`)
 * gets exactly those; otherwise the best hit and the next ones close to it, at most FULL_SIGNATURES,
 * so "full" costs two or three definitions, not ten. A tool whose description or title says it is
 * deprecated is signed only when named or when nothing else matched.
 */
export function signedHits(query: string, hits: readonly RankedHit[]): number[] {
  const words = tokenize(query, true);
  const named = hits.flatMap((h, i) => (containsRun(words, tokenize(h.name, true)) || query.includes(h.id) ? [i] : []));
  if (named.length > 0) return named.slice(0, NAMED_SIGNATURES);
  const deprecated = (h: RankedHit): boolean => DEPRECATED.test(h.description ?? "") || DEPRECATED.test(h.title ?? "");
  const current = hits.flatMap((h, i) => (deprecated(h) ? [] : [i]));
  const candidates = current.length > 0 ? current : hits.map((_, i) => i);
  const best = hits[candidates[0] ?? -1]?.score;
  if (best === undefined) return [];
  return candidates.slice(0, FULL_SIGNATURES).filter((i, n) => n === 0 || (hits[i]?.score ?? 0) >= best * FULL_SCORE_CUT);
}
