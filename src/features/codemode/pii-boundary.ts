// PII at the boundary: a vault per session (per caller for calls without one), the kinds each
// upstream server and tool is scanned for, and per execution the guard of what leaves for the agent.

import type { PiiConfig } from "../../config/index.js";
import type { OutputGuard } from "../../execution/index.js";
import { BoundaryVault, compilePatterns, PII_TYPES, ScanTurns, tokenLabel, VaultBudget, type CompiledPattern, type DetectOptions, type PiiCounts } from "../pii/index.js";

/** How often, at most, vaults of callers gone idle are looked for. */
const SWEEP_MS = 10_000;
/** Callers' vaults kept at once; the least recently used goes first. */
const MAX_CALLER_VAULTS = 256;
/** A token's shape, as the vault issues them: `[EMAIL_1]`, `[TICKET_12]`. */
const TOKEN = /\[([A-Z][A-Z0-9_]{0,39})_[1-9][0-9]{0,8}\]/g;
/** Tokens a note on a tool call names at most. */
const MAX_NOTED_TOKENS = 3;

interface CallerVault {
  vault: BoundaryVault;
  lastUsed: number;
}

/** One caller's budget and how many of its vaults count against it (the entry goes with the last). */
interface CallerBudget {
  budget: VaultBudget;
  vaults: number;
}

export class PiiBoundary {
  /** Session vaults, by owner and session id: they end with their session (sessionEnded). */
  private readonly sessions = new Map<string, BoundaryVault>();
  /** One vault per caller for its calls without a session, dropped once idle for sessions.idleTtlS. */
  private readonly callers = new Map<string, CallerVault>();
  private readonly patterns: CompiledPattern[];
  private readonly budget: VaultBudget;
  /** Each caller's budget while it has vaults. */
  private readonly callerBudgets = new Map<string, CallerBudget>();
  /** Turns at scanning big texts, taken by callers round-robin (see ScanTurns). */
  readonly turns = new ScanTurns();
  /** The labels of every kind a token may name (EMAIL, PHONE, a custom pattern's name in capitals). */
  readonly labels: ReadonlySet<string>;
  private lastSweep = 0;

  constructor(
    private readonly config: PiiConfig,
    private readonly idleTtlMs: number,
    totalValues = config.maxTotalValues,
    private readonly callerValues = config.maxCallerValues,
  ) {
    this.patterns = compilePatterns(config.patterns);
    this.budget = new VaultBudget(totalValues);
    this.labels = new Set([...PII_TYPES, ...config.patterns.map((p) => p.name)].map(tokenLabel));
  }

  get enabled(): boolean {
    return this.config.enabled;
  }

  /** What results of `server`'s tool (known by `names`: its name and aliases) are scanned for; undefined when off. */
  optionsFor(server: string, names: readonly string[]): DetectOptions | undefined {
    if (!this.config.enabled) return undefined;
    const rules = this.config.tools;
    const forServer = Object.hasOwn(rules, server) ? rules[server] : undefined;
    const key = names.map((name) => `${server}.${name}`).find((k) => Object.hasOwn(rules, k));
    const forTool = key === undefined ? undefined : rules[key];
    if ((forTool?.enabled ?? forServer?.enabled ?? true) === false) return undefined;
    const types = forTool?.types ?? forServer?.types ?? this.config.types;
    return types.length === 0 ? undefined : { types, patterns: this.patterns };
  }

  /** The vault of `owner`'s session, or of its calls without one; created when `create`. */
  vault(owner: string, sessionId: string | null, create: boolean): BoundaryVault | undefined {
    if (sessionId !== null) {
      const key = `${owner}\u0000${sessionId}`;
      let vault = this.sessions.get(key);
      if (!vault && create) this.sessions.set(key, (vault = this.newVault(owner)));
      return vault;
    }
    const now = Date.now();
    this.sweep(now);
    let entry = this.callers.get(owner);
    if (entry && now - entry.lastUsed > this.idleTtlMs) {
      this.dropCaller(owner, entry);
      entry = undefined;
    }
    if (!entry && create) {
      // The least recently used caller's vault goes (Map order is the order of last use, see below).
      if (this.callers.size >= MAX_CALLER_VAULTS) {
        const [oldest, old] = this.callers.entries().next().value as [string, CallerVault];
        this.dropCaller(oldest, old);
      }
      entry = { vault: this.newVault(owner), lastUsed: now };
    }
    if (entry) {
      entry.lastUsed = now;
      this.callers.delete(owner);
      this.callers.set(owner, entry);
    }
    return entry?.vault;
  }

  /** The PII side of one execution's tool calls and output. */
  execution(owner: string, sessionId: string | null): ExecutionPii {
    return new ExecutionPii(this, owner, sessionId, this.patterns);
  }

  /** The guard of text read from `owner`'s session (file_read): its known values and the kinds its tool results were scanned for. */
  guardFor(owner: string, sessionId: string): OutputGuard | undefined {
    const vault = this.vault(owner, sessionId, false);
    if (!vault || vault.size === 0) return undefined;
    const options: DetectOptions = { types: [...vault.kinds], patterns: this.patterns };
    return {
      active: true,
      text: (text) => vault.tokenizeText(text, options),
      value: (value) => vault.tokenizeValue(value, options),
      counts: () => ({}),
      turn: () => this.turns.turn(owner),
    };
  }

