// The Catalog: upstream tools by server, search over them, and the generated `servers/` tree kept on disk.
// Every change rewrites the affected server's files, the shared index files and manifest.json atomically.

import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { SandgateError } from "../../../errors/index.js";
import { inferSchema, mergeInferred, sanitizeInferred } from "./infer-schema.js";
import type { JsonSchema } from "./json-schema.js";
import { NameRegistry, pyModuleName, tsNamespaceName } from "./naming.js";
import { pyModuleFile, pyPackageFile } from "./py-codegen.js";
import { SearchIndex } from "./search.js";
import { summarize } from "./summary.js";
import { catalogTools, checkServerName } from "./tool-list.js";
import { planTsNames, serverIndexFile, serversIndexFile, toolFile, toolSignature } from "./ts-codegen.js";
import { TreeWriter } from "./tree-writer.js";
import type { CatalogOptions, CatalogServer, CatalogTool, Detail, SearchHit, SearchOptions } from "./types.js";

export const SEARCH_LIMIT_DEFAULT = 10;
export const SEARCH_LIMIT_MAX = 50;
const DETAILS: readonly Detail[] = ["name", "summary", "full"];
/** Every response of a tool is merged into its inferred schema until this many were… */
const OBSERVE_FIRST = 20;
/** …then one response in this many, so a field that appears rarely still shows up, at a bounded cost. */
const OBSERVE_EVERY = 100;
/**
 * Counts at which the files are rewritten even when the type did not change (rewriting costs as much as the
 * server is big): the count shown in them steps 1, 2, 5, 10, 20, then follows each later observation.
 */
const SHOWN_COUNTS = new Set([1, 2, 5, 10, OBSERVE_FIRST]);
/**
 * Whether files rewritten for a tool whose schema was inferred from `responses` responses, the type
 * unchanged, are written in the background (and the owner may save the schemas so): past the first
 * OBSERVE_FIRST, where only the count shown moves.
 */
export function inferredInBackground(responses: number): boolean {
  return responses > OBSERVE_FIRST;
}
/** Stored next to a kept schema: how many responses it was inferred from. */
const RESPONSES_KEY = "x-inferred-from";
/** The longest server name (checkServerName): where a `server__name` split can be. */
const MAX_SERVER_NAME = 64;

/**
 * The ways `ref` may name a server and one of its tools, in the order tried: at its first `.` or `/`
 * (`server.name`, `server/name`), then at each `__` (`server__name`). Only cuts within a server name's
 * length are made: a hostile ref of a million underscores costs at most 64.
 */
export function toolRefSplits(ref: string): Array<{ server: string; name: string }> {
  const splits: Array<{ server: string; name: string }> = [];
  const cut = ref.search(/[./]/);
  if (cut > 0 && cut < ref.length - 1) splits.push({ server: ref.slice(0, cut), name: ref.slice(cut + 1) });
  for (let at = ref.indexOf("__"); at > 0 && at <= MAX_SERVER_NAME; at = ref.indexOf("__", at + 1)) {
    if (at + 2 < ref.length) splits.push({ server: ref.slice(0, at), name: ref.slice(at + 2) });
  }
  return splits;
}

/** The server's tool whose raw, TypeScript or Python name is `name`, in that order of preference. */
function toolNamed(tools: readonly CatalogTool[], name: string): CatalogTool | undefined {
  return tools.find((t) => t.name === name) ?? tools.find((t) => t.tsName === name) ?? tools.find((t) => t.pyName === name);
}

interface InferredSchema {
  schema: JsonSchema;
  /** Responses merged into `schema`. */
  responses: number;
}

interface ServerEntry {
  name: string;
  description?: string;
  /** Python module name under `servers` (`google_drive`). */
  pyModule: string;
  /** Namespace name in `servers/index.ts` (`googleDrive`). */
  namespace: string;
  tools: CatalogTool[];
  /** Paths (relative to the tree root) of this server's files. */
  files: Set<string>;
  /** Per tool id: the declaration-only TS signature and the Python signature line. */
  signatures: Map<string, { ts: string; py: string }>;
}

