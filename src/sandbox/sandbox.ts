// One sandbox: a bubblewrap process tree with a resident runner, its cgroup, and the calls
// made to it. The Sandbox owns every process it starts and kills them all on dispose().

import type { ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";
import { randomBytes } from "node:crypto";
import { SandgateError } from "../errors/index.js";
import { RUNNER_SPECS } from "../languages/index.js";
import { CallOutput, type OutputSpill, type OutputStream, type SpilledStream } from "./call-output.js";
import { IdleFreezer, SandboxCgroup } from "./cgroups.js";
import { CHANNELS, type ChannelCall, type RunnerChannel } from "./channel/index.js";
import { ensureInside, joinEarly } from "./containment.js";
import { classifyExit, classifyInterrupted, classifyResult, describeExit, STDERR_TAIL_BYTES, type CallVerdict, type ExitStatus, type KillReason, type RunStatus } from "./exit-classification.js";
import type { ResolvedLimits } from "./limits.js";
import { MarkerStream } from "./marker-stream.js";
import { maskOutcome, OutputMask, type SecretValue } from "./output-mask.js";
import { ImageCollector, type ImageCaps, type RunImage } from "./images.js";
import { killGroup } from "./process-group.js";
import { signalRunner } from "./runner-signal.js";
import type { ImageFrame, ResultFrame } from "./protocol.js";
import type { RunnerKind, SandboxRuntime } from "./runtime.js";
import { launchSandbox } from "./sandbox-launch.js";
import type { SessionMachine } from "./machine.js";
import { returnedContent } from "./returned-content.js";
import { parseOperationRequest, parseUpstreamCall, UpstreamCallBroker, upstreamCallError, type OperationHandler, type UpstreamCallHandler, type UpstreamCallReply } from "./upstream-calls.js";

export type { OperationHandler, OperationRequest, UpstreamCall, UpstreamCallHandler, UpstreamCallReply } from "./upstream-calls.js";
export type { OutputSink, OutputSpill, OutputStream, SpilledStream } from "./call-output.js";
export type { RunStatus } from "./exit-classification.js";

export interface SandboxOptions {
  kind: RunnerKind;
  limits: ResolvedLimits;
  /** Host directory bound at /workspace; a size-capped tmpfs when absent. */
  workspaceDir?: string;
  startTimeoutMs?: number;
  /**
   * The session's machine to run in, beside its other runners: its namespaces, /tmp and cgroup
   * (whose limits then hold for the session as a whole). A sandbox of its own when absent.
   */
  machine?: SessionMachine;
  /**
   * A stateless sandbox: it runs one call (after the pool's own warm-up) and is then disposed, so
   * it is never frozen: nothing of a caller's runs between its calls, and each freeze and thaw is
   * a synchronous cgroup write on the event loop.
   */
  oneCall?: boolean;
}

export interface RunRequest {
  code: string;
  filename: string;
  mode?: "script" | "async";
  /** The code as the user wrote it, when `code` is a rewrite of it; the runner shows its lines in errors. */
  source?: string;
  timeoutMs: number;
  outputCapBytes: number;
  /**
   * Where a stream longer than its inline size is written whole as it comes (a saved output): then
   * only its two ends stay in memory and the outcome names it under `spilled`. Without it, every stream stays whole in memory.
   */
  spill?: OutputSpill;
  cpuSeconds?: number;
  onOutput?: (stream: OutputStream, text: string) => void;
  /**
   * Answers the upstream calls the code makes (callMCPTool, call_mcp_tool, sandgate-tool). Several
   * may be in flight at once; `signal` fires when the run ends or is killed, and replies after
   * that are dropped. Without a handler every call fails with ToolNotFound (no upstream servers are configured).
   */
  onUpstreamCall?: UpstreamCallHandler;
  /** Answers the code's calls of sandgate's own operations (search_tools, searchTools, sandgate-tool --search: a `call` frame). */
  onOperation?: OperationHandler;
  /** Environment variables the runner sets for this call only, and takes back when it ends. */
  env?: Record<string, string>;
  /** Values shown as "[masked:NAME]" in everything the call gives back: output (streamed too), value, error. */
  secrets?: readonly SecretValue[];
  /**
   * On a timeout or cancel, interrupt the code first (SIGINT: KeyboardInterrupt, an interrupted
   * script) where the runner can take it, and kill the sandbox only if the runner has not ended
   * the call this many ms later. Absent: the sandbox is killed at once.
   */
  interruptGraceMs?: number;
  /** Processes the call leaves running are kept (until the sandbox ends) instead of killed at its end. */
  keepProcesses?: boolean;
  /** Caps of the images the run may return (plots, sandgate.show); without them images are refused. */
  images?: ImageCaps;
}

export interface RunOutcome {
  status: RunStatus;
  exitCode: number | null;
  /** The whole stream; empty when it was spilled (then `spilled.stdout` has it). */
  stdout: Buffer;
  stderr: Buffer;
  /** Streams written whole to the run's spill as they came, of which only the ends are in memory. */
  spilled?: Partial<Record<OutputStream, SpilledStream>>;
  result?: ResultFrame;
  durationMs: number;
  /** The runner is gone (state lost); a session must start a new sandbox. */
  sandboxDied: boolean;
  /** Why the run ended when the runner did not say (timeout, flood, OOM, crash). */
  message?: string;
  /** The call was interrupted on a timeout or cancel and the runner ended it: its state is kept. */
  interrupted?: boolean;
  /** Images the run returned, checked and within the caps. */
  images?: RunImage[];
  /** What images were dropped or refused, and why. */
  imagesNote?: string;
}

interface ActiveRun {
  id: string;
  request: RunRequest;
  started: number;
  output: CallOutput;
  /** Masks the secrets in each output stream as it comes, before anything keeps or passes it on. */
  maskers?: Record<OutputStream, { push: (chunk: Buffer) => Buffer; flush: () => Buffer }>;
  result?: ResultFrame;
  /** Stops the run at its time limit; re-armed with the time left when a hold of the clock ends. */
  timer: NodeJS.Timeout;
  /** performance.now() at which the time limit is reached, while the clock runs. */
  deadline: number;
  /** Holds of the clock in progress (a tool call waiting for a person's approval), and since when. */
  holds: number;
  heldSince?: number;
  resolve: (outcome: RunOutcome) => void;
  /** The run's upstream calls; ended with the run, which stops handlers and drops late replies. */
  upstreamCalls: UpstreamCallBroker;
  /** Set once the code was interrupted: why, and the timer that kills the sandbox if it does not stop. */
  interrupt?: { reason: InterruptReason; grace: NodeJS.Timeout };
  images: ImageCollector;
  /**
   * The cgroup's OOM kill count as the call began. A machine's runners share one cgroup, so a
   * count taken when the runner started would also hold kills of other runners' calls since.
   */
  oomBaseline: number;
}

/** Why a running call is stopped from outside: its time limit, or the caller cancelled. */
export type InterruptReason = "timeout" | "killed";

let sandboxCounter = 0;

export class Sandbox {
  readonly id = `sb${++sandboxCounter}`;
  readonly kind: RunnerKind;
  readonly limits: ResolvedLimits;
  private readonly child: ChildProcess;
  private readonly cgroup: SandboxCgroup | undefined;
  /** The machine this runner joined; it owns the cgroup and the freezer then. */
  private readonly machine: SessionMachine | undefined;
  private readonly out: Record<OutputStream, MarkerStream>;
  /** The runner's output pipes: one is paused while a spill's sink catches up (see CallOutput). */
  private readonly pipes: Record<OutputStream, Readable>;
  private readonly pausedPipes = new Set<OutputStream>();
  /** Runs out, results and upstream calls in, on the wire the runner speaks (src/sandbox/channel/). */
  private readonly channel: RunnerChannel;
  /** Between calls the sandbox's processes are frozen, where the host has a freezer (a machine's runner: its machine's). */
  private readonly freezer: IdleFreezer;
  private readonly oneCall: boolean;
  private stopMessage = "";
  /** Settles once bwrap and its namespace init are in the sandbox's cgroup. */
  private readonly joined: Promise<void>;
  private active: ActiveRun | undefined;
  private killReason: KillReason | undefined;
  private exited = false;
  private closed: Promise<void>;
  private exitInfo: ExitStatus = { code: null, signal: null };
  private readyWaiter: { resolve: () => void; reject: (e: Error) => void } | undefined;
  private launchErr = "";
  private runCounter = 0;
  /** The runner's pid inside the sandbox, as its ready frame said. */
  private runnerPid: number | undefined;
  /** Settles when dispose() has released everything; set by its first call. */
  private disposed: Promise<void> | undefined;
  /** The cgroup went back for reuse (or away): nothing here may touch it any more. */
  private cgroupReleased = false;
  private readonly markerSalt = randomBytes(12).toString("hex");

  private constructor(runtime: SandboxRuntime, options: SandboxOptions) {
    this.kind = options.kind;
    this.limits = options.limits;
    const { limits } = options;
    this.machine = options.machine;
    this.oneCall = options.oneCall === true;
    this.cgroup =
      options.machine?.cgroup ??
      (options.machine
        ? undefined
        : SandboxCgroup.create(runtime.cgroups, {
            memoryBytes: limits.memoryMb * 1024 * 1024,
            pids: limits.processes,
            cpus: limits.cpus,
          }));
    this.freezer = new IdleFreezer(options.machine ? undefined : this.cgroup);
    const channel = CHANNELS[RUNNER_SPECS[options.kind].channel];
    const launched = launchSandbox(runtime, {
      kind: options.kind,
      limits,
      ...(options.workspaceDir === undefined ? {} : { workspaceDir: options.workspaceDir }),
      channel,
      ...(options.machine ? { machine: options.machine } : {}),
    });
    this.child = launched.child;
    this.out = {
      stdout: new MarkerStream((chunk) => this.onOutput("stdout", chunk)),
      stderr: new MarkerStream((chunk) => this.onOutput("stderr", chunk)),
    };
    this.pipes = { stdout: launched.stdout, stderr: launched.stderr };
    launched.stdout.on("data", this.guard((chunk: Buffer) => this.onStream("stdout", chunk)));
    launched.stderr.on("data", this.guard((chunk: Buffer) => this.onStream("stderr", chunk)));
    this.channel = channel.open(
      launched.fds,
      {
        ready: this.guard((pid: number) => {
          this.runnerPid ??= pid;
          this.readyWaiter?.resolve();
        }),
        result: this.guard((frame: ResultFrame) => this.onResult(frame)),
        image: this.guard((frame: ImageFrame) => this.onImage(frame)),
        call: this.guard((call: ChannelCall, reply: (answer: UpstreamCallReply) => void) => this.onUpstreamCall(call, reply)),
        protocolError: (message) => this.onProtocolError(message),
        unreadReplies: (bytes, count) => this.onUnreadReplies(bytes, count),
      },
      () => this.exited,
    );
    this.closed = new Promise((resolve) => {
      this.child.once("close", () => resolve());
    });
    this.child.once("exit", (code, signal) => {
      this.exited = true;
      this.exitInfo = { code, signal };
    });
    this.child.once("error", (error) => {
      this.launchErr += `${error.message}\n`;
    });
    this.child.once("close", () => {
      this.channel.close();
      this.onClose();
    });
    const outer = this.child.pid;
    this.joined = this.cgroup && outer !== undefined ? joinEarly(this.cgroup, outer, () => this.exited) : Promise.resolve();
    this.joined.catch(() => undefined);
  }

  /** Before any code runs: every process of the sandbox must be inside its cgroup, or it does not run. */
  private async ensureContained(): Promise<void> {
    await this.joined;
    const outer = this.child.pid;
    if (this.cgroup && outer !== undefined) await ensureInside(this.cgroup, outer, this.kind);
  }

  /** Starts a sandbox and resolves once its runner is ready for work. */
  static async start(runtime: SandboxRuntime, options: SandboxOptions): Promise<Sandbox> {
    // A frozen machine would freeze the runner too as it joins the cgroup.
    options.machine?.enter();
    let sandbox: Sandbox;
    try {
      sandbox = new Sandbox(runtime, options);
    } catch (error) {
      options.machine?.leave();
      throw error;
    }
    const timeoutMs = options.startTimeoutMs ?? 15_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        sandbox.readyWaiter = { resolve, reject };
        timer = setTimeout(() => reject(new SandgateError("SANDBOX_FAILED", `the ${options.kind} sandbox did not start within ${timeoutMs} ms`)), timeoutMs);
      });
      await sandbox.ensureContained();
    } catch (error) {
      await sandbox.dispose();
      throw error;
    } finally {
      clearTimeout(timer);
      sandbox.readyWaiter = undefined;
      options.machine?.leave();
    }
    return sandbox;
  }

  get alive(): boolean {
    return !this.exited && this.killReason === undefined;
  }

  /** Settles once bubblewrap has exited and its pipes are closed (the sandbox holds no memory). */
  whenClosed(): Promise<void> {
    return this.closed;
  }

  /** Runs one piece of code in the resident runner. Never rejects for user-code failures. */
  run(request: RunRequest): Promise<RunOutcome> {
    if (this.active) throw new SandgateError("SESSION_BUSY", "this sandbox is already running a call; wait for it to finish");
    if (!this.alive) throw new SandgateError("SANDBOX_FAILED", "the sandbox has stopped");
    const id = `r${++this.runCounter}`;
    // Random per sandbox and unique per call; free of NUL and whitespace so every runner can carry it.
    const marker = `\u001eSG-END-${this.markerSalt}-${id}\u001e`;
    const mask = OutputMask.of(request.secrets);
    return new Promise<RunOutcome>((settle) => {
      const resolve = mask ? (outcome: RunOutcome): void => settle(maskOutcome(outcome, mask)) : settle;
      this.active = {
        id,
        request,
        started: performance.now(),
        output: new CallOutput({
          capBytes: request.outputCapBytes,
          onText: request.onOutput,
          spill: request.spill,
          onPressure: (stream, paused) => this.pipePressure(stream, paused),
        }),
        // Output bytes are masked as they come, a secret split across chunks held back until whole:
        // what is streamed, kept and spilled is masked alike.
        ...(mask ? { maskers: { stdout: mask.streamingBytes(), stderr: mask.streamingBytes() } } : {}),
        timer: setTimeout(() => this.stopRun("timeout"), request.timeoutMs),
        deadline: performance.now() + request.timeoutMs,
        holds: 0,
        resolve,
        upstreamCalls: new UpstreamCallBroker(request.onUpstreamCall, { hold: () => this.holdClock(id) }, request.onOperation),
        images: new ImageCollector(request.images ?? { maxBytes: 0, maxCount: 0 }),
        oomBaseline: this.cgroup?.oomKills() ?? 0,
      };
      const markerBytes = Buffer.from(marker, "utf8");
      this.out.stdout.begin(markerBytes);
      this.out.stderr.begin(markerBytes);
      this.thawForRun();
      this.channel.send({
        id,
        code: request.code,
        marker,
        filename: request.filename,
        ...(request.mode ? { mode: request.mode } : {}),
        ...(request.source !== undefined ? { source: request.source } : {}),
        ...(request.cpuSeconds ? { cpuSeconds: request.cpuSeconds } : {}),
        ...(request.env ? { env: request.env } : {}),
        ...(request.keepProcesses ? { keepProcesses: true } : {}),
        ...(request.images ? { maxImageBytes: request.images.maxBytes } : {}),
        ...(request.interruptGraceMs !== undefined && RUNNER_SPECS[this.kind].interruptible ? { interruptible: true } : {}),
      });
    });
  }

  /** Whether the sandbox's processes are frozen now (between calls, where the host can freeze). */
  get isFrozen(): boolean {
    return this.machine ? this.machine.isFrozen : this.freezer.isFrozen;
  }

  /** Output bytes written while no call was running, which were dropped. */
  get discardedOutputBytes(): number {
    return this.out.stdout.discardedBytes + this.out.stderr.discardedBytes;
  }

  /** Shortly after a call, unless the next comes first (see FREEZE_AFTER_IDLE_MS). */
  private freeze(): void {
    this.freezer.schedule(() => this.alive && this.active === undefined);
  }

  /** Before a run: the sandbox (or its whole machine) runs until the run ends. */
  private thawForRun(): void {
    if (this.machine) this.machine.enter();
    else this.thaw();
  }

  private thaw(): void {
    if (this.machine) {
      this.machine.thaw();
      return;
    }
    this.freezer.thaw();
  }

  /**
   * Stops the running call for `reason`: interrupts it where the run asked for that and the runner
   * can take it (the runner ends the call and keeps its state), else kills the sandbox; a runner
   * that has not ended the call within the run's grace is killed then.
   */
  stopRun(reason: InterruptReason): void {
    const run = this.active;
    if (run?.interrupt) return;
    const grace = run?.request.interruptGraceMs;
    const outer = this.child.pid;
    if (!run || run.result || grace === undefined || !RUNNER_SPECS[this.kind].interruptible || !this.alive || this.runnerPid === undefined || outer === undefined) {
      this.terminate(reason);
      return;
    }
    // Frozen between calls only; a running call is thawed. The signal must find it running.
    this.thaw();
    if (!signalRunner(outer, this.runnerPid, "SIGINT")) {
      this.terminate(reason);
      return;
    }
    run.interrupt = { reason, grace: setTimeout(() => this.terminate(reason), grace) };
  }

  /** Kills the whole sandbox now; a call in progress ends with `reason`. */
  terminate(reason: KillReason = "killed"): void {
    this.killReason ??= reason;
    // Its pipes must drain for its end to be seen.
    this.resumePipes();
    // A frozen process does not act on SIGKILL (cgroup v1) until it is thawed.
    this.thaw();
    if (!this.exited) killGroup(this.child);
    // A released cgroup may already hold the next sandbox: it is not this one's to kill. A machine's
    // is the whole session's: this runner's pid namespace dies with its init, which bubblewrap's death kills.
    if (!this.cgroupReleased && !this.machine) this.cgroup?.killAll();
  }

  /** Stops the sandbox and releases everything it held. Safe to call twice: the second call waits for the first. */
  dispose(): Promise<void> {
    this.disposed ??= (async () => {
      this.terminate("killed");
      this.readyWaiter?.reject(new SandgateError("SANDBOX_FAILED", "the sandbox was stopped before it was ready"));
      await Promise.race([this.closed, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      this.cgroupReleased = true;
      if (!this.machine) await this.cgroup?.release();
    })();
    return this.disposed;
  }

  /**
   * Wraps a handler of what the sandbox sends. A host-side failure while handling it (a bug, or a
   * caller's onOutput that throws) stops this sandbox and ends its call as killed with the reason;
   * it never escapes to the event loop, where it would take the whole server down.
   */
  private guard<A extends unknown[]>(handler: (...args: A) => void): (...args: A) => void {
    return (...args) => {
      try {
        handler(...args);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        this.stop(`sandgate failed while handling what the sandbox sent (${reason.slice(0, 200)}); the sandbox was stopped`);
      }
    };
  }

  private onStream(stream: OutputStream, chunk: Buffer): void {
    if (this.readyWaiter && !this.active) {
      // Before the runner is ready, output is bubblewrap's or the runner's own complaint.
      if (this.launchErr.length < 4096) this.launchErr += chunk.toString("utf8");
      return;
    }
    if (this.out[stream].push(chunk)) this.maybeFinish();
  }

  private onOutput(stream: OutputStream, chunk: Buffer): void {
    const run = this.active;
    if (!run) return;
    const bytes = run.maskers ? run.maskers[stream].push(chunk) : chunk;
    if (bytes.length > 0 && !run.output.push(stream, bytes)) this.terminate("output_limit");
  }

  /** A spill's sink is behind: the runner's pipe is not read (it blocks on its writes) until the sink catches up. */
  private pipePressure(stream: OutputStream, paused: boolean): void {
    if (paused && !this.exited && this.killReason === undefined) {
      this.pausedPipes.add(stream);
      this.pipes[stream].pause();
    } else if (this.pausedPipes.delete(stream)) this.pipes[stream].resume();
  }

  /** Reads every pipe again: a call that ends or a sandbox being killed must not wait on a sink. */
  private resumePipes(): void {
    for (const stream of this.pausedPipes) this.pipes[stream].resume();
    this.pausedPipes.clear();
  }

  /** The runner left more replies unread than a program that awaits its calls ever would. */
  private onUnreadReplies(bytes: number, count: number): void {
    this.stop(`the sandbox stopped reading tool-call replies (${count} replies, ${Math.ceil(bytes / 1024)} KiB waiting) and was stopped; await each tool call's result before starting more`);
  }

  private onProtocolError(message: string): void {
    this.launchErr += `${message}\n`;
    // User code can write to fd 4 as well, so this is said as the call's outcome.
    this.stop(`the sandbox broke the runner protocol on fd 4 (${message}) and was stopped`);
  }

  /** Stops the sandbox for breaking a bound; a call in progress ends with status killed and `message`. */
  private stop(message: string): void {
    if (this.killReason) return;
    this.stopMessage = message;
    this.terminate("stopped");
  }

  private onResult(frame: ResultFrame): void {
    if (!this.active || frame.id !== this.active.id) return;
    this.active.result = frame;
    this.maybeFinish();
  }

  /** An image of the running call (one made by code an earlier call left running is dropped). */
  private onImage(frame: ImageFrame): void {
    const run = this.active;
    if (!run || run.result || (frame.id !== undefined && frame.id !== run.id)) return;
    run.images.add(frame);
  }

  /** Stops run `id`'s time limit until the returned function is called (see RunClock). */
  private holdClock(id: string): () => void {
    const run = this.active;
    if (run?.id !== id || run.interrupt) return () => undefined;
    if (run.holds++ === 0) {
      clearTimeout(run.timer);
      run.heldSince = performance.now();
    }
    let released = false;
    return () => {
      if (released || this.active !== run) return;
      released = true;
      if (--run.holds > 0 || run.interrupt) return;
      run.deadline += performance.now() - (run.heldSince ?? performance.now());
      run.heldSince = undefined;
      run.timer = setTimeout(() => this.stopRun("timeout"), Math.max(0, run.deadline - performance.now()));
    };
  }

  /** Checks a call from the sandbox and hands it to the running code's upstream calls; none run between calls. */
  private onUpstreamCall(call: ChannelCall, reply: (reply: UpstreamCallReply) => void): void {
    if (call.runId !== undefined && call.runId !== this.active?.id) {
      // Made by code an earlier call left running (a thread, a timer); that run's upstream calls are closed.
      reply(upstreamCallError("ToolCancelled", "the call that made this tool call has ended"));
      return;
    }
    if (call.op === "return") {
      this.onReturnedContent(call.args, reply);
      return;
    }
    if (call.op !== undefined) {
      const parsed = parseOperationRequest(call);
      if (!parsed.ok) reply(parsed.reply);
      else if (this.active) this.active.upstreamCalls.operation(parsed.request, reply);
      else reply(upstreamCallError("ToolCancelled", "operations can only be called while code runs"));
      return;
    }
    const parsed = parseUpstreamCall(call);
    if (!parsed.ok) reply(parsed.reply);
    else if (this.active) this.active.upstreamCalls.call(parsed.call.tool, parsed.call.args, reply);
    else reply(upstreamCallError("ToolCancelled", "tool calls can only be made while code runs"));
  }

  /**
   * Upstream content the code passes on (`sandgate-tool --return`): its images join the run's, checked
   * like any other; the reply is the rest as text, base64 so that Bash prints it byte for byte.
   */
  private onReturnedContent(args: unknown, reply: (reply: UpstreamCallReply) => void): void {
    const run = this.active;
    if (!run) {
      reply(upstreamCallError("ToolCancelled", "content can only be returned while code runs"));
      return;
    }
    const found = returnedContent(args);
    if ("error" in found) {
      reply(upstreamCallError("InvalidArguments", found.error));
      return;
    }
    for (const image of found.images) run.images.add(image);
    reply({ ok: true, value: Buffer.from(found.text, "utf8").toString("base64") });
  }

  private maybeFinish(): void {
    const run = this.active;
    if (!run?.result || !this.out.stdout.done || !this.out.stderr.done || this.killReason) return;
    if (run.interrupt) this.finish(run, classifyInterrupted(run.interrupt.reason, run.request.timeoutMs), false);
    else this.finish(run, classifyResult(run.result), false);
  }

  private finish(run: ActiveRun, verdict: CallVerdict, sandboxDied: boolean): void {
    clearTimeout(run.timer);
    clearTimeout(run.interrupt?.grace);
    this.active = undefined;
    run.upstreamCalls.end();
    this.resumePipes();
    if (run.maskers) for (const stream of ["stdout", "stderr"] as const) run.output.push(stream, run.maskers[stream].flush());
    run.output.end();
    const spilled = { stdout: run.output.spilled("stdout"), stderr: run.output.spilled("stderr") };
    const imagesNote = run.images.note();
    // Nothing runs until the next call: threads, timers and busy loops a call left behind wait.
    // A machine freezes once none of its runners runs a call any more.
    if (this.machine) this.machine.leave();
    else if (!sandboxDied && !this.oneCall) this.freeze();
    run.resolve({
      ...verdict,
      ...(sandboxDied ? {} : { result: run.result }),
      sandboxDied,
      stdout: run.output.bytesOf("stdout"),
      stderr: run.output.bytesOf("stderr"),
      ...(spilled.stdout || spilled.stderr ? { spilled: { ...(spilled.stdout ? { stdout: spilled.stdout } : {}), ...(spilled.stderr ? { stderr: spilled.stderr } : {}) } } : {}),
      durationMs: performance.now() - run.started,
      ...(run.images.images.length > 0 ? { images: run.images.images } : {}),
      ...(imagesNote ? { imagesNote } : {}),
    });
  }

  private onClose(): void {
    // Killing this runner thawed its machine; the other runners wait frozen again if none runs.
    queueMicrotask(() => this.machine?.settle());
    const run = this.active;
    if (this.readyWaiter) {
      this.readyWaiter.reject(new SandgateError("SANDBOX_FAILED", `the ${this.kind} sandbox failed to start: ${describeExit(this.exitInfo, this.launchErr)}`));
    }
    if (!run) return;
    this.out.stdout.flushPending();
    this.out.stderr.flushPending();
    const verdict = classifyExit({
      exit: this.exitInfo,
      killReason: this.killReason,
      stopMessage: this.stopMessage,
      oomKilled: !this.cgroupReleased && (this.cgroup?.oomKills() ?? 0) > run.oomBaseline,
      stderrTail: run.output.tail("stderr", STDERR_TAIL_BYTES),
      runner: RUNNER_SPECS[this.kind],
      timeoutMs: run.request.timeoutMs,
      ...(run.interrupt ? { interruptGraceMs: run.request.interruptGraceMs, interruptedFor: run.interrupt.reason } : {}),
      outputCapBytes: run.request.outputCapBytes,
      memoryMb: this.limits.memoryMb,
      launchErr: this.launchErr,
    });
    this.finish(run, verdict, true);
  }
}
