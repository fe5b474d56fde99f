// One sandbox: a bubblewrap process tree with a resident runner, its cgroup, and the calls
// made to it. The Sandbox owns every process it starts and kills them all on dispose().

import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, openSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { SandgateError } from "../errors/index.js";
import { buildSandboxLaunch, scratchSizes } from "./bwrap-args.js";
import { SandboxCgroup } from "./cgroups.js";
import type { ResolvedLimits } from "./limits.js";
import { MarkerStream } from "./marker-stream.js";
import { killGroup } from "./process-group.js";
import { ensureInside, joinEarly } from "./containment.js";
import { encodeBashRequest, encodeFrame, FrameDecoder, type ExecuteFrame, type ResultFrame, type ToolCallFrame } from "./protocol.js";
import type { RunnerKind, SandboxRuntime } from "./runtime.js";
import { FRAME_BYTES_PER_SECOND, FRAMES_PER_SECOND, ReplyPipe, TokenBucket } from "./runner-budget.js";
import { RUNNER_COMMAND, SANDBOX_ENV } from "./runner-command.js";
import {
  BashUpstreamRequestDecoder,
  encodeBashUpstreamReply,
  encodeToolResultFrame,
  parseBashArgs,
  parseUpstreamCall,
  UpstreamCallBroker,
  upstreamCallError,
  type BashUpstreamRequest,
  type UpstreamCallHandler,
  type UpstreamCallReply,
} from "./upstream-calls.js";

export type { UpstreamCall, UpstreamCallHandler, UpstreamCallReply } from "./upstream-calls.js";

export type RunStatus = "ok" | "error" | "timeout" | "memory_limit" | "output_limit" | "killed";
export type OutputStream = "stdout" | "stderr";

export interface SandboxOptions {
  kind: RunnerKind;
  limits: ResolvedLimits;
  /** Host directory bound at /workspace; a size-capped tmpfs when absent. */
  workspaceDir?: string;
  startTimeoutMs?: number;
}

export interface RunRequest {
  code: string;
  filename: string;
  mode?: "script" | "async";
  timeoutMs: number;
  outputCapBytes: number;
  cpuSeconds?: number;
  onOutput?: (stream: OutputStream, text: string) => void;
  /**
   * Answers the upstream calls the code makes (callMCPTool, call_mcp_tool, sandgate-tool). Several
   * may be in flight at once; `signal` fires when the run ends or is killed, and replies after
   * that are dropped. Without a handler every call fails with "tool calls are not available here".
   */
  onUpstreamCall?: UpstreamCallHandler;
}

export interface RunOutcome {
  status: RunStatus;
  exitCode: number | null;
  stdout: Buffer;
  stderr: Buffer;
  result?: ResultFrame;
  durationMs: number;
  /** The runner is gone (state lost); a session must start a new sandbox. */
  sandboxDied: boolean;
  /** Why the run ended when the runner did not say (timeout, flood, OOM, crash). */
  message?: string;
}

/** `stopped`: the host stopped a sandbox that broke a bound; `stopMessage` says which. */
type KillReason = "timeout" | "output_limit" | "killed" | "stopped";

interface ActiveRun {
  id: string;
  request: RunRequest;
  started: number;
  stdout: Buffer[];
  stderr: Buffer[];
  bytes: number;
  result?: ResultFrame;
  timer: NodeJS.Timeout;
  decoders: Record<OutputStream, StringDecoder>;
  resolve: (outcome: RunOutcome) => void;
  /** The run's upstream calls; ended with the run, which stops handlers and drops late replies. */
  upstreamCalls: UpstreamCallBroker;
}

let sandboxCounter = 0;

const SIGXCPU = 24;
const SIGABRT = 6;
/** The fd on which bubblewrap reads its arguments (after 5, seccomp, and 6-7, the Bash tool pipes). */
const BWRAP_ARGS_FD = 8;

