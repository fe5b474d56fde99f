// Result building: turns a sandbox's raw run outcome into the ExecutionResult callers see
// (stdout/stderr/value shaped to the budgets, token counts, saved full outputs, error fields).

import type { SecuritySummary } from "./security-summary.js";
import type { RunImage, RunOutcome, RunStatus } from "../sandbox/index.js";
import { estimateLongTokens, nextTurn, shapeLongText, wholeText, type LongBytes, type Pause } from "./long-output.js";
import { savedText, shapeOutput, type SavedRef, type ShapedStream } from "./output.js";
import type { SavedStream } from "./saved-outputs.js";
import { shapeText, shapeValue } from "./shaping.js";
import { countTokens, estimateJsonTokens, estimateTokens } from "./tokens.js";
import { trimV8FatalReport } from "./v8-fatal-report.js";
import type { UpstreamCallRecord, UpstreamCallSummary } from "./upstream-call-scope.js";

export interface ErrorInfo {
  type: string;
  message: string;
  traceback: string;
}

export interface ExecutionResult {
  status: RunStatus;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  value?: unknown;
  /** "repr": `value` is the text form of a value JSON cannot carry (a repr, a table); else JSON. */
  valueKind?: "json" | "repr";
  error?: ErrorInfo;
  durationMs: number;
  truncated: boolean;
  sessionId: string | null;
  /**
   * Resource URIs (sandgate://outputs/{id}/{stream}) of the full stdout/stderr when they were
   * longer than shown; read them with engine.readSavedOutput, GET /outputs/{id}/{stream} or resources/read.
   */
  fullOutput?: { stdout?: string; stderr?: string };
  /** The session's interpreter state was lost in this call (timeout, crash, shell exit); files remain. */
  stateReset?: boolean;
  /** What was cut from stdout to fit the token budget, and where the full text is. */
  outputNote?: string;
  /** Images the code returned (plots, PIL images, image values, sandgate.show), in the order sent. */
  images?: ImageOutput[];
  /** Images dropped (over the size or count cap) or refused (not the type they claimed), and what to do instead. */
  imagesNote?: string;
  /** Upstream tools the code called, in order. */
  toolCalls: UpstreamCallRecord[];
  tokens: TokenCounts;
  /** The static analysis and the policy's action for this code (with governance on): top findings; all are in the audit. */
  security?: SecuritySummary;
  /** The execution's id in the audit trail (with governance on). */
  executionId?: string;
  /** PII values replaced by tokens in what reached the agent, per kind (for the audit; not on the wire). */
  pii?: Record<string, number>;
}

/** One image of a result: its type and its bytes in base64. */
export type ImageOutput = RunImage;

/** Token accounting (o200k): what reaches the agent against what stayed in the sandbox. */
export interface TokenCounts {
  /** Tokens of stdout, stderr and value as returned. */
  returned: number;
  /** Tokens of the full output before it was shortened for the agent. */
  output: number;
  /** Tokens of upstream tool results the code received; none of them reached the agent. */
  toolResults: number;
}

/** Keeps the full text of a stream that is shown shortened; undefined when it cannot be kept. */
export type SaveOutput = (stream: SavedStream, data: Buffer) => SavedRef | undefined;

export interface BuildResultOptions {
  /** Bytes of stdout and of stderr shown at most. */
  displayBytes: number;
  /** Tokens of stdout, and of the value, shown at most (codeMode.outputTokenBudget). */
  outputTokenBudget: number;
  sessionId: string | null;
  /** The upstream tool calls the code made, when code mode was on. */
  toolCalls?: UpstreamCallSummary;
  save: SaveOutput;
  /** Lets others use the event loop between two slices of shaping a long output; default: its next turn. */
  pause?: Pause;
}

const STATUS_ERROR_TYPE: Record<Exclude<RunStatus, "ok" | "error">, string> = {
  timeout: "Timeout",
  memory_limit: "MemoryLimit",
  output_limit: "OutputLimit",
  killed: "Killed",
};

/** Deepest nesting of a last-expression value that is returned as it is. */
const MAX_VALUE_DEPTH = 256;

/** Whether arrays and objects in `value` nest deeper than `max`; iterative, so any depth is safe to ask about. */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(node)) if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

