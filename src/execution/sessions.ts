// Sessions: a workspace directory plus one machine (a sandbox) in which each runner kind's
// resident runner lives side by side, kept between calls, owned by the identity that created
// them (ids a caller names are scoped per owner; an id the server minted is a capability any
// caller holding it may use), with a global and a per-owner maximum (at the global one the
// owner holding the most gives up an idle session to an owner with fewer), idle expiry, and
// calls to one runner of a session run one at a time.

import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { SandgateError } from "../errors/index.js";
import type { ResolvedLimits, RunnerKind, Sandbox, SandboxRuntime, WorkspaceFsMode } from "../sandbox/index.js";
import { SessionMachine, WorkspaceFilesystems, giveToSandbox, machinesSupported, sandboxShapeKey, startSandbox } from "../sandbox/index.js";
import type { Logger } from "../util/logger.js";
import { mustGiveWay } from "./admission.js";
import { WorkspaceReaper } from "./workspace-reaper.js";
import { Session, sessionKey } from "./session.js";

/** The owner of sessions started by library callers that name none. */
export const LOCAL_OWNER = "local";

export interface SessionInfo {
  id: string;
  /** The identity the session belongs to ("key:<name>", "local" without keys, "stdio"). */
  owner: string;
  /** The server minted the id: any caller that holds it may use the session (a capability). */
  shared: boolean;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  calls: number;
  runners: RunnerKind[];
  busy: boolean;
  /** Where code sees the workspace; the host directory is never shown. */
  workspace: string;
  /** Names of the session's environment variables (values are never shown). */
  envNames: string[];
}

export interface SessionManagerOptions {
  max: number;
  /** Live sessions one owner may hold; defaults to `max`. */
  maxPerOwner?: number;
  idleTtlMs: number;
  /**
   * At the global maximum, an owner holding at least two sessions more than the one asking gives
   * up its least recently used session idle this long; defaults to idleTtlMs.
   */
  evictIdleAfterMs?: number;
  limits: ResolvedLimits;
  /** Files, directories and links a workspace may hold. */
  workspaceInodes: number;
  /** "auto": each workspace its own size- and inode-limited filesystem where the host allows it. */
  workspaceFilesystem?: WorkspaceFsMode;
  /** Runs when a session ends, after its sandboxes are gone and before its workspace is released (closes its file helper). */
  onEnd?: (session: Session) => Promise<void>;
  /** Where a workspace that could not be deleted is reported. */
  log?: Logger;
}

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const REMEMBER_ENDED = 1000;