export class Sandbox {
  readonly id = `sb${++sandboxCounter}`;
  readonly kind: RunnerKind;
  readonly limits: ResolvedLimits;
  private readonly child: ChildProcess;
  private readonly cgroup: SandboxCgroup | undefined;
  private readonly frames = new FrameDecoder();
  private readonly out: Record<OutputStream, MarkerStream>;
  private readonly toRunner: Writable;
  /** Upstream-call replies to the runner's fd 3, capped: a runner that does not read them is stopped. */
  private readonly replies: ReplyPipe;
  /** Bash only: the upstream-call pipes of sandgate-tool (the runner itself is busy in `eval`). */
  private readonly bashUpstream: { requests: BashUpstreamRequestDecoder; replies: ReplyPipe } | undefined;
  /** What the runner may send per second; a flood is read more slowly, not buffered. */
  private readonly frameBudget = new TokenBucket(FRAMES_PER_SECOND);
  private readonly byteBudget = new TokenBucket(FRAME_BYTES_PER_SECOND);
  private readonly throttled = new Set<NodeJS.Timeout>();
  /** Frames and Bash tool requests received so far; what the frame budget counts. */
  private frameCount = 0;
  /** Between calls the sandbox's processes are frozen, where the host has a freezer. */
  private frozen = false;
  private stopMessage = "";
  /** Settles once bwrap and its namespace init are in the sandbox's cgroup. */
  private readonly joined: Promise<void>;
  private active: ActiveRun | undefined;
  private killReason: KillReason | undefined;
  private exited = false;
  private closed: Promise<void>;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } = { code: null, signal: null };
  private readyWaiter: { resolve: () => void; reject: (e: Error) => void } | undefined;
  private launchErr = "";
  private runCounter = 0;
  private oomBaseline = 0;
  /** Settles when dispose() has released everything; set by its first call. */
  private disposed: Promise<void> | undefined;
  /** The cgroup went back for reuse (or away): nothing here may touch it any more. */
  private cgroupReleased = false;
  private readonly markerSalt = randomBytes(12).toString("hex");

  private constructor(runtime: SandboxRuntime, options: SandboxOptions) {
    this.kind = options.kind;
    this.limits = options.limits;
    const { limits } = options;
    const cgroupMode = runtime.cgroups;
    this.cgroup = SandboxCgroup.create(cgroupMode, {
      memoryBytes: limits.memoryMb * 1024 * 1024,
      pids: limits.processes,
      cpus: limits.cpus,
    });
    const hasMemoryCgroup = cgroupMode.controllers.includes("memory");
    const hasPidsCgroup = cgroupMode.controllers.includes("pids");
    const scratch = scratchSizes(limits.memoryMb * 1024 * 1024);
    const launch = buildSandboxLaunch({
      bwrapPath: runtime.bwrapPath,
      mounts: {
        ...(options.workspaceDir === undefined ? {} : { workspaceDir: options.workspaceDir }),
        workspaceBytes: limits.workspaceBytes,
        runnersDir: runtime.runnersDir,
        etcDir: runtime.etcDir,
        readOnlyPaths: runtime.readOnlyPaths,
        volumes: runtime.volumes,
        ...(runtime.toolsDir ? { toolsDir: runtime.toolsDir } : {}),
        tmpBytes: scratch.tmpBytes,
        shmBytes: scratch.shmBytes,
      },
      env: { ...SANDBOX_ENV },
      command: RUNNER_COMMAND[options.kind](runtime, limits),
      rlimits: {
        fileSizeBytes: limits.fileSizeBytes,
        openFiles: limits.openFiles,
        // Without a memory cgroup, cap the address space; V8 reserves far more than it uses, so Node gets only its heap flag.
        ...(hasMemoryCgroup || options.kind === "javascript" ? {} : { addressSpaceBytes: limits.memoryMb * 1024 * 1024 + 64 * 1024 * 1024 }),
        ...(hasPidsCgroup ? {} : { processes: limits.processes }),
      },
      ...(runtime.seccompFile ? { seccompFd: 5 } : {}),
    }, BWRAP_ARGS_FD);
    const argv = launch.argv;
    const seccompFd = runtime.seccompFile ? openSync(runtime.seccompFile, "r") : undefined;
    try {
      this.child = spawn(argv[0]!, argv.slice(1), {
        // Bash sandboxes get fds 6 (tool replies in) and 7 (tool requests out); see bash_lib.sh.
        stdio: [
          "ignore",
          "pipe",
          "pipe",
          "pipe",
          "pipe",
          seccompFd ?? "ignore",
          ...(options.kind === "bash" ? (["pipe", "pipe"] as const) : (["ignore", "ignore"] as const)),
          "pipe",
        ],
        env: { PATH: "/usr/bin:/bin" },
        // bubblewrap passes its working directory on as PWD, which pid 1 of the sandbox shows: not the host's.
        cwd: "/",
        // A process group of its own, killed whole by terminate() (see process-group.ts).
        detached: true,
        // As root, bubblewrap runs as the unprivileged sandbox user (supplementary groups dropped).
        ...(runtime.hostUser ? { uid: runtime.hostUser.uid, gid: runtime.hostUser.gid } : {}),
      });
    } finally {
      if (seccompFd !== undefined) closeSync(seccompFd);
    }
    const [, stdout, stderr, toRunner, fromRunner] = this.child.stdio as [null, Readable, Readable, Writable, Readable];
    const extra = this.child.stdio as unknown as Array<Readable | Writable | null>;
    const argsPipe = extra[BWRAP_ARGS_FD] as Writable;
    argsPipe.on("error", () => {
      // bubblewrap failed before reading its arguments; the exit handler reports it
    });
    argsPipe.end(launch.args);
    this.toRunner = toRunner;
    this.replies = new ReplyPipe(toRunner, (bytes, count) => this.onUnreadReplies(bytes, count));
    this.out = {
      stdout: new MarkerStream((chunk) => this.onOutput("stdout", chunk)),
      stderr: new MarkerStream((chunk) => this.onOutput("stderr", chunk)),
    };
    stdout.on("data", (chunk: Buffer) => this.onStream("stdout", chunk));
    stderr.on("data", (chunk: Buffer) => this.onStream("stderr", chunk));
    fromRunner.on("data", (chunk: Buffer) => {
      const before = this.frameCount;
      this.onFrames(chunk);
      this.throttle(fromRunner, chunk.length, this.frameCount - before);
    });
    toRunner.on("error", () => {
      // EPIPE when the runner died; the exit handler reports it.
    });
    if (options.kind === "bash") {
      const replies = extra[6] as Writable;
      const requests = extra[7] as Readable;
      this.bashUpstream = { requests: new BashUpstreamRequestDecoder(), replies: new ReplyPipe(replies, (bytes, count) => this.onUnreadReplies(bytes, count)) };
      replies.on("error", () => {
        // the sandbox is gone; the exit handler reports it
      });
      requests.on("data", (chunk: Buffer) => {
        const before = this.frameCount;
        this.onBashUpstreamRequests(chunk);
        this.throttle(requests, chunk.length, this.frameCount - before);
      });
    }
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
      for (const timer of this.throttled) clearTimeout(timer);
      this.throttled.clear();
      this.onClose();
    });
    const outer = this.child.pid;
    this.joined = this.cgroup && outer !== undefined ? joinEarly(this.cgroup, outer, () => this.exited) : Promise.resolve();
    this.joined.catch(() => undefined);
  }

  /** Before any code runs: every process of the sandbox must be inside its cgroup, or it does not run. */
  private async ensureContained(): Promise<void> {
    await this.joined;
    // A reused cgroup keeps its OOM count; only kills after this point are this sandbox's.
    this.oomBaseline = this.cgroup?.oomKills() ?? 0;
    const outer = this.child.pid;
    if (this.cgroup && outer !== undefined) await ensureInside(this.cgroup, outer, this.kind);
  }

  /** Starts a sandbox and resolves once its runner is ready for work. */
  static async start(runtime: SandboxRuntime, options: SandboxOptions): Promise<Sandbox> {
    const sandbox = new Sandbox(runtime, options);
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
    return new Promise<RunOutcome>((resolve) => {
      const run: ActiveRun = {
        id,
        request,
        started: performance.now(),
        stdout: [],
        stderr: [],
        bytes: 0,
        timer: setTimeout(() => this.terminate("timeout"), request.timeoutMs),
        decoders: { stdout: new StringDecoder("utf8"), stderr: new StringDecoder("utf8") },
        resolve,
        upstreamCalls: new UpstreamCallBroker(request.onUpstreamCall),
      };
      this.active = run;
      const markerBytes = Buffer.from(marker, "utf8");
      this.out.stdout.begin(markerBytes);
      this.out.stderr.begin(markerBytes);
      const frame: ExecuteFrame = {
        type: "execute",
        id,
        code: request.code,
        marker,
        filename: request.filename,
        ...(request.mode ? { mode: request.mode } : {}),
        ...(request.cpuSeconds ? { cpuSeconds: request.cpuSeconds } : {}),
      };
      this.thaw();
      this.toRunner.write(this.kind === "bash" ? encodeBashRequest(id, marker, request.code) : encodeFrame(frame));
    });
  }

  /** Whether the sandbox's processes are frozen now (between calls, where the host can freeze). */
  get isFrozen(): boolean {
    return this.frozen;
  }

  /** Output bytes written while no call was running, which were dropped. */
  get discardedOutputBytes(): number {
    return this.out.stdout.discardedBytes + this.out.stderr.discardedBytes;
  }

  private freeze(): void {
    if (this.alive && this.cgroup?.freeze()) this.frozen = true;
  }

  private thaw(): void {
    if (!this.frozen) return;
    this.frozen = false;
    this.cgroup?.thaw();
  }

  /** Kills the whole sandbox now; a call in progress ends with `reason`. */
  terminate(reason: KillReason = "killed"): void {
    this.killReason ??= reason;
    // A frozen process does not act on SIGKILL (cgroup v1) until it is thawed.
    this.thaw();
    if (!this.exited) killGroup(this.child);
    // A released cgroup may already hold the next sandbox: it is not this one's to kill.
    if (!this.cgroupReleased) this.cgroup?.killAll();
  }

  /** Stops the sandbox and releases everything it held. Safe to call twice: the second call waits for the first. */
  dispose(): Promise<void> {
    this.disposed ??= (async () => {
      this.terminate("killed");
      this.readyWaiter?.reject(new SandgateError("SANDBOX_FAILED", "the sandbox was stopped before it was ready"));
      await Promise.race([this.closed, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      this.cgroupReleased = true;
      await this.cgroup?.release();
    })();
    return this.disposed;
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
    run.bytes += chunk.length;
    if (run.bytes > run.request.outputCapBytes) {
      const room = chunk.length - (run.bytes - run.request.outputCapBytes);
      if (room > 0) run[stream].push(chunk.subarray(0, room));
      this.terminate("output_limit");
      return;
    }
    run[stream].push(chunk);
    if (run.request.onOutput) {
      const text = run.decoders[stream].write(chunk);
      if (text) run.request.onOutput(stream, text);
    }
  }

  /**
   * Charges what a runner pipe just delivered against the sandbox's budget; over it, the pipe is
   * not read for a while, so the runner blocks on its own writes instead of the host buffering.
   */
  private throttle(pipe: Readable, bytes: number, frames: number): void {
    const wait = Math.max(this.byteBudget.spend(bytes), this.frameBudget.spend(frames));
    if (wait <= 0 || pipe.isPaused() || this.exited) return;
    pipe.pause();
    const timer = setTimeout(() => {
      this.throttled.delete(timer);
      pipe.resume();
    }, wait);
    this.throttled.add(timer);
  }

  /** The runner left more replies unread than a program that awaits its calls ever would. */
  private onUnreadReplies(bytes: number, count: number): void {
    this.stop(`the sandbox stopped reading tool-call replies (${count} replies, ${Math.ceil(bytes / 1024)} KiB waiting) and was stopped; await each tool call's result before starting more`);
  }

  /** Stops the sandbox for breaking a bound; a call in progress ends with status killed and `message`. */
  private stop(message: string): void {
    if (this.killReason) return;
    this.stopMessage = message;
    this.terminate("stopped");
  }

  private onFrames(chunk: Buffer): void {
    let frames;
    try {
      frames = this.frames.push(chunk);
    } catch (error) {
      this.launchErr += `${(error as Error).message}\n`;
      // User code can write to fd 4 as well, so this is said as the call's outcome.
      this.stop(`the sandbox broke the runner protocol on fd 4 (${(error as Error).message}) and was stopped`);
      return;
    }
    this.frameCount += frames.length;
    for (const frame of frames) {
      if (frame.type === "ready") {
        this.readyWaiter?.resolve();
      } else if (frame.type === "tool_call") {
        this.onToolCallFrame(frame);
      } else if (this.active && frame.id === this.active.id) {
        this.active.result = frame;
        this.maybeFinish();
      }
    }
  }

  private onToolCallFrame(frame: ToolCallFrame): void {
    const send = (reply: UpstreamCallReply): void => {
      this.replies.write(encodeToolResultFrame(frame.callId, reply));
    };
    if (frame.id !== undefined && frame.id !== this.active?.id) {
      // Made by code an earlier call left running (a thread, a timer); that run's upstream calls are closed.
      send(upstreamCallError("ToolCancelled", "the call that made this tool call has ended"));
      return;
    }
    const parsed = parseUpstreamCall(frame);
    if (!parsed.ok) send(parsed.reply);
    else this.callUpstream(parsed.call.tool, parsed.call.args, send);
  }

  private onBashUpstreamRequests(chunk: Buffer): void {
    const pipes = this.bashUpstream;
    if (!pipes) return;
    for (const request of pipes.requests.push(chunk)) {
      this.frameCount += 1;
      this.onBashUpstreamRequest(request, pipes.replies);
    }
  }

  private onBashUpstreamRequest(request: BashUpstreamRequest, replies: ReplyPipe): void {
    const send = (reply: UpstreamCallReply): void => {
      replies.write(encodeBashUpstreamReply(request.callId, reply));
    };
    const args = parseBashArgs(request.argsText);
    if (!args.ok) {
      send(upstreamCallError("InvalidArguments", `tool \`${request.tool.slice(0, 100)}\` refused: ${args.message}`));
      return;
    }
    const parsed = parseUpstreamCall({ tool: request.tool, args: args.args });
    if (!parsed.ok) send(parsed.reply);
    else this.callUpstream(parsed.call.tool, parsed.call.args, send);
  }

  /** Hands one checked call to the running code's upstream calls; none run between calls. */
  private callUpstream(tool: string, args: unknown, send: (reply: UpstreamCallReply) => void): void {
    if (this.active) this.active.upstreamCalls.call(tool, args, send);
    else send(upstreamCallError("ToolCancelled", "tool calls can only be made while code runs"));
  }

  private maybeFinish(): void {
    const run = this.active;
    if (!run?.result || !this.out.stdout.done || !this.out.stderr.done || this.killReason) return;
    const result = run.result;
    const memoryError = result.error?.type === "MemoryError";
    this.finish(run, {
      status: result.ok ? "ok" : memoryError ? "memory_limit" : "error",
      exitCode: result.exitCode,
      result,
      sandboxDied: false,
    });
  }

  private finish(run: ActiveRun, outcome: Pick<RunOutcome, "status" | "exitCode" | "sandboxDied"> & Partial<RunOutcome>): void {
    clearTimeout(run.timer);
    this.active = undefined;
    run.upstreamCalls.end();
    for (const stream of ["stdout", "stderr"] as const) {
      const tail = run.decoders[stream].end();
      if (tail && run.request.onOutput) run.request.onOutput(stream, tail);
    }
    // Nothing runs until the next call: threads, timers and busy loops a call left behind wait.
    if (!outcome.sandboxDied) this.freeze();
    run.resolve({
      ...outcome,
      stdout: Buffer.concat(run.stdout),
      stderr: Buffer.concat(run.stderr),
      durationMs: performance.now() - run.started,
    });
  }

  private onClose(): void {
    const run = this.active;
    if (this.readyWaiter) {
      const detail = this.describeExit();
      this.readyWaiter.reject(new SandgateError("SANDBOX_FAILED", `the ${this.kind} sandbox failed to start: ${detail}`));
    }
    if (!run) return;
    this.out.stdout.flushPending();
    this.out.stderr.flushPending();
    const oom = !this.cgroupReleased && (this.cgroup?.oomKills() ?? 0) > this.oomBaseline;
    const { code } = this.exitInfo;
    const limitS = Math.round(run.request.timeoutMs / 100) / 10;
    switch (this.killReason) {
      case "timeout":
        return this.finish(run, { status: "timeout", exitCode: null, sandboxDied: true, message: `execution timed out after ${limitS} s and was stopped` });
      case "output_limit":
        return this.finish(run, {
          status: "output_limit",
          exitCode: null,
          sandboxDied: true,
          message: `output exceeded ${run.request.outputCapBytes} bytes and the run was stopped`,
        });
      case "killed":
        return this.finish(run, { status: "killed", exitCode: null, sandboxDied: true, message: "the sandbox was stopped" });
      case "stopped":
        return this.finish(run, { status: "killed", exitCode: null, sandboxDied: true, message: this.stopMessage });
      case undefined:
        break;
    }
    if (oom || this.v8HeapExhausted(run, code)) {
      return this.finish(run, {
        status: "memory_limit",
        exitCode: null,
        sandboxDied: true,
        message: `memory limit of ${this.limits.memoryMb} MB reached; the process was killed`,
      });
    }
    if (code === 128 + SIGXCPU) {
      return this.finish(run, { status: "timeout", exitCode: null, sandboxDied: true, message: "CPU time limit reached; the process was stopped" });
    }
    const exitCode = code !== null && code < 128 ? code : null;
    this.finish(run, {
      status: exitCode === null ? "killed" : "error",
      exitCode,
      sandboxDied: true,
      message: `the runner exited unexpectedly (${this.describeExit()})`,
    });
  }

  /**
   * Node stops at its own heap limit (set below the cgroup's) with an abort and a fatal message
   * of V8's, before the kernel's OOM killer would act: that is the memory limit too.
   */
  private v8HeapExhausted(run: ActiveRun, code: number | null): boolean {
    if (this.kind !== "javascript" || code !== 128 + SIGABRT) return false;
    const all = Buffer.concat(run.stderr);
    const tail = all.subarray(Math.max(0, all.length - 16_384)).toString("utf8");
    return /JavaScript heap out of memory|Reached heap limit/.test(tail);
  }

  private describeExit(): string {
    const { code, signal } = this.exitInfo;
    const parts = [signal ? `signal ${signal}` : `exit status ${String(code)}`];
    if (code !== null && code > 128) parts.push(`killed by signal ${code - 128}`);
    if (this.launchErr.trim()) parts.push(this.launchErr.trim());
    return parts.join(", ");
  }
}