/** A Node run that ran out of heap without V8's 2 KB report (GC traces, native stack with the binary's host path). */
function withoutV8Report(outcome: RunOutcome): RunOutcome {
  // A spilled stderr is megabytes the code printed itself; it is shown by its ends like any other.
  if (outcome.spilled?.stderr) return outcome;
  const text = outcome.stderr.toString("utf8");
  const trimmed = trimV8FatalReport(text);
  return trimmed === text ? outcome : { ...outcome, stderr: Buffer.from(trimmed) };
}

/**
 * The result of a run: shaped streams and value, token counts, and the error a failed run reports.
 * A long output is shaped in slices with pauses between them, so a 10 MB print holds no one else.
 */
export async function buildResult(outcome: RunOutcome, options: BuildResultOptions): Promise<ExecutionResult> {
  if (outcome.status === "memory_limit") outcome = withoutV8Report(outcome);
  // A spilled stream is saved already: `save` names its copy (the empty bytes are not saved).
  const stdoutBytes = outcome.spilled?.stdout ?? outcome.stdout;
  const stderrBytes = outcome.spilled?.stderr ?? outcome.stderr;
  const stdout = await shapeStdout(stdoutBytes, options, () => options.save("stdout", outcome.stdout));
  const stderr = shapeOutput(stderrBytes, options.displayBytes, () => options.save("stderr", outcome.stderr));
  const frame = outcome.result;
  const summary = options.toolCalls;
  const result: ExecutionResult = {
    status: outcome.status,
    exitCode: outcome.exitCode,
    stdout: stdout.text,
    stderr: stderr.text,
    durationMs: Math.round(outcome.durationMs * 1000) / 1000,
    truncated: stdout.truncated || stderr.truncated || outcome.status === "output_limit",
    sessionId: options.sessionId,
    toolCalls: summary?.calls ?? [],
    tokens: { returned: 0, output: 0, toolResults: summary?.tokensInSandbox ?? 0 },
  };
  if (stdout.note) result.outputNote = stdout.note;
  if (outcome.images) result.images = outcome.images;
  if (outcome.imagesNote) result.imagesNote = outcome.imagesNote;
  const value = frame?.value === undefined ? { shownTokens: 0, tokens: 0 } : setValue(frame.value, result, options.outputTokenBudget);
  if (frame?.value !== undefined) result.valueKind = frame.valueKind === "repr" || typeof result.value !== typeof frame.value ? "repr" : "json";
  const stderrShown = countTokens(stderr.text);
  result.tokens.returned = stdout.shownTokens + stderrShown + value.shownTokens;
  result.tokens.output = stdout.tokens + (stderr.truncated ? await streamTokens(stderrBytes, options.pause ?? nextTurn) : stderrShown) + value.tokens;
  if (outcome.interrupted && outcome.status !== "ok" && outcome.status !== "error") {
    // The runner ended the interrupted call itself: the host's reason, and where the code was.
    result.error = { type: STATUS_ERROR_TYPE[outcome.status], message: outcome.message ?? outcome.status, traceback: frame?.error?.traceback ?? "" };
  } else if (frame?.error) result.error = frame.error;
  else if (outcome.status !== "ok" && outcome.status !== "error") {
    result.error = { type: STATUS_ERROR_TYPE[outcome.status], message: outcome.message ?? outcome.status, traceback: "" };
  } else if (outcome.status === "error" && outcome.message) {
    result.error = { type: "RunnerExited", message: outcome.message, traceback: "" };
  }
  if (stdout.fullOutput || stderr.fullOutput) {
    result.fullOutput = {
      ...(stdout.fullOutput ? { stdout: stdout.fullOutput } : {}),
      ...(stderr.fullOutput ? { stderr: stderr.fullOutput } : {}),
    };
  }
  return result;
}

/** The result of code that failed before it could run (a syntax error found on the host): its traceback is stderr. */
export function preparationFailedResult(error: ErrorInfo, sessionId: string | null): ExecutionResult {
  const stderr = error.traceback;
  const tokens = countTokens(stderr);
  return {
    status: "error",
    exitCode: 1,
    stdout: "",
    stderr,
    error,
    durationMs: 0,
    truncated: false,
    sessionId,
    toolCalls: [],
    tokens: { returned: tokens, output: tokens, toolResults: 0 },
  };
}

