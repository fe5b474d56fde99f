// Sessions: a workspace directory plus one resident sandbox per runner kind, kept between
// calls, with a maximum count, idle expiry, and calls to one session run one at a time.

import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SandgateError } from "../errors/index.js";
import type { ResolvedLimits, RunnerKind, Sandbox, SandboxRuntime } from "../sandbox/index.js";
import { giveToSandbox, sandboxShapeKey, startSandbox } from "../sandbox/index.js";

export interface SessionInfo {
  id: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  calls: number;
  runners: RunnerKind[];
  busy: boolean;
  workspace: string;
}

export interface SessionManagerOptions {
  max: number;
  idleTtlMs: number;
  limits: ResolvedLimits;
}

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const REMEMBER_ENDED = 1000;

export class Session {
  readonly createdAt = Date.now();
  lastUsedAt = Date.now();
  calls = 0;
  busy = false;
  readonly sandboxes = new Map<RunnerKind, Sandbox>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly id: string,
    readonly workspaceDir: string,
  ) {}

  /** Runs `task` after every earlier call of this session has finished. */
  serialize<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task, task);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

export class SessionManager {
  private readonly sessions = new Map<string, Session>();
  private readonly ended = new Map<string, string>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly options: SessionManagerOptions,
  ) {
    this.sweeper = setInterval(() => void this.expireIdle(), Math.min(30_000, Math.max(250, options.idleTtlMs / 4)));
    this.sweeper.unref();
  }

  get count(): number {
    return this.sessions.size;
  }

  /** Returns the live session `id`, or creates it (with a fresh id when none is given). */
  open(id?: string): Session {
    if (id !== undefined) {
      if (!SESSION_ID.test(id)) {
        throw new SandgateError("INVALID_INPUT", "session id must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit", {
          data: { field: "session_id" },
        });
      }
      const existing = this.sessions.get(id);
      if (existing) return existing;
    }
    if (this.sessions.size >= this.options.max) {
      throw new SandgateError("TOO_MANY_SESSIONS", `the maximum of ${this.options.max} sessions is reached; stop one (stop_session) or wait for idle ones to expire`, {
        data: { max: this.options.max },
      });
    }
    const sessionId = id ?? randomUUID();
    const workspaceDir = join(this.runtime.workspacesDir, sessionId);
    mkdirSync(workspaceDir, { recursive: true, mode: 0o700 });
    giveToSandbox(this.runtime, workspaceDir);
    const session = new Session(sessionId, workspaceDir);
    this.sessions.set(sessionId, session);
    this.ended.delete(sessionId);
    return session;
  }

  /** The live session `id`; a typed error says whether it never existed or has ended. */
  get(id: string): Session {
    const session = this.sessions.get(id);
    if (session) return session;
    const why = this.ended.get(id);
    if (why) throw new SandgateError("SESSION_EXPIRED", `session ${id} has ended (${why}); start a new one`, { data: { sessionId: id } });
    throw new SandgateError("SESSION_NOT_FOUND", `no session with id ${id}; create one first or omit session_id for a stateless call`, {
      data: { sessionId: id },
    });
  }

  has(id: string): boolean {
    return this.sessions.has(id);
  }

  /** Why session `id` ended, if it did and is still remembered. */
  endedReason(id: string): string | undefined {
    return this.ended.get(id);
  }

  list(): SessionInfo[] {
    return [...this.sessions.values()].map((s) => this.info(s));
  }

  info(session: Session): SessionInfo {
    return {
      id: session.id,
      createdAt: new Date(session.createdAt).toISOString(),
      lastUsedAt: new Date(session.lastUsedAt).toISOString(),
      expiresAt: new Date(session.lastUsedAt + this.options.idleTtlMs).toISOString(),
      calls: session.calls,
      runners: [...session.sandboxes.keys()],
      busy: session.busy,
      workspace: session.workspaceDir,
    };
  }

  /** The session's resident sandbox for `kind`, started on first use or after it died. */
  async sandboxFor(session: Session, kind: RunnerKind, limits: ResolvedLimits = this.options.limits): Promise<Sandbox> {
    const current = session.sandboxes.get(kind);
    if (current?.alive) {
      if (sandboxShapeKey(current.limits) !== sandboxShapeKey(limits)) {
        throw new SandgateError(
          "INVALID_INPUT",
          `session ${session.id} already runs ${kind} with flavor ${current.limits.flavor} (${current.limits.memoryMb} MB); memory and flavor are fixed for the life of a session's sandbox`,
          { data: { field: "flavor" } },
        );
      }
      return current;
    }
    if (current) await current.dispose();
    const sandbox = await startSandbox(this.runtime, { kind, limits, workspaceDir: session.workspaceDir });
    if (!this.sessions.has(session.id)) {
      await sandbox.dispose();
      throw new SandgateError("SESSION_EXPIRED", `session ${session.id} ended while starting`, { data: { sessionId: session.id } });
    }
    session.sandboxes.set(kind, sandbox);
    return sandbox;
  }

  async stop(id: string, why = "stopped"): Promise<void> {
    const session = this.get(id);
    this.sessions.delete(id);
    this.remember(id, why);
    await Promise.all([...session.sandboxes.values()].map((s) => s.dispose()));
    session.sandboxes.clear();
    rmSync(session.workspaceDir, { recursive: true, force: true });
  }

  async stopAll(why = "sandgate stopped"): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((id) => this.stop(id, why)));
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    return this.stopAll();
  }

  private remember(id: string, why: string): void {
    this.ended.set(id, why);
    if (this.ended.size > REMEMBER_ENDED) {
      const oldest = this.ended.keys().next().value;
      if (oldest !== undefined) this.ended.delete(oldest);
    }
  }

  private async expireIdle(): Promise<void> {
    const now = Date.now();
    const idle = [...this.sessions.values()].filter((s) => !s.busy && now - s.lastUsedAt > this.options.idleTtlMs);
    await Promise.all(idle.map((s) => this.stop(s.id, `idle for more than ${Math.round(this.options.idleTtlMs / 1000)} s`)));
  }
}
