// Who gives way when the server is full: the sandboxes sessions hold and the calls running, the
// idle session sandbox a waiting caller gets, and how long a refused caller should wait.

import type { RunnerKind, Sandbox } from "../sandbox/index.js";
import type { Admission } from "./admission.js";
import type { Session } from "./session.js";

export interface EvictionOptions {
  admission: Admission;
  /** Stops one pool spare; false when there is none. */
  shrinkPool: () => boolean;
  /** Disposes of an evicted sandbox in the background. */
  retire: (sandbox: Sandbox) => void;
  /** sessions.evictIdleAfterS: how long a session sandbox idles before anyone may take it. */
  evictIdleAfterMs: number;
}

export class Eviction {
  /** Sandboxes sessions hold, for eviction under pressure; each leaves this map when it closes. */
  private readonly sessionSandboxes = new Map<Sandbox, { session: Session; kind: RunnerKind }>();
  /** Sandboxes running a call, with the caller and the time the call is stopped at the latest. */
  private readonly running = new Map<Sandbox, { owner: string; deadline: number }>();

  constructor(private readonly options: EvictionOptions) {}

  /** `sandbox` is `session`'s resident sandbox for `kind` until it closes. */
  holdForSession(sandbox: Sandbox, session: Session, kind: RunnerKind): void {
    this.sessionSandboxes.set(sandbox, { session, kind });
    void sandbox.whenClosed().then(() => this.sessionSandboxes.delete(sandbox));
  }

  /** A call of `owner` runs in `sandbox` until `deadline` at the latest; call the returned function when it ends. */
  markRunning(sandbox: Sandbox, owner: string, deadline: number): () => void {
    this.running.set(sandbox, { owner, deadline });
    return () => this.running.delete(sandbox);
  }

  /** Sandboxes running a call now (close() stops them). */
  get busySandboxes(): Sandbox[] {
    return [...this.running.keys()];
  }

  /**
   * Makes room for a waiting call of `owner`. An owner at its share of the sandboxes only gets
   * room from its own sandboxes. Otherwise: a pool spare gives way first; then, at once, the
   * idle session sandbox (least recently used) of the owner holding the most sandboxes, when
   * that owner must give way to `owner` (admission's mustGiveWay); else any session's sandbox
   * idle at least sessions.evictIdleAfterS. A session that loses its sandbox keeps its files;
   * its next call in that language starts a fresh interpreter and says so (state_reset).
   * Running calls are never stopped.
   */
  makeRoomFor(owner: string): void {
    const { admission } = this.options;
    if (admission.atCap(owner)) {
      this.evictIdleSessionSandbox((session) => session.owner === owner);
      return;
    }
    if (this.options.shrinkPool()) return;
    if (this.evictIdleSessionSandbox((session) => admission.mustGiveWay(session.owner, owner), true)) return;
    this.evictIdleSessionSandbox(() => true);
  }

  /**
   * Stops the idle sandbox of a session `eligible` accepts: the one of the owner holding the most
   * sandboxes when `greedyFirst` (then the least recently used of its own; idle any time), else
   * the least recently used idle at least sessions.evictIdleAfterS. False when none qualifies.
   */
  private evictIdleSessionSandbox(eligible: (session: Session) => boolean, greedyFirst = false): boolean {
    const oldestAllowed = greedyFirst ? Infinity : Date.now() - this.options.evictIdleAfterMs;
    const rank = (session: Session): number => (greedyFirst ? this.options.admission.heldBy(session.owner) : 0);
    let victim: { sandbox: Sandbox; session: Session; kind: RunnerKind } | undefined;
    for (const [sandbox, { session, kind }] of this.sessionSandboxes) {
      if (session.busy || session.sandbox(kind) !== sandbox || session.lastUsedAt > oldestAllowed || !eligible(session)) continue;
      const better =
        !victim ||
        rank(session) > rank(victim.session) ||
        (rank(session) === rank(victim.session) && session.lastUsedAt < victim.session.lastUsedAt);
      if (better) victim = { sandbox, session, kind };
    }
    if (!victim) return false;
    victim.session.evict(victim.kind, victim.sandbox);
    this.sessionSandboxes.delete(victim.sandbox);
    this.options.retire(victim.sandbox);
    return true;
  }

  /**
   * Seconds until room is expected for `owner` (the Retry-After of a refusal): the soonest a
   * running call is expected to end (its deadline, or the queue wait if sooner: it may end any
   * time), plus, for a session's sandbox that will not give way at once, the idle time before
   * eviction; or an idle session sandbox becomes evictable. Only `owner`'s own count when it is
   * at its share. Undefined when nothing is known to free up.
   */
  expectedWaitS(owner: string): number | undefined {
    const { admission, evictIdleAfterMs: evictMs } = this.options;
    const queueWaitMs = admission.options.waitMs;
    const now = Date.now();
    const capped = admission.atCap(owner);
    const givesWayAtOnce = (other: string): boolean => !capped && admission.mustGiveWay(other, owner);
    let soonest = Infinity;
    for (const [sandbox, { owner: holder, deadline }] of this.running) {
      if (capped && holder !== owner) continue;
      const stays = this.sessionSandboxes.has(sandbox) && !givesWayAtOnce(holder);
      soonest = Math.min(soonest, Math.min(deadline, now + queueWaitMs) + (stays ? evictMs : 0));
    }
    for (const [sandbox, { session }] of this.sessionSandboxes) {
      if (this.running.has(sandbox) || (capped && session.owner !== owner)) continue;
      soonest = Math.min(soonest, givesWayAtOnce(session.owner) ? now : session.lastUsedAt + evictMs);
    }
    return soonest === Infinity ? undefined : Math.max(1, Math.ceil((soonest - now) / 1000));
  }
}
