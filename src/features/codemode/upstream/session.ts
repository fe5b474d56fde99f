// One live MCP client connection to an upstream server: spawning or dialing it, the
// Streamable HTTP → SSE fallback, initialize, the full tool list, and a close that leaves nothing.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { maskUrl, type HttpServerConfig, type StdioServerConfig, type UpstreamServerConfig } from "../../../config/index.js";
import type { Logger } from "../../../util/logger.js";
import { boundedFetch, limitError, type UpstreamLimitError } from "./bounded-fetch.js";
import { describeFailure, formatSeconds } from "./call-errors.js";
import { boundedOutputCheck } from "./output-check.js";
import { descendantsOf, killProcesses, type ProcessRef } from "./process-tree.js";
import type { StderrTail } from "./stderr-tail.js";
import { listAllTools, ToolListLimitError } from "./tool-listing.js";
import type { UpstreamTransportKind } from "./types.js";

/** Time a Streamable HTTP server gets to end its session on close. */
const TERMINATE_TIMEOUT_MS = 1000;
const SDK_TIMEOUT_SLACK_MS = 1000;
/** One response to a POST may hold this many messages' worth (progress notifications, then the result). */
const RESPONSE_MESSAGES = 4;

export interface SessionHooks {
  /** The transport closed; not called for a close this session started itself. */
  onClose: (session: UpstreamSession) => void;
  onToolsListChanged: (session: UpstreamSession) => void;
  /** The server sent more than a size cap allows; the session is unusable. */
  onLimit: (session: UpstreamSession, error: UpstreamLimitError) => void;
}

/** Why a call in flight lost its connection: stopped by the server, closed by us, or a broken cap. */
export type LostReason = "stopped" | "closed" | UpstreamLimitError;

export interface OpenSessionOptions {
  name: string;
  config: UpstreamServerConfig;
  clientInfo: { name: string; version: string };
  timeoutMs: number;
  /** Largest message the server may send (a stdio line, a JSON body, an SSE event). */
  maxMessageBytes: number;
  /** Tools the server may list; more fails the listing. */
  maxTools: number;
  log: Logger;
  /** Masks the configured secrets (env, headers, what args and URL carry) in texts that reach logs and status. */
  redact: (text: string) => string;
  stderr: StderrTail;
  hooks: SessionHooks;
  /** Called as soon as the session exists, so an owner that closes meanwhile can close it. */
  onCreated?: (session: UpstreamSession) => void;
  /** True once the owner no longer wants this session (stops the HTTP fallback). */
  cancelled?: () => boolean;
}

export function isStdioConfig(config: UpstreamServerConfig): config is StdioServerConfig {
  return "command" in config;
}

/** The transports to try for an HTTP server, in order. */
export function httpKinds(config: HttpServerConfig): UpstreamTransportKind[] {
  switch (config.type) {
    case "sse":
      return ["sse"];
    case "http":
    case "streamable-http":
    case "streamableHttp":
      return ["streamable-http"];
    case undefined:
      return ["streamable-http", "sse"];
  }
}

export class UpstreamSession {
  readonly client: Client;
  /** Set once initialize succeeded. */
  tools: Tool[] = [];
  /** A tools/list_changed arrived since the last listing started. */
  toolsStale = false;
  /** Rejecters of calls in flight, run when the transport closes under them. */
  readonly inFlight = new Set<(reason: LostReason) => void>();
  private processes: ProcessRef[] = [];
  private closing: Promise<void> | undefined;
  private readonly log: Logger;
  private readonly redact: (text: string) => string;
  private readonly name: string;
  /** Time a whole tool listing gets (the connect timeout). */
  readonly timeoutMs: number;
  private readonly maxMessageBytes: number;
  private readonly maxTools: number;

