// One call's saved outputs: streams saved as they are printed (the run's OutputSpill) and streams
// saved whole when shown shortened, under one id; what the result's `save` names for each.

import type { OutputSpill, RunOutcome } from "../sandbox/index.js";
import type { SavedRef } from "./output.js";
import type { FileSink } from "./saved-output-sink.js";
import { savedOutputRestPath, type SavedCall, type SavedStream } from "./saved-outputs.js";

export class CallOutputs {
  private readonly opened = new Map<SavedStream, { sink: FileSink; id: string; uri: string }>();
  /** Spilled streams read back whole to be changed (PII tokenized): saved again from what they became. */
  private readonly replaced = new Set<SavedStream>();

  constructor(private readonly call: SavedCall) {}

  /** The run's spill: a stream past `inlineBytes` is saved as it comes, `keptBytes` at each end kept in memory. */
  spill(bounds: { inlineBytes: number; keptBytes: number }): OutputSpill {
    return {
      ...bounds,
      open: (stream) => {
        const opened = this.call.open(stream);
        this.opened.set(stream, opened);
        return opened.sink;
      },
    };
  }

  /** Settles once every spilled stream is on disk, or its copy was given up. */
  async written(): Promise<void> {
    await Promise.all([...this.opened.values()].map(({ sink }) => sink.done));
  }

  /**
   * `outcome` with its spilled streams read back whole, for a guard that must scan all of a stream
   * (PII tokenization that began during the call); `save` then writes what they become over the copies.
   */
  async readBack(outcome: RunOutcome): Promise<RunOutcome> {
    const { spilled, ...rest } = outcome;
    if (!spilled) return outcome;
    const whole = { ...rest };
    for (const stream of ["stdout", "stderr"] as const) {
      const data = spilled[stream];
      if (!data) continue;
      whole[stream] = await data.read(0, data.length).catch(() => Buffer.concat([data.ends(0, data.keptBytes), data.ends(data.length - data.keptBytes, data.length)]));
      this.replaced.add(stream);
    }
    return whole;
  }

  /** Where `stream` is kept: its spilled copy, or `data` saved now; undefined when it could not be kept. */
  save(stream: SavedStream, data: Buffer): SavedRef | undefined {
    const opened = this.replaced.has(stream) ? undefined : this.opened.get(stream);
    const kept = opened ? (opened.sink.kept ? opened : undefined) : this.call.add(stream, data);
    return kept && { uri: kept.uri, restPath: savedOutputRestPath(kept.id, stream) };
  }

  /** The result is built: the call's outputs may be evicted like any other. */
  release(): void {
    this.call.release();
  }
}