export class SessionManager {
  /** Keyed by sessionKey(owner, id). */
  private readonly sessions = new Map<string, Session>();
  /** The live sessions whose id the server minted, by id: whoever holds one may use it. */
  private readonly minted = new Map<string, Session>();
  /** Why ended sessions ended, keyed like `sessions`. */
  private readonly ended = new Map<string, string>();
  private readonly sweeper: NodeJS.Timeout;
  /** Sessions ended to make room whose sandboxes and workspaces are still going away. */
  private readonly ending = new Set<Promise<void>>();
  /** Machines being started, per session. */
  private readonly machinesStarting = new Map<Session, Promise<SessionMachine | undefined>>();
  /** Deletes ended sessions' workspaces in the background. */
  readonly reaper: WorkspaceReaper;
  /** Each workspace's own filesystem, where the host allows it. */
  readonly filesystems: WorkspaceFilesystems;

  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly options: SessionManagerOptions,
  ) {
    this.filesystems = new WorkspaceFilesystems({
      mode: options.workspaceFilesystem ?? "auto",
      workspacesDir: runtime.workspacesDir,
      hostUser: runtime.hostUser,
      bytes: options.limits.workspaceBytes,
      inodes: options.workspaceInodes,
    });
    this.reaper = new WorkspaceReaper(runtime, options.log, this.filesystems);
    this.sweeper = setInterval(() => void this.expireIdle(), Math.min(30_000, Math.max(250, options.idleTtlMs / 4)));
    this.sweeper.unref();
  }

  get count(): number {
    return this.sessions.size;
  }

  /**
   * Returns the live session `id` that `owner` may use (its own, or a server-minted one it holds),
   * or creates it for `owner`. Without an id the server mints one: 122 random bits, so holding it
   * is the proof of having been given it.
   */
  open(owner: string, id?: string): Session {
    if (id !== undefined) {
      if (!SESSION_ID.test(id)) {
        throw new SandgateError("INVALID_INPUT", "session id must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit", {
          data: { field: "session_id" },
        });
      }
      const existing = this.find(owner, id);
      if (existing) return existing;
    }
    const own = this.ownedBy(owner);
    const perOwner = Math.min(this.options.maxPerOwner ?? this.options.max, this.options.max);
    if (own.length >= perOwner) {
      throw new SandgateError(
        "TOO_MANY_SESSIONS",
        `you have ${own.length} live sessions, the most one caller may hold: reuse one (${namedSessions(own)}), stop one you no longer need (stop_session) or wait for an idle one to expire`,
        { data: { max: perOwner, retry_after: this.retryAfterS(own), sessions: own.map((s) => s.id) } },
      );
    }
    if (this.sessions.size >= this.options.max) {
      const victim = this.fairVictim(owner, own.length);
      if (!victim) {
        throw new SandgateError(
          "TOO_MANY_SESSIONS",
          `the server's maximum of ${this.options.max} live sessions is reached and no caller holds an idle session it must give up for you; stop one you no longer need (stop_session) or retry later`,
          { data: { max: this.options.max, retry_after: this.fullRetryAfterS(own.length) } },
        );
      }
      const idleS = Math.round((Date.now() - victim.lastUsedAt) / 1000);
      const ending: Promise<void> = this.end(
        victim,
        `ended after ${idleS} s idle to make room for another caller: the server's maximum of ${this.options.max} live sessions was reached and this caller held the most`,
      )
        .catch(() => undefined)
        .finally(() => this.ending.delete(ending));
      this.ending.add(ending);
    }
    const sessionId = id ?? randomUUID();
    // A fresh directory per incarnation: owners sharing an id, or a new session taking an ended
    // one's id, never share files.
    const workspaceDir = join(this.runtime.workspacesDir, `${sessionId}-${randomBytes(6).toString("hex")}`);
    // Claimed before it exists: a mount under the workspaces directory without a mark is a leftover.
    this.reaper.claim(workspaceDir);
    mkdirSync(workspaceDir, { recursive: true, mode: 0o700 });
    giveToSandbox(this.runtime, workspaceDir);
    const mounting = this.filesystems.mount(workspaceDir);
    const session = new Session(
      owner,
      sessionId,
      id === undefined,
      workspaceDir,
      mounting.then(
        (mounted) => {
          session.setFilesystem(mounted);
        },
        (error: unknown) => {
          throw new SandgateError("SANDBOX_FAILED", `session ${sessionId}'s workspace could not be prepared; stop it and start a new one`, { cause: error });
        },
      ),
    );
    // A failure is reported to the session's calls; nobody else waits on it.
    session.ready.catch(() => undefined);
    this.sessions.set(session.key, session);
    if (session.shared) this.minted.set(session.id, session);
    this.ended.delete(session.key);
    return session;
  }

  /** `owner`'s own live session `id`, else the server-minted one with that id. */
  private find(owner: string, id: string): Session | undefined {
    return this.sessions.get(sessionKey(owner, id)) ?? this.minted.get(id);
  }

  /**
   * The live session `id` that `owner` may use; a typed error says whether it never existed or
   * has ended. Another owner's session with an id it named is not seen at all: the answer is the
   * same as for an id no one uses.
   */
  get(owner: string, id: string): Session {
    const session = this.find(owner, id);
    if (session) return session;
    const why = this.endedReason(owner, id);
    if (why) throw new SandgateError("SESSION_EXPIRED", `session ${id} has ended (${why}); start a new one`, { data: { sessionId: id } });
    throw new SandgateError("SESSION_NOT_FOUND", `no session with id ${id}; create one first or omit session_id for a stateless call`, {
      data: { sessionId: id },
    });
  }

  /** `session` is live (not ended, not replaced by a new session with its id). */
  isCurrent(session: Session): boolean {
    return this.sessions.get(session.key) === session;
  }

  has(owner: string, id: string): boolean {
    return this.find(owner, id) !== undefined;
  }

  /** Why the session `id` that `owner` used ended, if it did and is still remembered. */
  endedReason(owner: string, id: string): string | undefined {
    return this.ended.get(sessionKey(owner, id)) ?? this.ended.get(mintedKey(id));
  }

  /** `owner`'s live sessions. */
  list(owner: string): SessionInfo[] {
    return this.ownedBy(owner).map((s) => this.info(s));
  }

  /** Every live session of every owner (admin views; callers see only their own). */
  listAll(): SessionInfo[] {
    return [...this.sessions.values()].map((s) => this.info(s));
  }

  private ownedBy(owner: string): Session[] {
    return [...this.sessions.values()].filter((s) => s.owner === owner);
  }

  /** How many live sessions each owner holds. */
  private counts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const s of this.sessions.values()) counts.set(s.owner, (counts.get(s.owner) ?? 0) + 1);
    return counts;
  }

  /**
   * At the global maximum, the session that gives way to `owner` (holding `own`): the least
   * recently used idle one (idle at least evictIdleAfterMs) of the owner holding the most, if
   * that owner must give way to `owner` (admission's mustGiveWay).
   */
  private fairVictim(owner: string, own: number): Session | undefined {
    const counts = this.counts();
    const idleSince = Date.now() - (this.options.evictIdleAfterMs ?? this.options.idleTtlMs);
    let victim: Session | undefined;
    for (const s of this.sessions.values()) {
      const count = counts.get(s.owner) ?? 0;
      if (s.owner === owner || s.inUse || s.lastUsedAt > idleSince || !mustGiveWay(count, own)) continue;
      const best = victim ? (counts.get(victim.owner) ?? 0) : -1;
      if (count > best || (count === best && victim !== undefined && s.lastUsedAt < victim.lastUsedAt)) victim = s;
    }
    return victim;
  }

  /**
   * Seconds until a slot is expected at the global maximum for an owner holding `own`: the
   * soonest any session expires, or one of an owner that must give way (mustGiveWay) has been
   * idle long enough to. A session in use counts as just used.
   */
  private fullRetryAfterS(own: number): number {
    const now = Date.now();
    const counts = this.counts();
    const evictMs = this.options.evictIdleAfterMs ?? this.options.idleTtlMs;
    let soonest = Infinity;
    for (const s of this.sessions.values()) {
      const since = s.inUse ? now : s.lastUsedAt;
      const gives = mustGiveWay(counts.get(s.owner) ?? 0, own) ? Math.min(evictMs, this.options.idleTtlMs) : this.options.idleTtlMs;
      soonest = Math.min(soonest, since + gives);
    }
    return Math.max(1, Math.ceil((soonest - now) / 1000));
  }

  /** Seconds until the first of `sessions` expires when left idle; a few when all are in use. */
  private retryAfterS(sessions: Session[]): number {
    const now = Date.now();
    const idle = sessions.filter((s) => !s.inUse).map((s) => s.lastUsedAt + this.options.idleTtlMs - now);
    if (idle.length === 0) return 5;
    return Math.max(1, Math.ceil(Math.min(...idle) / 1000));
  }

  info(session: Session): SessionInfo {
    return {
      id: session.id,
      owner: session.owner,
      shared: session.shared,
      createdAt: new Date(session.createdAt).toISOString(),
      lastUsedAt: new Date(session.lastUsedAt).toISOString(),
      expiresAt: new Date(session.lastUsedAt + this.options.idleTtlMs).toISOString(),
      calls: session.calls,
      runners: session.runners,
      busy: session.busy,
      workspace: "/workspace",
      envNames: session.env.names,
    };
  }

  /**
   * The session's resident runner for `kind`, started on first use or after it died: inside the
   * session's machine (one sandbox for all its languages) where the host allows it (machinesSupported).
   */
  async sandboxFor(session: Session, kind: RunnerKind, limits: ResolvedLimits = this.options.limits): Promise<Sandbox> {
    const current = session.sandbox(kind);
    const fixed = current?.alive ? current.limits : session.machine?.alive ? session.machine.limits : undefined;
    if (fixed && sandboxShapeKey(fixed) !== sandboxShapeKey(limits)) {
      throw new SandgateError(
        "INVALID_INPUT",
        `session ${session.id} already runs with flavor ${fixed.flavor} (${fixed.memoryMb} MB); memory and flavor are fixed for the life of a session's sandbox, which all its languages share`,
        { data: { field: "flavor" } },
      );
    }
    if (current?.alive) return current;
    if (current) await current.dispose();
    await session.ready;
    const machine = await this.machineFor(session, limits);
    const sandbox = await startSandbox(this.runtime, { kind, limits, workspaceDir: session.workspaceDir, ...(machine ? { machine } : {}) });
    if (!this.isCurrent(session)) {
      await sandbox.dispose();
      throw new SandgateError("SESSION_EXPIRED", `session ${session.id} ended while starting`, { data: { sessionId: session.id } });
    }
    session.adoptSandbox(kind, sandbox);
    if (machine) void sandbox.whenClosed().then(() => this.settle(session));
    return sandbox;
  }

  /** The session's machine, started with the first runner (or after it stopped); none where the host cannot join one. */
  private machineFor(session: Session, limits: ResolvedLimits): Promise<SessionMachine | undefined> {
    // Runners of two languages may start at once: they share one start.
    let starting = this.machinesStarting.get(session);
    if (!starting) {
      starting = this.startMachine(session, limits).finally(() => this.machinesStarting.delete(session));
      this.machinesStarting.set(session, starting);
    }
    return starting;
  }

  private async startMachine(session: Session, limits: ResolvedLimits): Promise<SessionMachine | undefined> {
    if (!machinesSupported(this.runtime)) return undefined;
    const current = session.machine;
    if (current?.alive) return current;
    if (current) await current.dispose();
    session.setMachine(undefined);
    const machine = await SessionMachine.start(this.runtime, limits, session.workspaceDir);
    if (!this.isCurrent(session)) {
      await machine.dispose();
      throw new SandgateError("SESSION_EXPIRED", `session ${session.id} ended while starting`, { data: { sessionId: session.id } });
    }
    session.setMachine(machine);
    return machine;
  }

  /**
   * Stops the session's machine once no runner is left in it and no call runs (its runners were
   * evicted or died): what it holds (/tmp) would otherwise count against no lease.
   */
  async settle(session: Session): Promise<void> {
    const machine = session.machine;
    if (!machine || session.busy || this.machinesStarting.has(session) || session.runners.some((kind) => session.sandbox(kind)?.alive)) return;
    session.setMachine(undefined);
    await machine.dispose();
  }

  /** Stops the session `id` that `owner` may use (SESSION_NOT_FOUND for another owner's it named). */
  async stop(owner: string, id: string, why = "stopped"): Promise<void> {
    await this.end(this.get(owner, id), why);
  }

  /** Stops every session of `owner` (tests and embedders that end a caller's work at once). */
  async stopOwnedBy(owner: string, why: string): Promise<void> {
    await Promise.all(this.ownedBy(owner).map((s) => this.end(s, why)));
  }

  private async end(session: Session, why: string): Promise<void> {
    if (!this.isCurrent(session)) return;
    this.sessions.delete(session.key);
    this.remember(session.key, why);
    if (session.shared) {
      this.minted.delete(session.id);
      this.remember(mintedKey(session.id), why);
    }
    await Promise.all(session.releaseSandboxes().map((s) => s.dispose()));
    const machine = session.machine;
    session.setMachine(undefined);
    await machine?.dispose();
    await this.options.onEnd?.(session).catch(() => undefined);
    // Nothing uses the workspace any more: its filesystem (if any) is unmounted and its image deleted.
    await session.ready.catch(() => undefined);
    await this.filesystems.release(session.workspaceDir);
    // The sandboxes are gone, so nothing writes there any more. The directory leaves at once and is
    // deleted in the background (retried if that fails); a new session with this id has its own.
    if (session.filesystem) await this.reaper.removeUnmounted(session.workspaceDir);
    else await this.reaper.remove(session.workspaceDir);
  }

  async stopAll(why = "sandgate stopped"): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => this.end(s, why)));
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.stopAll();
    await Promise.all([...this.ending]);
    // A probe under way holds a mount until it ends.
    await this.filesystems.state();
    await this.reaper.close();
  }

  private remember(key: string, why: string): void {
    this.ended.set(key, why);
    if (this.ended.size > REMEMBER_ENDED) {
      const oldest = this.ended.keys().next().value;
      if (oldest !== undefined) this.ended.delete(oldest);
    }
  }

  private async expireIdle(): Promise<void> {
    const now = Date.now();
    const idle = [...this.sessions.values()].filter((s) => !s.inUse && now - s.lastUsedAt > this.options.idleTtlMs);
    await Promise.all(idle.map((s) => this.end(s, `idle for more than ${Math.round(this.options.idleTtlMs / 1000)} s`)));
  }
}

/** Where a minted session's end is remembered: any holder of its id may ask why it ended. */
function mintedKey(id: string): string {
  return sessionKey("", id);
}

/** Session ids given back in a refusal at most (a caller may hold many). */
const NAMED_SESSIONS = 10;

/**
 * The caller's own session ids, most recently used first: an agent that cannot stop sessions (the
 * codemode profile has no stop_session) can carry on in one of them instead of waiting for expiry.
 */
function namedSessions(own: readonly Session[]): string {
  const ids = [...own].sort((a, b) => b.lastUsedAt - a.lastUsedAt).map((s) => `\`${s.id}\``);
  return `session_id ${ids.slice(0, NAMED_SESSIONS).join(", ")}${ids.length > NAMED_SESSIONS ? `, … ${ids.length - NAMED_SESSIONS} more` : ""}`;
}
