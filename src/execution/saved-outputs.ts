// The store of full outputs that were too long to show: host-owned files under SANDBOX_DIR/outputs
// (never mounted in a sandbox), one unguessable id per call, owned by the caller, capped in total.

import { randomBytes } from "node:crypto";
import { mkdirSync, chmodSync } from "node:fs";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SandgateError } from "../errors/index.js";
import { silentLogger, type Logger } from "../util/logger.js";
import { FileSink } from "./saved-output-sink.js";

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
  /** Being written as its call prints, or read back for its result: not evicted to make room meanwhile. */
  pinned?: boolean;
}

/** One call's saved outputs, as SavedOutputs.begin hands them out. */
export interface SavedCall {
  /** Saves a whole stream; its id and URI, or undefined when it alone is larger than the whole store. */
  add(stream: SavedStream, data: Buffer): { id: string; uri: string } | undefined;
  /** A sink that saves `stream` as it is printed (see OutputSpill); it gives the copy up if the store has no room for it. */
  open(stream: SavedStream): { sink: FileSink; id: string; uri: string };
  /** The call's result is built: its outputs may be evicted like any other. */
  release(): void;
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
   * undefined when that stream alone is larger than the whole store; `open` saves a stream as it
   * is printed. Writes run in the background.
   */
  begin(owner: string): SavedCall {
    let entry: Entry | undefined;
    const current = (): Entry => {
      if (!entry) {
        entry = { id: randomBytes(18).toString("base64url"), owner, createdAt: Date.now(), bytes: 0, streams: new Set(), written: Promise.resolve() };
        this.entries.set(entry.id, entry);
        const meta = JSON.stringify({ owner, createdAt: entry.createdAt });
        const dir = join(this.options.dir, entry.id);
        entry.written = this.track(mkdir(dir, { mode: 0o700 }).then(() => writeFile(join(dir, "meta.json"), meta, { mode: 0o600 })));
      }
      return entry;
    };
    return {
      add: (stream, data) => {
        if (data.length > this.options.capBytes) return undefined;
        const saved = current();
        this.makeRoom(data.length, saved.id);
        if (this.total + data.length > this.options.capBytes) return undefined;
        saved.bytes += data.length;
        saved.streams.add(stream);
        this.total += data.length;
        saved.written = this.track(saved.written.then(() => writeFile(join(this.options.dir, saved.id, stream), data, { mode: 0o600 })));
        saved.written.catch((error: unknown) => {
          this.log.warn({ err: error }, "could not save a full output");
          this.drop(saved);
        });
        return { id: saved.id, uri: savedOutputUri(saved.id, stream) };
      },
      open: (stream) => {
        const saved = current();
        saved.pinned = true;
        saved.streams.add(stream);
        const sink = new FileSink({
          path: join(this.options.dir, saved.id, stream),
          after: saved.written,
          admit: (written, bytes) => this.admit(saved, written, bytes),
          onError: (error) => {
            this.log.warn({ err: error }, "could not save a full output");
            this.drop(saved);
          },
        });
        saved.written = this.track(sink.done);
        return { sink, id: saved.id, uri: savedOutputUri(saved.id, stream) };
      },
      release: () => {
        if (entry) entry.pinned = false;
      },
    };
  }

  /**
   * Room for `bytes` more of a stream being saved as it is printed (`written` so far): as `add`
   * would give it the whole stream, the caller keeping the most making room first. False: the
   * stream is larger than the store, or no room is left; the entry is dropped.
   */
  private admit(entry: Entry, written: number, bytes: number): boolean {
    if (this.entries.get(entry.id) !== entry) return false;
    if (written + bytes <= this.options.capBytes) {
      if (this.total + bytes > this.options.capBytes) this.makeRoom(bytes, entry.id);
      if (this.total + bytes <= this.options.capBytes) {
        entry.bytes += bytes;
        this.total += bytes;
        return true;
      }
    }
    this.drop(entry);
    return false;
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
        if (entry.id !== keep && !entry.pinned) owner.oldest ??= entry;
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
