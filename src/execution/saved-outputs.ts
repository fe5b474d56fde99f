// The store of full outputs that were too long to show: host-owned files under SANDBOX_DIR/outputs
// (never mounted in a sandbox), one unguessable id per call, owned by the caller, capped in total.

import { randomBytes } from "node:crypto";
import { mkdirSync, chmodSync } from "node:fs";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SandgateError } from "../errors/index.js";
import { silentLogger, type Logger } from "../util/logger.js";

export type SavedStream = "stdout" | "stderr";

export const SAVED_OUTPUT_PREFIX = "sandgate://outputs/";
const STREAMS: readonly SavedStream[] = ["stdout", "stderr"];
const ID = /^[A-Za-z0-9_-]{24}$/;

export interface SavedOutputsOptions {
  dir: string;
  ttlMs: number;
  capBytes: number;
  log?: Logger;
}

interface Entry {
  id: string;
  owner: string;
  createdAt: number;
  bytes: number;
  streams: Set<SavedStream>;
  /** Settles when every file of the entry is on disk (or failed to be). */
  written: Promise<void>;
}

/** Whether `value` names a stream outputs are saved for (stdout or stderr). */
export function isSavedStream(value: unknown): value is SavedStream {
  return STREAMS.includes(value as SavedStream);
}

/** Where a saved stream is read back: an MCP resource URI and a REST path. */
export function savedOutputUri(id: string, stream: SavedStream): string {
  return `${SAVED_OUTPUT_PREFIX}${id}/${stream}`;
}

export function savedOutputRestPath(id: string, stream: SavedStream): string {
  return `/outputs/${id}/${stream}`;
}

/** Parses a `sandgate://outputs/{id}/{stream}` URI; undefined when it is not one. */
export function parseSavedOutputUri(uri: string): { id: string; stream: SavedStream } | undefined {
  if (!uri.startsWith(SAVED_OUTPUT_PREFIX)) return undefined;
  const [id, stream, ...rest] = uri.slice(SAVED_OUTPUT_PREFIX.length).split("/");
  if (rest.length > 0 || id === undefined || !isSavedStream(stream)) return undefined;
  return { id, stream };
}

export class SavedOutputs {
  /** Oldest first: eviction under the cap takes from the front. */
  private entries = new Map<string, Entry>();
  private total = 0;
  private readonly pending = new Set<Promise<unknown>>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly ready: Promise<void>;
  private readonly log: Logger;

  constructor(private readonly options: SavedOutputsOptions) {
    this.log = options.log ?? silentLogger;
    // Only sandgate's own user may enter: ids are the only secret between callers.
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    chmodSync(options.dir, 0o700);
    this.ready = this.track(this.load());
    this.sweeper = setInterval(() => this.prune(), Math.max(1000, Math.min(60_000, options.ttlMs / 4)));
    this.sweeper.unref();
  }

  /**
   * Starts the saved output of one call; each `add` stores one stream and returns its URI, or
   * undefined when that stream alone is larger than the whole store. Writes run in the background.
   */
  begin(owner: string): { add: (stream: SavedStream, data: Buffer) => { id: string; uri: string } | undefined } {
    let entry: Entry | undefined;
    return {
      add: (stream, data) => {
        if (data.length > this.options.capBytes) return undefined;
        if (!entry) {
          entry = { id: randomBytes(18).toString("base64url"), owner, createdAt: Date.now(), bytes: 0, streams: new Set(), written: Promise.resolve() };
          this.entries.set(entry.id, entry);
          const meta = JSON.stringify({ owner, createdAt: entry.createdAt });
          const dir = join(this.options.dir, entry.id);
          entry.written = this.track(mkdir(dir, { mode: 0o700 }).then(() => writeFile(join(dir, "meta.json"), meta, { mode: 0o600 })));
        }
        const current = entry;
        this.makeRoom(data.length, current.id);
        if (this.total + data.length > this.options.capBytes) return undefined;
        current.bytes += data.length;
        current.streams.add(stream);
        this.total += data.length;
        current.written = this.track(current.written.then(() => writeFile(join(this.options.dir, current.id, stream), data, { mode: 0o600 })));
        current.written.catch((error: unknown) => {
          this.log.warn({ err: error }, "could not save a full output");
          this.drop(current);
        });
        return { id: current.id, uri: savedOutputUri(current.id, stream) };
      },
    };
  }