/**
 * Marks a session call whose workspace ended over its limits (`over` says how): the call is an
 * error of type WorkspaceLimit whatever its own status, and keeps its own error in the message.
 */
export function markWorkspaceOverLimit(result: ExecutionResult, over: string): void {
  const earlier = result.error ? ` (the call itself ended with ${result.error.type}: ${result.error.message})` : "";
  if (result.status === "ok") result.status = "error";
  result.error = { type: "WorkspaceLimit", message: `${over}${earlier}`, traceback: "" };
}

/**
 * Sets result.value: a last-expression value over the token budget is shortened like JSON
 * output (it stays valid JSON). Returns its tokens as shown and in full.
 */
function setValue(value: unknown, result: ExecutionResult, budget: number): { shownTokens: number; tokens: number } {
  if (nestedDeeperThan(value, MAX_VALUE_DEPTH)) {
    // Only a hand-made result frame gets here (the runners' own JSON stops far earlier); every
    // recursive step after this one (shaping, JSON for the wire, the text for the model) would overflow.
    value = `[a value nested more than ${MAX_VALUE_DEPTH} levels deep, not shown]`;
    result.truncated = true;
  }
  const tokens = estimateJsonTokens(value);
  result.value = value;
  if (tokens <= budget) return { shownTokens: tokens, tokens };
  const shaped = shapeValue(value, { budgetTokens: budget });
  if (!shaped.truncated) return { shownTokens: tokens, tokens };
  result.value = shaped.value;
  result.truncated = true;
  const note = `value ${shaped.note ?? "shortened"}`;
  result.outputNote = result.outputNote ? `${result.outputNote}; ${note}` : note;
  return { shownTokens: shaped.tokens, tokens: shaped.originalTokens };
}

/**
 * Stdout within the token budget and the display bytes is shown whole. Beyond the token
 * budget it is shortened structurally (JSON stays valid, head and tail of text); the byte cut
 * applies when even that is longer than the display bytes. The full text is saved either way.
 */
async function shapeStdout(
  data: LongBytes,
  options: BuildResultOptions,
  save: () => SavedRef | undefined,
): Promise<ShapedStream & { tokens: number; shownTokens: number; note?: string }> {
  const { displayBytes, outputTokenBudget: budget } = options;
  // A token is at least one byte: output no longer than the budget in bytes fits without a count.
  if (Buffer.isBuffer(data) && data.length <= Math.min(displayBytes, budget)) {
    const text = data.toString("utf8");
    const tokens = countTokens(text);
    return { text, truncated: false, totalBytes: data.length, tokens, shownTokens: tokens };
  }
  // Megabytes of text: decoded at both ends only, the rest counted in slices (long-output.ts).
  // A spilled stream that must be shaped whole (one JSON document) is read back from its saved copy.
  const shaped = (await shapeLongText(data, budget, options.pause)) ?? shapeText(await wholeText(data), { budgetTokens: budget });
  const tokens = shaped.originalTokens;
  if (!shaped.truncated && data.length <= displayBytes) return { text: shaped.text, truncated: false, totalBytes: data.length, tokens, shownTokens: tokens };
  if (Buffer.byteLength(shaped.text) <= displayBytes) {
    const saved = save();
    const note = `${shaped.note ?? "output shortened"}; ${savedText(saved, data.length)}`;
    return { text: shaped.text, truncated: true, ...(saved ? { fullOutput: saved.uri } : {}), totalBytes: data.length, tokens, shownTokens: shaped.tokens, note };
  }
  const cut = shapeOutput(data, displayBytes, save);
  return { ...cut, tokens, shownTokens: countTokens(cut.text) };
}

/** Tokens of a stream shown shortened: sampled from its bytes when long, without decoding all of it at once. */
function streamTokens(data: LongBytes, pause: Pause): Promise<number> | number {
  return Buffer.isBuffer(data) && data.length <= 1 << 20 ? estimateTokens(data.toString("utf8")).tokens : estimateLongTokens(data, pause);
}