export class Catalog {
  private readonly writer: TreeWriter;
  private readonly entries = new Map<string, ServerEntry>();
  /** Virtual tree: path → content, mirroring what is on disk. */
  private readonly files = new Map<string, string>();
  private index: SearchIndex | undefined;
  /** Inferred output schemas by tool id, kept across server refreshes (and, by the owner, restarts). */
  private readonly inferred: Map<string, InferredSchema>;
  /**
   * Bumped when a server's tool list or its Python module changes (not for inferred types alone) and
   * written to manifest.json, so runners know to reload their `servers` modules.
   */
  private generation = 0;
  /** Successful responses seen per tool id since this catalog started (observed or not). */
  private readonly responsesSeen = new Map<string, number>();

  constructor(options: CatalogOptions) {
    this.writer = new TreeWriter(options.dir);
    // Kept schemas may come from an older sandgate (which copied any key) or a hand-edited file.
    this.inferred = new Map(Object.entries(options.inferred ?? {}).map(([id, schema]) => [id, { schema: sanitizeInferred(schema), responses: keptResponses(schema) }]));
    this.writeShared();
  }

  /** Adds or replaces a server's tools and regenerates its files. */
  setServer(server: string, tools: Tool[], info: { description?: string } = {}): void {
    checkServerName(server);
    const previous = this.entries.get(server);
    const entry: ServerEntry = {
      name: server,
      pyModule: previous?.pyModule ?? this.freeName(pyModuleName(server), (e) => e.pyModule),
      namespace: previous?.namespace ?? this.freeName(tsNamespaceName(server), (e) => e.namespace),
      tools: this.withInferred(catalogTools(server, tools, previous?.tools)),
      files: new Set(),
      signatures: new Map(),
    };
    if (info.description !== undefined && info.description.trim() !== "") entry.description = info.description;
    this.entries.set(server, entry);
    const pyFile = `python/servers/${entry.pyModule}/__init__.py`;
    const before = this.files.get(pyFile);
    this.generate(entry, previous?.files ?? new Set(), () => this.files.get(pyFile) !== before);
  }

  removeServer(server: string): void {
    const entry = this.entries.get(server);
    if (entry === undefined) return;
    this.entries.delete(server);
    this.generation++;
    this.writeShared();
    this.removeFiles(entry.files);
    this.index = undefined;
  }

  /**
   * Resolves when the tree on disk matches the catalog. Small changes are written before the
   * call that made them returns; a big server's files are written in the background.
   */
  settled(): Promise<void> {
    return this.writer.settled();
  }

  servers(): CatalogServer[] {
    return [...this.entries.values()].map((e) => ({
      name: e.name,
      tsModule: `sandgate:servers/${e.name}`,
      pyModule: `servers.${e.pyModule}`,
      toolCount: e.tools.length,
      ...(e.description !== undefined ? { description: e.description } : {}),
    }));
  }

  tools(server?: string): CatalogTool[] {
    const entries = server === undefined ? [...this.entries.values()] : [this.entries.get(server)].filter((e) => e !== undefined);
    return entries.flatMap((e) => e.tools.map((t) => ({ ...t })));
  }

  /**
   * The tool `ref` names: `server.name` or `server/name`, `server__name` (as clients that prefix a
   * tool with its server spell it), or a bare name that exactly one server has; name is the raw tool
   * name, its tsName or its pyName. Undefined for none, and for a bare name on several servers (see candidates).
   */
  resolve(ref: string): CatalogTool | undefined {
    const found = this.candidates(ref);
    return found.length === 1 ? found[0] : undefined;
  }

  /** Every tool `ref` may name (resolve's forms): one, none, or the servers' tools a bare name fits. */
  candidates(ref: string): CatalogTool[] {
    const named = this.named(ref);
    return named ? [named] : this.bare(ref);
  }

  /** The tool `ref` names with its server (`server.name`, `server/name`, `server__name`); undefined otherwise. */
  named(ref: string): CatalogTool | undefined {
    const tool = this.find(ref);
    return tool === undefined ? undefined : { ...tool };
  }