  sessionEnded(owner: string, sessionId: string): void {
    const key = `${owner}\u0000${sessionId}`;
    const vault = this.sessions.get(key);
    if (vault) this.release(owner, vault);
    this.sessions.delete(key);
  }

  /** A vault counting against the server's budget and `owner`'s. */
  private newVault(owner: string): BoundaryVault {
    let caller = this.callerBudgets.get(owner);
    if (!caller) this.callerBudgets.set(owner, (caller = { budget: new VaultBudget(this.callerValues), vaults: 0 }));
    caller.vaults++;
    return new BoundaryVault(undefined, [this.budget, caller.budget]);
  }

  private release(owner: string, vault: BoundaryVault): void {
    vault.release();
    const caller = this.callerBudgets.get(owner);
    if (caller && --caller.vaults <= 0) this.callerBudgets.delete(owner);
  }

  private dropCaller(owner: string, entry: CallerVault): void {
    this.release(owner, entry.vault);
    this.callers.delete(owner);
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_MS) return;
    this.lastSweep = now;
    for (const [owner, entry] of this.callers) if (now - entry.lastUsed > this.idleTtlMs) this.dropCaller(owner, entry);
  }
}

/**
 * One execution: tokens in its tool calls' arguments swapped back, values in their results learnt,
 * and its output guarded with the vault's values plus the detectors its tool calls had on.
 */
export class ExecutionPii implements OutputGuard {
  private vault: BoundaryVault | undefined;
  /** Kinds the execution's PII-enabled tool calls were scanned for: run over its outgoing text too. */
  private readonly kinds = new Set<string>();
  private detect: DetectOptions | undefined;
  private readonly counted: PiiCounts = {};

  constructor(
    private readonly boundary: PiiBoundary,
    private readonly owner: string,
    private readonly sessionId: string | null,
    private readonly patterns: CompiledPattern[],
  ) {
    // A session's vault is taken now (an empty one costs a few maps): a tool call ending after its
    // session did must not put a vault back for the next session of that id.
    this.vault = boundary.vault(owner, sessionId, sessionId !== null);
    // A session's code may hold values from its earlier calls: its output is scanned for their kinds
    // from the start (an earlier result printed upper case now is still found).
    if (sessionId !== null) for (const kind of this.vault?.kinds ?? []) this.kinds.add(kind);
  }

  get active(): boolean {
    return this.vault !== undefined && (this.vault.size > 0 || this.kinds.size > 0);
  }

  /** `args` with the tokens this session's vault issued swapped for their real values. */
  detokenize<T>(args: T): T {
    return this.vault ? this.vault.detokenize(args) : args;
  }

  /**
   * Tokens of a PII kind in a tool call's arguments (their JSON text) that this session's vault did
   * not issue, at most a few: they reach the tool as typed, which the agent should know (a token
   * from another session, or from before its session expired, names nobody here).
   */
  unissuedTokens(argsJson: string): string[] {
    if (!this.boundary.enabled || !argsJson.includes("[")) return [];
    const found: string[] = [];
    for (const match of argsJson.matchAll(TOKEN)) {
      const token = match[0];
      if (!this.boundary.labels.has(match[1]!) || this.vault?.issued(token) === true || found.includes(token)) continue;
      found.push(token);
      if (found.length === MAX_NOTED_TOKENS) break;
    }
    return found;
  }

  /** Learns the values in a result (or error text) of `server`'s tool; their counts per kind, or undefined when off or none. */
  learn(server: string, names: readonly string[], value: unknown): PiiCounts | undefined {
    const options = this.boundary.optionsFor(server, names);
    if (!options) return undefined;
    this.vault ??= this.boundary.vault(this.owner, this.sessionId, true);
    for (const type of options.types) this.kinds.add(type);
    this.detect = undefined;
    const counts = this.vault?.learn(value, options) ?? {};
    return Object.keys(counts).length > 0 ? counts : undefined;
  }

  text(text: string, count: boolean): string {
    if (!this.vault) return text;
    return this.vault.tokenizeText(text, this.options(), count ? this.counted : undefined);
  }

  /** `value` with the values this vault holds tokenized (keys too), uncounted: for what is learnt from a result's shape. */
  keysTokenized(value: unknown): unknown {
    return this.vault ? this.vault.tokenizeValue(value) : value;
  }

  cutBefore(text: string, at: number): number {
    return this.vault ? this.vault.cutBefore(text, at, this.options()) : at;
  }

  value(value: unknown): unknown {
    if (!this.vault) return value;
    return this.vault.tokenizeValue(value, this.options(), this.counted);
  }

  counts(): PiiCounts {
    return { ...this.counted };
  }

  turn(): Promise<void> {
    return this.boundary.turns.turn(this.owner);
  }

  private options(): DetectOptions | undefined {
    if (this.kinds.size === 0) return undefined;
    this.detect ??= { types: [...this.kinds], patterns: this.patterns };
    return this.detect;
  }
}
