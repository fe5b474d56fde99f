// One execution's output on its way to the agent through code mode's OutputGuard: streamed chunks
// held to line ends (a value split across two chunks is still caught), the run's outcome, its tool calls.

import type { OutputStream, RunImage, RunOutcome } from "../sandbox/index.js";
import type { OutputGuard, UpstreamCallSummary } from "./upstream-call-scope.js";

/** Text held back without a line end before it is passed on anyway, characters... */
const HOLD_CHARS = 4096;
/** ...except its last characters, which may be the start of a value. */
const TAIL_CHARS = 256;
/** A line is cut past this many characters held even inside what looks like one value. */
const MAX_HOLD_CHARS = 65_536;

type Emit = (stream: OutputStream, text: string) => void;

export class OutputBoundary {
  private readonly pending: Record<OutputStream, string> = { stdout: "", stderr: "" };
  private emit: Emit | undefined;

  constructor(private readonly guard: OutputGuard) {}

  /** `onOutput` receiving guarded text; call flush() when the run ends. */
  stream(onOutput: Emit): Emit {
    this.emit = onOutput;
    return (stream, text) => {
      const held = this.pending[stream] + text;
      // Nothing known yet and nothing held: output before the first tool result passes at once.
      if (!this.guard.active) {
        this.pending[stream] = "";
        onOutput(stream, held);
        return;
      }
      let cut = held.lastIndexOf("\n") + 1;
      if (cut === 0 && held.length > HOLD_CHARS) cut = this.longLineCut(held);
      this.pending[stream] = held.slice(cut);
      if (cut > 0) onOutput(stream, this.guard.text(held.slice(0, cut), false));
    };
  }

  /**
   * Where a long line without a line end is cut to pass its head on: before its last characters, and
   * never inside a value (two halves would each pass untokenized) nor a surrogate pair; past
   * MAX_HOLD_CHARS the cut is made anyway, so a stream is never held without bound.
   */
  private longLineCut(held: string): number {
    let cut = held.length - TAIL_CHARS;
    const safe = this.guard.cutBefore?.(held, cut) ?? cut;
    if (safe > 0) cut = safe;
    else if (held.length <= MAX_HOLD_CHARS) return 0;
    const unit = held.charCodeAt(cut - 1);
    if (unit >= 0xd800 && unit <= 0xdbff) cut--;
    return cut;
  }

  /** Passes on what is still held. */
  flush(): void {
    for (const stream of ["stdout", "stderr"] as const) {
      const held = this.pending[stream];
      if (held === "") continue;
      this.pending[stream] = "";
      this.emit?.(stream, this.guard.active ? this.guard.text(held, false) : held);
    }
  }

  /** The run's outcome as the agent may see it: streams, value, error (bytes kept where nothing changed). */
  outcome(outcome: RunOutcome): RunOutcome {
    this.flush();
    if (!this.guard.active) return outcome;
    const out: RunOutcome = { ...outcome, stdout: this.bytes(outcome.stdout), stderr: this.bytes(outcome.stderr) };
    if (outcome.message !== undefined) out.message = this.guard.text(outcome.message, true);
    // The code names what it passes as an image: a refused type or an SVG's text may be tool data.
    if (outcome.imagesNote !== undefined) out.imagesNote = this.guard.text(outcome.imagesNote, true);
    if (outcome.images) out.images = outcome.images.map((image) => (image.mime === "image/svg+xml" ? this.svg(image) : image));
    const frame = outcome.result;
    if (frame) {
      out.result = { ...frame };
      if (frame.value !== undefined) out.result.value = this.guard.value(frame.value);
      if (frame.error) out.result.error = { ...frame.error, message: this.guard.text(frame.error.message, true), traceback: this.guard.text(frame.error.traceback, true) };
    }
    return out;
  }

  /** Tool-call records with their error messages and tool ids guarded (code may build an id from tool data). */
  summary(summary: UpstreamCallSummary | undefined): UpstreamCallSummary | undefined {
    if (!summary || !this.guard.active) return summary;
    return {
      ...summary,
      calls: summary.calls.map((c) => ({ ...c, tool: this.guard.text(c.tool, true), ...(c.error === undefined ? {} : { error: this.guard.text(c.error, true) }) })),
    };
  }

  /** Replacements per kind, or undefined when there were none. */
  counts(): Record<string, number> | undefined {
    const counts = this.guard.counts();
    return Object.keys(counts).length > 0 ? counts : undefined;
  }

  /** An SVG image is text a model reads: tokenized like output (its markup holds no values to break). */
  private svg(image: RunImage): RunImage {
    const data = Buffer.from(image.dataBase64, "base64");
    // Not UTF-8: read byte for byte (latin1), so the bytes around a value come back as they were.
    let encoding: BufferEncoding = "utf8";
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(data);
    } catch {
      encoding = "latin1";
      text = data.toString("latin1");
    }
    const guarded = this.guard.text(text, true);
    return guarded === text ? image : { ...image, dataBase64: Buffer.from(guarded, encoding).toString("base64") };
  }

  private bytes(data: Buffer): Buffer {
    if (data.length === 0) return data;
    const text = data.toString("utf8");
    const guarded = this.guard.text(text, true);
    return guarded === text ? data : Buffer.from(guarded, "utf8");
  }
}