  /** The tools whose raw, TypeScript or Python name is `name`, one per server at most, by server name. */
  bare(name: string): CatalogTool[] {
    const entries = [...this.entries.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return entries.flatMap((entry) => {
      const tool = toolNamed(entry.tools, name);
      return tool ? [{ ...tool }] : [];
    });
  }

  /**
   * Learns from a real result of a tool that declares no output schema: the first response gives the
   * schema, the next ones widen it (keys missing from some become optional, conflicting types a union).
   * Every response is observed until OBSERVE_FIRST were, then one in OBSERVE_EVERY. True when the files
   * were rewritten (the type changed, or the count reached a step of SHOWN_COUNTS, or past OBSERVE_FIRST).
   */
  observeOutput(id: string, value: unknown): boolean {
    const tool = this.find(id);
    if (tool === undefined || value === undefined || (tool.outputSchema !== undefined && !tool.outputSchemaInferred)) return false;
    const entry = this.entries.get(tool.server);
    if (entry === undefined) return false;
    const seen = (this.responsesSeen.get(tool.id) ?? 0) + 1;
    this.responsesSeen.set(tool.id, seen);
    const kept = this.inferred.get(tool.id);
    if (kept !== undefined && kept.responses >= OBSERVE_FIRST && seen % OBSERVE_EVERY !== 0) return false;
    const next: InferredSchema = kept === undefined ? { schema: inferSchema(value), responses: 1 } : { schema: mergeInferred(kept.schema, value), responses: kept.responses + 1 };
    const changed = kept === undefined || JSON.stringify(kept.schema) !== JSON.stringify(next.schema);
    this.inferred.set(tool.id, next);
    tool.outputSchema = next.schema;
    tool.outputSchemaInferred = true;
    tool.outputSchemaResponses = next.responses;
    if (!changed && next.responses <= OBSERVE_FIRST && !SHOWN_COUNTS.has(next.responses)) return false;
    // Past the first responses a rewrite that only moves the count (one in OBSERVE_EVERY calls of a
    // busy tool) goes to disk in the background: the call that observed it does not wait for the files.
    this.generate(entry, entry.files, undefined, !changed && inferredInBackground(next.responses));
    return true;
  }

  /**
   * Every output schema inferred so far, by tool id (for the owner to keep across restarts), each with
   * the number of responses it was inferred from under `x-inferred-from`.
   */
  inferredSchemas(): Record<string, JsonSchema> {
    return Object.fromEntries([...this.inferred].map(([id, kept]) => [id, { ...kept.schema, [RESPONSES_KEY]: kept.responses }]));
  }

  private withInferred(tools: CatalogTool[]): CatalogTool[] {
    for (const tool of tools) {
      const kept = this.inferred.get(tool.id);
      if (kept === undefined || (tool.outputSchema !== undefined && !tool.outputSchemaInferred)) continue;
      tool.outputSchema = kept.schema;
      tool.outputSchemaInferred = true;
      tool.outputSchemaResponses = kept.responses;
    }
    return tools;
  }

  search(query: string, options: SearchOptions): SearchHit[] {
    if (typeof query !== "string" || query.trim() === "") throw new SandgateError("INVALID_INPUT", "search query is empty: give a few words, e.g. \"create issue\"");
    if (!/[\p{L}\p{N}]/u.test(query)) throw new SandgateError("INVALID_INPUT", `search query ${JSON.stringify(query)} has no words to search for`);
    const detail = options.detail;
    if (!DETAILS.includes(detail)) throw new SandgateError("INVALID_INPUT", `detail must be one of ${DETAILS.join(", ")}, not ${JSON.stringify(detail)}`);
    const limit = options.limit ?? SEARCH_LIMIT_DEFAULT;
    if (!Number.isInteger(limit) || limit < 1) throw new SandgateError("INVALID_INPUT", `limit must be a whole number from 1 to ${SEARCH_LIMIT_MAX}, not ${limit}`);
    const server = options.server;
    if (server !== undefined && !this.entries.has(server)) {
      const known = [...this.entries.keys()].join(", ") || "none connected";
      throw new SandgateError("INVALID_INPUT", `no upstream server \`${server}\` (servers: ${known})`, { data: { server } });
    }
    this.index ??= new SearchIndex([...this.entries.values()].flatMap((e) => e.tools));
    const scored = this.index.search(query.slice(0, 2000), server === undefined ? undefined : (t) => t.server === server);
    return scored.slice(0, Math.min(limit, SEARCH_LIMIT_MAX)).map(({ tool, score }) => this.hit(tool, score, detail));
  }

  /**
   * Paths of the generated files, relative to the tree root: the TypeScript tree
   * (`servers/index.ts`, `servers/<server>/index.ts`, `servers/<server>/<tsName>.ts`) then the
   * Python package (`python/servers/__init__.py`, `python/servers/<py_module>/__init__.py`).
   * `manifest.json` is written next to them for the runners but is not part of the tree.
   */
  tree(): string[] {
    const paths = [...this.files.keys()].filter((p) => p !== "manifest.json");
    const ts = paths.filter((p) => p.startsWith("servers/")).sort();
    const py = paths.filter((p) => p.startsWith("python/")).sort();
    return [...ts, ...py];
  }

  /** A file of the tree by its path (a leading `/` or `./` is ignored); undefined when there is none. */
  readTreeFile(path: string): string | undefined {
    return this.files.get(path.replace(/^(?:\.?\/)+/, ""));
  }

  /** The tool of the first of toolRefSplits(ref) whose server has it. */
  private find(ref: string): CatalogTool | undefined {
    for (const { server, name } of toolRefSplits(ref)) {
      const entry = this.entries.get(server);
      const tool = entry === undefined ? undefined : toolNamed(entry.tools, name);
      if (tool) return tool;
    }
    return undefined;
  }

  private hit(tool: CatalogTool, score: number, detail: Detail): SearchHit {
    const hit: SearchHit = { id: tool.id, server: tool.server, name: tool.name, score: Math.round(score * 10_000) / 10_000 };
    if (detail === "name") return hit;
    hit.summary = summarize(tool.description !== "" ? tool.description : (tool.title ?? tool.name));
    if (detail === "summary") return hit;
    const signature = this.entries.get(tool.server)?.signatures.get(tool.id);
    if (signature !== undefined) {
      hit.signature = signature.ts;
      hit.python = signature.py;
    }
    return hit;
  }

  /** A name not used by another server (suffix 2, 3 …). */
  private freeName(base: string, pick: (e: ServerEntry) => string): string {
    return new NameRegistry([...this.entries.values()].map(pick)).claim(base);
  }

  /** `changed`, when given, says after the server's files are in `files` whether runners must reload them. */
  private generate(entry: ServerEntry, oldFiles: ReadonlySet<string>, changed?: () => boolean, background = false): void {
    const plans = planTsNames(entry.tools);
    const dir = `servers/${entry.name}`;
    const files = new Map<string, string>();
    entry.signatures.clear();
    for (const tool of entry.tools) {
      const plan = plans.get(tool.id);
      if (plan === undefined) continue;
      files.set(`${dir}/${tool.tsName}.ts`, toolFile(tool, plan));
      entry.signatures.set(tool.id, { ts: toolSignature(tool, plan), py: "" });
    }
    files.set(`${dir}/index.ts`, serverIndexFile(entry.name, entry.tools, plans, entry.description));
    const py = pyModuleFile(entry.name, entry.tools, entry.description);
    files.set(`python/servers/${entry.pyModule}/__init__.py`, py.source);
    for (const [id, line] of py.signatures) {
      const sig = entry.signatures.get(id);
      if (sig !== undefined) sig.py = line;
    }
    // New files first, then the shared indexes and manifest, and only then the files that went away.
    this.writer.update(files, [], background);
    for (const [path, content] of files) this.files.set(path, content);
    entry.files = new Set(files.keys());
    if (changed?.() === true) this.generation++;
    this.writeShared(background);
    this.removeFiles([...oldFiles].filter((path) => !entry.files.has(path)));
    this.index = undefined;
  }

  private writeShared(background = false): void {
    const entries = [...this.entries.values()];
    const shared = new Map<string, string>();
    shared.set("servers/index.ts", serversIndexFile(entries.map((e) => ({ name: e.name, namespace: e.namespace }))));
    shared.set("python/servers/__init__.py", pyPackageFile(entries.map((e) => ({ server: e.name, pyModule: e.pyModule }))));
    const servers: Record<string, unknown> = {};
    for (const e of entries) {
      servers[e.name] = {
        tsModule: `sandgate:servers/${e.name}`,
        pyModule: e.pyModule,
        tools: Object.fromEntries(e.tools.map((t) => [t.tsName, t.id])),
      };
    }
    shared.set("manifest.json", `${JSON.stringify({ version: 1, generation: this.generation, servers }, null, 2)}\n`);
    this.writer.update(shared, [], background);
    for (const [path, content] of shared) this.files.set(path, content);
  }

  private removeFiles(paths: Iterable<string>): void {
    const list = [...paths];
    this.writer.update([], list);
    for (const path of list) this.files.delete(path);
  }
}

/** The response count kept with a schema; a schema from an older sandgate counts as one response. */
function keptResponses(schema: unknown): number {
  const value = typeof schema === "object" && schema !== null ? (schema as Record<string, unknown>)[RESPONSES_KEY] : undefined;
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : 1;
}