  /** The saved stream, for its owner only; unknown, expired and foreign ids are one and the same answer. */
  async read(id: string, stream: SavedStream, owner: string): Promise<Buffer> {
    const missing = new SandgateError(
      "OUTPUT_NOT_FOUND",
      `no saved output ${savedOutputUri(id, stream)}: it never existed, belongs to another caller, or is older than ${Math.round(this.options.ttlMs / 1000)} s`,
      { data: { id, stream } },
    );
    if (!ID.test(id) || !isSavedStream(stream)) throw missing;
    await this.ready;
    const entry = this.entries.get(id);
    if (!entry || entry.owner !== owner || !entry.streams.has(stream) || this.expired(entry)) throw missing;
    await entry.written.catch(() => undefined);
    try {
      return await readFile(join(this.options.dir, id, stream));
    } catch {
      throw missing;
    }
  }

  /** Total bytes kept. */
  get bytes(): number {
    return this.total;
  }

  /** Waits for every write and deletion under way (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.settled();
  }

  /** Deletes expired entries. */
  prune(now = Date.now()): void {
    for (const entry of [...this.entries.values()]) if (this.expired(entry, now)) this.drop(entry);
  }

  private expired(entry: Entry, now = Date.now()): boolean {
    return now - entry.createdAt > this.options.ttlMs;
  }

  /**
   * Drops entries until `bytes` more fit: the oldest of whichever caller keeps the most, so one
   * caller's floods push out its own outputs before anyone else's.
   */
  private makeRoom(bytes: number, keep: string): void {
    this.prune();
    while (this.total + bytes > this.options.capBytes) {
      const byOwner = new Map<string, { bytes: number; oldest?: Entry }>();
      for (const entry of this.entries.values()) {
        const owner = byOwner.get(entry.owner) ?? { bytes: 0 };
        owner.bytes += entry.bytes;
        if (entry.id !== keep) owner.oldest ??= entry;
        byOwner.set(entry.owner, owner);
      }
      let victim: { bytes: number; oldest?: Entry } | undefined;
      for (const owner of byOwner.values()) if (owner.oldest && (!victim || owner.bytes > victim.bytes)) victim = owner;
      if (!victim?.oldest) return;
      this.drop(victim.oldest);
    }
  }

  private drop(entry: Entry): void {
    if (this.entries.get(entry.id) !== entry) return;
    this.entries.delete(entry.id);
    this.total -= entry.bytes;
    const dir = join(this.options.dir, entry.id);
    void this.track(entry.written.catch(() => undefined).then(() => rm(dir, { recursive: true, force: true }))).catch(() => undefined);
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise);
    const done = (): void => void this.pending.delete(promise);
    promise.then(done, done);
    return promise;
  }

  /** Picks up what an earlier run saved; anything unreadable, ownerless or expired goes. */
  private async load(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.options.dir);
    } catch {
      return;
    }
    const found: Entry[] = [];
    for (const id of names) {
      if (this.entries.has(id)) continue; // saved by this run while we looked
      const dir = join(this.options.dir, id);
      try {
        if (!ID.test(id)) throw new Error("not an output id");
        const meta = JSON.parse(await readFile(join(dir, "meta.json"), "utf8")) as { owner?: unknown; createdAt?: unknown };
        if (typeof meta.owner !== "string" || typeof meta.createdAt !== "number") throw new Error("bad meta");
        const entry: Entry = { id, owner: meta.owner, createdAt: meta.createdAt, bytes: 0, streams: new Set(), written: Promise.resolve() };
        for (const stream of STREAMS) {
          const size = await stat(join(dir, stream)).then((s) => s.size, () => undefined);
          if (size === undefined) continue;
          entry.streams.add(stream);
          entry.bytes += size;
        }
        if (this.expired(entry)) throw new Error("expired");
        found.push(entry);
      } catch {
        await rm(dir, { recursive: true, force: true }).catch(() => undefined);
      }
    }
    found.sort((a, b) => a.createdAt - b.createdAt);
    const merged = new Map<string, Entry>();
    for (const entry of [...found, ...this.entries.values()]) merged.set(entry.id, entry);
    this.entries = merged;
    this.total = [...merged.values()].reduce((sum, e) => sum + e.bytes, 0);
    this.makeRoom(0, "");
  }
}
