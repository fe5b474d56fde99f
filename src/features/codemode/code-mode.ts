// Code mode: the upstream MCP servers, the catalog built from their tools, and the generated
// tree sandboxes read at /sandgate/tools. One owner starts them together and closes them together.

import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { Catalog, type JsonSchema } from "./catalog/index.js";
import { allApiKeys, maskText, scopesOfKey, upstreamSecretValues, type SandgateConfig } from "../../config/index.js";
import type { ExecutionContext, OutputGuard, SandboxOperations, UpstreamCallScope } from "../../execution/index.js";
import type { Governance } from "../governance/index.js";
import { openRuntimeView, type RuntimeView } from "../../sandbox/index.js";
import { UpstreamManager, type UpstreamStatus } from "./upstream/index.js";
import { silentLogger, type Logger } from "../../util/logger.js";
import type { DiscoverySource } from "./discovery.js";
import { createUpstreamCallScope } from "./upstream-calls.js";
import { PiiBoundary } from "./pii-boundary.js";
import { listServers, searchTools } from "./operations.js";
import { sandboxCallHandler, sandboxOperations } from "../../operations/sandbox-calls.js";

export interface CodeModeOptions {
  log?: Logger;
  /**
   * Host directory of the generated tree. Default: `tools` in a tmpfs view of its own, so a
   * sandbox's /proc/self/mountinfo shows `/tools`, not SANDBOX_DIR; SANDBOX_DIR/tools where no tmpfs can be mounted.
   */
  toolsDir?: string;
  version?: string;
  /** Approvals for the tool policy's "approve" and the record of every tool call; without it calls go unrecorded and "approve" denies. */
  governance?: Governance;
}

export class CodeMode {
  readonly catalog: Catalog;
  readonly upstream: UpstreamManager;
  readonly toolsDir: string;
  /** The tmpfs the default tree lives in (the tree is written anew at every start, so nothing of it needs a disk). */
  private readonly view: RuntimeView | undefined;
  private readonly unsubscribe: () => void;
  private readonly secrets: string[];
  private readonly jsonSecrets: string[];
  private readonly log: Logger;
  private readonly governance: Governance | undefined;
  private readonly catalogListeners = new Set<() => void>();
  /** Output schemas inferred from real responses, kept across restarts unless codeMode.persistInferredSchemas is off. */
  private readonly inferredPath: string | undefined;
  private closed = false;
  /** A background save of the inferred schemas under way, and whether another was asked for meanwhile. */
  private saving: Promise<void> | undefined;
  private saveAgain = false;
  /** PII vaults per session and caller; tokenization of what crosses to the agent. */
  readonly pii: PiiBoundary;

  constructor(
    private readonly config: SandgateConfig,
    options: CodeModeOptions = {},
  ) {
    if (options.toolsDir === undefined) {
      this.view = openRuntimeView(join(config.sandboxDir, "tools"));
      this.toolsDir = this.view.hidden ? join(this.view.dir, "tools") : this.view.dir;
    } else {
      this.toolsDir = options.toolsDir;
    }
    this.secrets = upstreamSecretValues(config);
    this.jsonSecrets = this.secrets.map((secret) => JSON.stringify(secret).slice(1, -1));
    mkdirSync(this.toolsDir, { recursive: true });
    // The sandbox user reads the tree; nobody but sandgate writes it.
    chmodSync(this.toolsDir, 0o755);
    this.log = options.log ?? silentLogger;
    this.governance = options.governance;
    this.pii = new PiiBoundary(config.pii, config.sessions.idleTtlS * 1000);
    const unknown = Object.keys(config.toolPolicy.rules).filter((key) => !((key.split(".")[0] ?? key) in config.mcpServers));
    if (unknown.length > 0) this.log.warn({ rules: unknown }, "toolPolicy.rules name upstream servers that are not configured");
    this.inferredPath = config.codeMode.persistInferredSchemas ? join(config.sandboxDir, "inferred-output-schemas.json") : undefined;
    this.catalog = new Catalog({ dir: this.toolsDir, inferred: this.loadInferred() });
    const { codeMode } = config;
    this.upstream = new UpstreamManager({
      servers: config.mcpServers,
      log: this.log,
      connectTimeoutMs: codeMode.connectTimeoutS * 1000,
      defaultCallTimeoutMs: codeMode.toolCallTimeoutS * 1000,
      maxRestarts: codeMode.maxRestarts,
      retryBaseMs: codeMode.retryFailedS * 1000,
      retryMaxMs: codeMode.retryFailedMaxS * 1000,
      maxMessageBytes: codeMode.maxUpstreamMessageBytes,
      maxToolsPerServer: codeMode.maxToolsPerServer,
      clientInfo: { name: "sandgate", version: options.version ?? "0.0.0" },
    });
    this.unsubscribe = this.upstream.onToolsChanged((server, tools) => {
      if (this.closed) return;
      if (tools.length === 0 && this.upstream.serverStatus(server)?.state !== "ready") this.catalog.removeServer(server);
      else this.catalog.setServer(server, tools, describeServer(this.upstream.serverStatus(server)));
      // A big server's files are written in the background; the loop keeps serving meanwhile.
      this.catalog.settled().catch((error: unknown) => this.log.error({ server, err: (error as Error).message }, "writing the tool tree failed"));
      for (const listener of this.catalogListeners) listener();
    });
  }

  /** Called after the catalog changed (a server connected, refreshed its tools, or went away). */
  onCatalogChanged(listener: () => void): () => void {
    this.catalogListeners.add(listener);
    return () => this.catalogListeners.delete(listener);
  }