  private constructor(
    readonly kind: UpstreamTransportKind,
    readonly transport: Transport,
    options: OpenSessionOptions,
  ) {
    const { hooks, name, maxMessageBytes } = options;
    this.name = name;
    this.timeoutMs = options.timeoutMs;
    this.maxMessageBytes = maxMessageBytes;
    this.maxTools = options.maxTools;
    this.log = options.log;
    this.redact = options.redact;
    // Not the SDK's Ajv: it compiled and kept every listed output schema and ran their patterns (output-check.ts).
    this.client = new Client(options.clientInfo, { capabilities: {}, jsonSchemaValidator: boundedOutputCheck });
    this.client.onclose = () => {
      if (!this.closing) hooks.onClose(this);
    };
    this.client.onerror = (error) => {
      this.log.debug({ err: this.redact(describeFailure(error)) }, "upstream transport error");
      // The SDK's stdio reader drops a line past its buffer size and closes the transport.
      if (kind === "stdio" && /ReadBuffer exceeded maximum size/.test(error.message)) {
        hooks.onLimit(this, limitError(name, "a message", maxMessageBytes));
      }
    };
    // Set before connecting so a change announced during start-up is not lost.
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.toolsStale = true;
      hooks.onToolsListChanged(this);
    });
  }

  get pid(): number | undefined {
    return this.transport instanceof StdioClientTransport ? (this.transport.pid ?? undefined) : undefined;
  }

  /** Spawns or dials the server, initializes, and lists its tools, all within `timeoutMs`. */
  static async open(options: OpenSessionOptions): Promise<UpstreamSession> {
    const { config } = options;
    const deadline = Date.now() + options.timeoutMs;
    if (isStdioConfig(config)) {
      try {
        return await UpstreamSession.openKind(options, "stdio", deadline);
      } catch (error) {
        if (error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number)) {
          throw new Error("the process exited before the MCP handshake finished");
        }
        throw error;
      }
    }
    const failures: string[] = [];
    for (const kind of httpKinds(config)) {
      try {
        return await UpstreamSession.openKind(options, kind, deadline);
      } catch (error) {
        // The server answered and broke a cap: another transport would fetch the same list.
        if (error instanceof ToolListLimitError) throw error;
        failures.push(`${kind === "sse" ? "SSE" : "Streamable HTTP"}: ${describeFailure(error)}`);
        if (Date.now() >= deadline || options.cancelled?.() === true) break;
        options.log.debug({ server: options.name, kind, err: options.redact(describeFailure(error)) }, "upstream transport failed, trying the next");
      }
    }
    throw new Error(failures.join("; "));
  }

  private static async openKind(options: OpenSessionOptions, kind: UpstreamTransportKind, deadline: number): Promise<UpstreamSession> {
    // The transport's fetch is made before the session that owns it.
    const owner: { session?: UpstreamSession } = {};
    const onExceeded = (error: UpstreamLimitError): void => {
      if (owner.session !== undefined) options.hooks.onLimit(owner.session, error);
    };
    const transport = createTransport(options, kind, onExceeded);
    const session = new UpstreamSession(kind, transport, options);
    owner.session = session;
    options.onCreated?.(session);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`did not start within ${formatSeconds(options.timeoutMs)}`)),
        Math.max(0, deadline - Date.now()),
      );
    });
    try {
      await Promise.race([session.initialize(deadline), expired]);
      return session;
    } catch (error) {
      await session.close();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private async initialize(deadline: number): Promise<void> {
    // The SDK's request timeouts trail the deadline so the race in openKind() names the failure.
    const remaining = (): number => Math.max(1, deadline - Date.now()) + SDK_TIMEOUT_SLACK_MS;
    await this.client.connect(this.transport, { timeout: remaining() });
    this.processes = this.pid === undefined ? [] : descendantsOf(this.pid);
    this.tools = await this.listTools(deadline);
  }

  /**
   * Every page of tools/list, all done by `deadline`; [] when the server offers no tools.
   * Rejects with a ToolListLimitError when the server lists too many tools or bytes, or too slowly.
   */
  async listTools(deadline: number): Promise<Tool[]> {
    this.toolsStale = false;
    if (!this.client.getServerCapabilities()?.tools) return [];
    const tools = await listAllTools(this.client, {
      server: this.name,
      deadline,
      timeoutMs: this.timeoutMs,
      maxTools: this.maxTools,
      maxBytes: RESPONSE_MESSAGES * this.maxMessageBytes,
    });
    cacheAllToolMetadata(this.client, tools);
    return tools;
  }

  /** Closes the connection and kills the server's process tree; safe to call more than once. */
  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    for (const reject of this.inFlight) reject("closed");
    this.inFlight.clear();
    const pid = this.pid;
    const leftovers = [...this.processes, ...(pid === undefined ? [] : descendantsOf(pid))];
    if (this.transport instanceof StreamableHTTPClientTransport && this.transport.sessionId !== undefined) {
      const ended = this.transport.terminateSession().catch(() => undefined);
      await Promise.race([ended, new Promise((r) => setTimeout(r, TERMINATE_TIMEOUT_MS).unref())]);
    }
    try {
      // Ends stdin, then SIGTERM after 2 s and SIGKILL after 2 s more (StdioClientTransport.close).
      await this.client.close();
    } catch (error) {
      this.log.debug({ err: this.redact(describeFailure(error)) }, "closing upstream client failed");
    }
    const killed = killProcesses(leftovers);
    if (killed > 0) this.log.debug({ killed }, "killed processes an upstream server left behind");
  }

  /** After the transport closed on its own: kill whatever the server started that outlived it. */
  reapOrphans(): void {
    killProcesses(this.processes);
  }
}

function createTransport(options: OpenSessionOptions, kind: UpstreamTransportKind, onExceeded: (error: UpstreamLimitError) => void): Transport {
  const { config, log, name, maxMessageBytes } = options;
  if (isStdioConfig(config)) {
    log.info({ server: name, command: config.command, argCount: config.args.length, envNames: Object.keys(config.env) }, "starting upstream server");
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args,
      // Only the SDK's allowlist (HOME, PATH, ...) and what the config names: never sandgate's own secrets.
      env: { ...getDefaultEnvironment(), ...config.env },
      ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
      stderr: "pipe",
      maxBufferSize: maxMessageBytes,
    });
    options.stderr.clear();
    transport.stderr?.on("data", (chunk: Buffer) => options.stderr.push(chunk));
    return transport;
  }
  const url = new URL(config.url);
  log.info({ server: name, transport: kind, url: maskUrl(config.url), headerNames: Object.keys(config.headers) }, "connecting to upstream server");
  const requestInit: RequestInit = { headers: config.headers };
  // Without it the SDK reads a response whole: one endless SSE event exhausted the heap.
  const fetch = boundedFetch({ server: name, maxMessageBytes, maxResponseBytes: RESPONSE_MESSAGES * maxMessageBytes, onExceeded });
  return kind === "sse" ? new SSEClientTransport(url, { requestInit, fetch }) : new StreamableHTTPClientTransport(url, { requestInit, fetch });
}

/**
 * The SDK caches output-schema validators and task support per listTools() call, so with
 * pagination only the last page would be known. Re-cache the whole list (a validator is only a
 * reference to its schema: boundedOutputCheck compiles nothing).
 */
function cacheAllToolMetadata(client: Client, tools: Tool[]): void {
  const cache = (client as unknown as { cacheToolMetadata?: (tools: Tool[]) => void }).cacheToolMetadata;
  if (typeof cache === "function") cache.call(client, tools);
}
