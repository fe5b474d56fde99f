// Upstream calls made by sandboxed code during one execution: resolved against the catalog, sent
// upstream with the host's credentials, counted, timed, and turned into values or errors.

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Catalog } from "../catalog/index.js";
import { isSandgateError } from "../errors/index.js";
import { estimateJsonTokens, type UpstreamCallRecord, type UpstreamCallScope } from "../execution/index.js";
import type { UpstreamCallReply } from "../sandbox/index.js";
import type { UpstreamManager } from "../upstream/index.js";

export interface UpstreamCallScopeOptions {
  catalog: Catalog;
  upstream: UpstreamManager;
  maxCalls: number;
  /** Masks configured secrets in messages that reach the code (and so the agent). */
  redact: (text: string) => string;
  /** The same for a tool result on its way into the sandbox. */
  redactValue: (value: unknown) => unknown;
  /** Called when a result taught the catalog a tool's output schema. */
  onInferred?: () => void;
}

const ERROR_KIND: Record<string, string> = {
  UPSTREAM_TIMEOUT: "ToolTimeout",
  UPSTREAM_UNAVAILABLE: "ToolUnavailable",
  UPSTREAM_ERROR: "ToolError",
};

/** The value code receives: structuredContent, else JSON parsed from the text, else the text. */
function toolResultValue(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const content = result.content ?? [];
  const texts = content.filter((c): c is { type: "text"; text: string } => c.type === "text").map((c) => c.text);
  if (texts.length === content.length && texts.length > 0) {
    const parsed = texts.map(parseJsonText);
    return parsed.length === 1 ? parsed[0] : parsed;
  }
  return content.length === 0 ? null : content;
}

function parseJsonText(text: string): unknown {
  const trimmed = text.trim();
  if (!/^[[{"]/.test(trimmed) && !/^(-?\d|true$|false$|null$)/.test(trimmed)) return text;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return text;
  }
}

/** The upstream message of an isError result, as plain text. */
function errorText(result: CallToolResult): string {
  const text = (result.content ?? [])
    .map((c) => (c.type === "text" ? c.text : `[${c.type}]`))
    .join("\n")
    .trim();
  return text || "the tool reported an error without a message";
}

export function createUpstreamCallScope(options: UpstreamCallScopeOptions): UpstreamCallScope {
  const { catalog, upstream, maxCalls, redact } = options;
  const calls: UpstreamCallRecord[] = [];
  let tokensInSandbox = 0;
  let attempted = 0;

  const fail = (tool: string, started: number, type: string, raw: string): UpstreamCallReply => {
    const message = redact(raw);
    calls.push({ tool, ok: false, durationMs: elapsed(started), error: message });
    return { ok: false, error: { type, message } };
  };

  return {
    async onUpstreamCall(call, signal) {
      const started = performance.now();
      if (++attempted > maxCalls) {
        return fail(call.tool, started, "ToolLimit", `this execution reached its limit of ${maxCalls} tool calls; do more work per call or split the job`);
      }
      const entry = catalog.resolve(call.tool);
      if (!entry) return fail(call.tool, started, "ToolNotFound", notFoundMessage(catalog, call.tool));
      const args = (call.args ?? {}) as Record<string, unknown>;
      try {
        // The upstream layer applies the server's timeoutS, else codeMode.toolCallTimeoutS.
        const result = await upstream.callTool(entry.server, entry.name, args, { signal });
        if (result.isError) return fail(entry.id, started, "ToolError", errorText(result));
        const value = options.redactValue(toolResultValue(result));
        learnOutputSchema(catalog, entry.id, value, options.onInferred);
        tokensInSandbox += estimateJsonTokens(value);
        calls.push({ tool: entry.id, ok: true, durationMs: elapsed(started) });
        return { ok: true, value };
      } catch (error) {
        if (isSandgateError(error)) return fail(entry.id, started, ERROR_KIND[error.code] ?? "ToolError", error.message);
        return fail(entry.id, started, "ToolError", (error as Error).message);
      }
    },
    finish() {
      return { calls: [...calls], tokensInSandbox };
    },
  };
}

/** Types a tool from its first result; a failure to write the tree must not fail the call itself. */
function learnOutputSchema(catalog: Catalog, id: string, value: unknown, onInferred: (() => void) | undefined): void {
  try {
    if (catalog.observeOutput(id, value)) onInferred?.();
  } catch {
    // The schema is kept; the files show it once the tree is next written (the next change of any tool).
  }
}

function notFoundMessage(catalog: Catalog, ref: string): string {
  const servers = catalog.servers().map((s) => s.name);
  const dot = ref.indexOf(".");
  if (dot <= 0) return `tool \`${ref}\` is not a tool id; ids look like \`server.tool\` (servers: ${servers.join(", ") || "none configured"})`;
  const server = ref.slice(0, dot);
  if (!servers.includes(server)) return `no upstream server \`${server}\` (servers: ${servers.join(", ") || "none configured"})`;
  let similar: string[] = [];
  try {
    similar = catalog.search(ref.slice(dot + 1).replace(/[^A-Za-z0-9]+/g, " "), { detail: "name", limit: 3, server }).map((h) => h.id);
  } catch {
    // a name with no searchable words
  }
  return `server \`${server}\` has no tool \`${ref.slice(dot + 1)}\`${similar.length ? `; similar: ${similar.join(", ")}` : ""}`;
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}
