// engine.sessions: starting, finding, listing and stopping sessions for their owner; a caller
// sees another owner's session only through a server-minted id it holds, and a closing engine starts none.

import { SandgateError } from "../errors/index.js";
import type { WorkspaceFilesystems } from "../sandbox/index.js";
import type { EngineFiles } from "./engine-files.js";
import { checkEnv } from "./env-vars.js";
import { LOCAL_OWNER, type SessionInfo, type SessionManager } from "./sessions.js";
import type { WorkspaceCopy } from "./workspace-files.js";

export interface SessionOptions {
  /** The session's environment variables, set in every call (replacing any set before, for a live session). */
  env?: Record<string, string>;
}

export interface EnsuredSession {
  info: SessionInfo;
  /** No live session had this id: this call started it. */
  created: boolean;
  /** Why an earlier session with this id ended, so callers can tell the user its state is gone. */
  endedBefore?: string;
}

export interface ForkOptions {
  /** The new session's id; a minted one when omitted. A live session of the caller's with this id is refused. */
  id?: string;
}

export interface ForkedSession {
  info: SessionInfo;
  /** What the copy of the workspace moved. */
  copied: WorkspaceCopy;
}

/** Sessions of every owner; `owner` defaults to LOCAL_OWNER for library callers. */
export class EngineSessions {
  /** @internal Built by the Engine; `assertOpen` throws SHUTTING_DOWN once it closes. */
  constructor(
    /** @internal The manager itself, for tests and diagnostics that look at one session's host state. */
    readonly manager: SessionManager,
    private readonly assertOpen: () => void,
    private readonly files: EngineFiles,
  ) {}

  /** Starts a session of `owner` (or returns its live one with this id). */
  create(id?: string, owner: string = LOCAL_OWNER, options: SessionOptions = {}): SessionInfo {
    this.assertOpen();
    const env = options.env === undefined ? undefined : checkEnv(options.env, "env");
    const session = this.manager.open(owner, id);
    if (env) session.env.set(env);
    return this.manager.info(session);
  }

  /** The live session `id`, started when there is none. */
  ensure(id: string, owner: string = LOCAL_OWNER, options: SessionOptions = {}): EnsuredSession {
    this.assertOpen();
    const env = options.env === undefined ? undefined : checkEnv(options.env, "env");
    const created = !this.manager.has(owner, id);
    const endedBefore = created ? this.manager.endedReason(owner, id) : undefined;
    const session = this.manager.open(owner, id);
    if (env) session.env.set(env);
    const info = this.manager.info(session);
    return { info, created, ...(endedBefore !== undefined ? { endedBefore } : {}) };
  }

  /**
   * A new session of `owner` holding a copy of its session `sourceId`'s workspace and variables.
   * Interpreter state (variables, imports) is not copied: the new session's runners start fresh.
   * When the copy fails the new session is stopped, so nothing half-made is left.
   */
  async fork(sourceId: string, owner: string = LOCAL_OWNER, options: ForkOptions = {}): Promise<ForkedSession> {
    this.assertOpen();
    const source = this.manager.get(owner, sourceId);
    if (options.id !== undefined && this.manager.has(owner, options.id)) {
      throw new SandgateError("INVALID_INPUT", `a live session named ${JSON.stringify(options.id)} exists; fork into a new id, or stop that session first`, { data: { field: "new_session_id" } });
    }
    const target = this.manager.open(owner, options.id);
    try {
      await target.ready;
      const copied = await this.files.copyInto(source, target);
      target.env.set(source.env.vars);
      return { info: this.manager.info(target), copied };
    } catch (error) {
      await this.manager.stop(owner, target.id, `its fork from session ${sourceId} failed`).catch(() => undefined);
      throw error;
    }
  }

  /** `owner`'s live session `id`: SESSION_EXPIRED when it ended, SESSION_NOT_FOUND when it never existed or is another owner's by an id that owner named. */
  get(id: string, owner: string = LOCAL_OWNER): SessionInfo {
    return this.manager.info(this.manager.get(owner, id));
  }

  /** `owner`'s live sessions; nobody sees another owner's. */
  list(owner: string = LOCAL_OWNER): SessionInfo[] {
    return this.manager.list(owner);
  }

  /** Every live session of every owner (admin views and tests; callers see only their own). */
  listAll(): SessionInfo[] {
    return this.manager.listAll();
  }

  /** Live sessions of all owners. */
  get count(): number {
    return this.manager.count;
  }

  /** Stops `owner`'s session `id`; another owner's named id is SESSION_NOT_FOUND like one no one uses; a held minted id stops it. */
  stop(id: string, owner: string = LOCAL_OWNER): Promise<void> {
    return this.manager.stop(owner, id);
  }

  /** Stops every session of `owner` (tests and embedders that end a caller's work at once). */
  stopOwnedBy(owner: string, why: string): Promise<void> {
    return this.manager.stopOwnedBy(owner, why);
  }

  /** Whether each workspace gets its own size- and inode-limited filesystem (probed once, at start). */
  get filesystems(): WorkspaceFilesystems {
    return this.manager.filesystems;
  }
}