  /** Connects every configured server in parallel; failures are reported in status(), not thrown. */
  async start(): Promise<void> {
    await this.upstream.start();
    await this.catalog.settled();
  }

  /** Server states; error texts (which quote a server's stderr) never carry a configured secret. */
  status(): UpstreamStatus[] {
    return this.upstream.status().map((s) => (s.error ? { ...s, error: this.redact(s.error) } : s));
  }

  /** Replaces every configured secret (env and header values, what args and URLs carry) in `text` with a mask. */
  redact(text: string): string {
    return maskText(text, this.secrets);
  }

  /**
   * A tool result with every configured secret masked: an upstream that echoes its environment
   * or headers (a debugging tool, an error dump) must not hand the code its credentials.
   */
  redactValue(value: unknown): unknown {
    if (this.secrets.length === 0 || value === undefined) return value;
    const json = JSON.stringify(value);
    // Secrets are matched as they appear inside JSON strings, so the masked text stays valid JSON.
    const out = maskText(json, this.jsonSecrets);
    return out === json ? value : (JSON.parse(out) as unknown);
  }

  /** What guards text read from `owner`'s session (file_read), when its vault holds values. */
  guardFor(owner: string, sessionId: string): OutputGuard | undefined {
    return this.pii.guardFor(owner, sessionId);
  }

  /** A session ended: its PII vault goes with it. */
  sessionEnded(owner: string, sessionId: string): void {
    this.pii.sessionEnded(owner, sessionId);
  }

  /** Upstream calls of one execution, bound to the session (or stateless call) that runs it. */
  beginExecution(context: ExecutionContext): UpstreamCallScope {
    const { codeMode } = this.config;
    return createUpstreamCallScope({
      catalog: this.catalog,
      upstream: this.upstream,
      maxCalls: codeMode.maxToolCallsPerExecution,
      redact: (text) => this.redact(text),
      redactValue: (value) => this.redactValue(value),
      onInferred: (background) => this.saveInferred(background),
      teachesSchemas: this.teachesSchemas(context.owner),
      policy: this.config.toolPolicy,
      context,
      governance: this.governance,
      pii: this.pii.execution(context.sessionOwner ?? context.owner, context.sessionId),
    });
  }

  /**
   * Whose tool results may shape the inferred output schemas all callers read: anyone's on a server
   * without API keys (one operator) or over stdio, else only a key with the `admin` scope's (a key that
   * already decides every caller's approvals). A tenant's keys would otherwise become everyone's API text.
   */
  private teachesSchemas(owner: string): boolean {
    const { server } = this.config;
    if (allApiKeys(server).length === 0 || owner === "stdio") return true;
    return owner.startsWith("key:") && scopesOfKey(server, owner.slice("key:".length)).has("admin");
  }

  /**
   * Code mode's own operations for sandboxed code (search_tools, list_servers), for an engine a
   * library builds with `tools: codeMode` alone; an app hands its engine every operation instead.
   */
  get operations(): SandboxOperations {
    const callable = sandboxOperations([searchTools, listServers]);
    const host = { codeMode: this, config: this.config };
    const { maxToolCallsPerExecution: maxCalls } = this.config.codeMode;
    return { handlerFor: ({ owner }) => sandboxCallHandler(callable, () => host, { owner, maxCalls, log: this.log }) };
  }

  /** What search_tools and list_servers read, for the MCP tools and for sandboxed code alike. */
  discoverySource(): DiscoverySource {
    return { catalog: this.catalog, status: () => this.status(), policy: this.config.toolPolicy };
  }

  private loadInferred(): Record<string, JsonSchema> {
    if (this.inferredPath === undefined) return {};
    let text: string;
    try {
      text = readFileSync(this.inferredPath, "utf8");
    } catch {
      return {};
    }
    try {
      return inferredFile.parse(JSON.parse(text));
    } catch (error) {
      this.log.warn({ file: this.inferredPath, err: (error as Error).message }, "ignoring a malformed file of inferred output schemas");
      return {};
    }
  }

  /**
   * Writes the inferred schemas at once, or in the background (the file is read only at the next
   * start). One write at a time: a save asked for meanwhile runs after it, with what is known then.
   */
  private saveInferred(background = false): void {
    const path = this.inferredPath;
    if (path === undefined) return;
    if (this.saving !== undefined) {
      this.saveAgain = true;
      return;
    }
    const temp = `${path}.${process.pid}.tmp`;
    const failed = (error: unknown): void => this.log.warn({ file: path, err: (error as Error).message }, "could not save inferred output schemas");
    if (!background) {
      try {
        writeFileSync(temp, JSON.stringify(this.catalog.inferredSchemas(), null, 2));
        renameSync(temp, path);
      } catch (error) {
        failed(error);
      }
      return;
    }
    this.saving = (async () => {
      do {
        this.saveAgain = false;
        try {
          await writeFile(temp, JSON.stringify(this.catalog.inferredSchemas(), null, 2));
          await rename(temp, path);
        } catch (error) {
          failed(error);
        }
      } while (this.saveAgain);
    })().finally(() => (this.saving = undefined));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    await this.upstream.close();
    // Tree writes still running would otherwise land after the owner removed SANDBOX_DIR.
    await this.catalog.settled().catch(() => undefined);
    await this.saving;
    // Lazily: sandboxes still running keep their bind of the tree.
    this.view?.close();
  }
}

const inferredFile = z.record(z.string(), z.record(z.string(), z.unknown()));

function describeServer(status: UpstreamStatus | undefined): { description?: string } {
  const text = status?.instructions?.trim() || (status?.serverInfo ? `${status.serverInfo.name} ${status.serverInfo.version}` : "");
  return text ? { description: text.slice(0, 500) } : {};
}
