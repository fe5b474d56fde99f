// UpstreamManager: every configured upstream MCP server, started in parallel, with their
// tools, status and calls; the single owner of every process and connection this layer opens.

import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { maskText, secretList, serverSecretValues, upstreamServerSchema, type UpstreamServerConfig } from "../../../config/index.js";
import { SandgateError } from "../../../errors/index.js";
import { silentLogger, type Logger } from "../../../util/logger.js";
import { UpstreamConnection } from "./connection.js";
import type { CallOptions, UpstreamManagerOptions, UpstreamStatus } from "./types.js";

const DEFAULT_BACKOFF_BASE_MS = 500;
const DEFAULT_RETRY_BASE_MS = 1000;
const DEFAULT_RETRY_MAX_MS = 5 * 60_000;
/** The cap the SDK's stdio reader has by default. */
const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
const DEFAULT_MAX_TOOLS = 1000;
const DEFAULT_CLIENT_INFO = { name: "sandgate", version: "0.1.0" };

export type ToolsChangedListener = (server: string, tools: Tool[]) => void;

export class UpstreamManager {
  private readonly connections = new Map<string, UpstreamConnection>();
  private readonly listeners = new Set<ToolsChangedListener>();
  private readonly log: Logger;
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: UpstreamManagerOptions) {
    this.log = options.log ?? silentLogger;
    checkOptions(options);
    const parsed = new Map<string, UpstreamServerConfig>();
    for (const [name, raw] of Object.entries(options.servers)) {
      const result = upstreamServerSchema.safeParse(raw);
      if (!result.success) {
        throw new SandgateError("CONFIG_INVALID", `upstream server \`${name}\` is misconfigured: ${result.error.issues.map((i) => i.message).join("; ")}`, {
          data: { server: name },
        });
      }
      parsed.set(name, result.data);
    }
    const secrets = secretList([...parsed.values()].flatMap(serverSecretValues));
    const redact = (text: string): string => maskText(text, secrets);
    for (const [name, config] of parsed) {
      this.connections.set(
        name,
        new UpstreamConnection({
          name,
          config,
          log: this.log,
          connectTimeoutMs: options.connectTimeoutMs,
          defaultCallTimeoutMs: options.defaultCallTimeoutMs,
          maxRestarts: options.maxRestarts,
          backoffBaseMs: options.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS,
          retryBaseMs: options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS,
          retryMaxMs: options.retryMaxMs ?? DEFAULT_RETRY_MAX_MS,
          maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
          maxTools: options.maxToolsPerServer ?? DEFAULT_MAX_TOOLS,
          redact,
          clientInfo: options.clientInfo ?? DEFAULT_CLIENT_INFO,
          onToolsChanged: (tools) => this.emit(name, tools),
        }),
      );
    }
  }

  /** Connects every enabled server in parallel; resolves when each is ready or failed. Never rejects. */
  start(): Promise<void> {
    this.starting ??= Promise.all([...this.connections.values()].map((c) => c.start())).then(() => undefined);
    return this.starting;
  }

  status(): UpstreamStatus[] {
    return [...this.connections.values()].map((c) => c.status());
  }

  serverStatus(name: string): UpstreamStatus | undefined {
    return this.connections.get(name)?.status();
  }

  /** The server's tools (all pages of tools/list); [] for an unknown, failed or disabled server. */
  tools(name: string): Tool[] {
    return this.connections.get(name)?.tools() ?? [];
  }

  /** Called with a server's tools after each listing, and with [] when the server fails; returns unsubscribe. */
  onToolsChanged(listener: ToolsChangedListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Calls a tool. An upstream result with isError is returned as is; a server that is not
   * ready, stops during the call, times out or answers with a JSON-RPC error rejects with a
   * SandgateError (UPSTREAM_UNAVAILABLE, UPSTREAM_TIMEOUT, UPSTREAM_ERROR). Aborting
   * `options.signal` rejects with the signal's reason.
   */
  async callTool(server: string, tool: string, args: Record<string, unknown>, options?: CallOptions): Promise<CallToolResult> {
    const connection = this.connections.get(server);
    if (!connection) {
      const known = [...this.connections.keys()].map((n) => `\`${n}\``).join(", ") || "none";
      throw new SandgateError("UPSTREAM_UNAVAILABLE", `no upstream server is named \`${server}\` (configured: ${known})`, {
        data: { server, tool },
      });
    }
    if (this.closing) throw new SandgateError("UPSTREAM_UNAVAILABLE", `upstream server \`${server}\` is closed`, { data: { server, tool } });
    return await connection.callTool(tool, args, options);
  }

  /** Closes every connection and kills every process this manager started; idempotent. */
  close(): Promise<void> {
    this.closing ??= Promise.all([...this.connections.values()].map((c) => c.close())).then(() => undefined);
    return this.closing;
  }

  private emit(server: string, tools: Tool[]): void {
    if (this.closing) return;
    for (const listener of this.listeners) {
      try {
        listener(server, tools);
      } catch (error) {
        this.log.error({ server, err: error instanceof Error ? error.message : String(error) }, "onToolsChanged listener threw");
      }
    }
  }
}

function checkOptions(options: UpstreamManagerOptions): void {
  const problems: string[] = [];
  if (!(options.connectTimeoutMs > 0)) problems.push("connectTimeoutMs must be positive");
  if (!(options.defaultCallTimeoutMs > 0)) problems.push("defaultCallTimeoutMs must be positive");
  if (!Number.isInteger(options.maxRestarts) || options.maxRestarts < 0) problems.push("maxRestarts must be a whole number ≥ 0");
  if (options.backoffBaseMs !== undefined && !(options.backoffBaseMs >= 0)) problems.push("backoffBaseMs must be ≥ 0");
  if (options.retryBaseMs !== undefined && !(options.retryBaseMs > 0)) problems.push("retryBaseMs must be positive");
  if (options.retryMaxMs !== undefined && !(options.retryMaxMs >= 0)) problems.push("retryMaxMs must be ≥ 0");
  if (options.maxMessageBytes !== undefined && !(Number.isInteger(options.maxMessageBytes) && options.maxMessageBytes >= 1024)) problems.push("maxMessageBytes must be a whole number ≥ 1024");
  if (options.maxToolsPerServer !== undefined && !(Number.isInteger(options.maxToolsPerServer) && options.maxToolsPerServer >= 1)) problems.push("maxToolsPerServer must be a whole number ≥ 1");
  if (problems.length > 0) throw new SandgateError("CONFIG_INVALID", `invalid upstream options: ${problems.join("; ")}`);
}
