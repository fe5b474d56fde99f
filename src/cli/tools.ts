// `sandgate tools`: connects the configured upstream MCP servers, then lists them and their
// tools, searches the catalog, or prints a file of the generated `servers/` tree.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SandgateConfig } from "../config/index.js";
import { SandgateError } from "../errors/index.js";
import { CodeMode, unavailableServer } from "../features/codemode/index.js";
import { toolPolicyFor } from "../features/governance/index.js";
import { createCliLogger } from "./cli-logger.js";
import type { CliIo } from "./io.js";

export interface ToolsCommandOptions {
  search?: string;
  detail?: string;
  limit?: string;
  server?: string;
  show?: string;
  tree?: boolean;
  json?: boolean;
}

const DETAILS = ["name", "summary", "full"] as const;
type Detail = (typeof DETAILS)[number];

function parseDetail(value: string | undefined): Detail {
  if (value === undefined) return "summary";
  if ((DETAILS as readonly string[]).includes(value)) return value as Detail;
  throw new SandgateError("INVALID_INPUT", `--detail must be one of ${DETAILS.join(", ")}, not ${JSON.stringify(value)}`);
}

function parseLimit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 50) throw new SandgateError("INVALID_INPUT", `--limit must be a whole number from 1 to 50, not ${JSON.stringify(value)}`);
  return limit;
}

const POLICY_NOTE = { deny: "  [denied by the tool policy]", approve: "  [each call waits for a person's approval]" } as const;

/** The tool policy's action for a tool when it is not allow, as search_tools gives it. */
function policyOf(config: SandgateConfig, codeMode: CodeMode, id: string): { policy?: "deny" | "approve" } {
  const tool = codeMode.catalog.resolve(id);
  if (!tool) return {};
  const { action } = toolPolicyFor(config.toolPolicy, tool.server, tool.name, [tool.tsName, tool.pyName]);
  return action === "allow" ? {} : { policy: action };
}

const noteOf = (marked: { policy?: "deny" | "approve" }): string => (marked.policy ? POLICY_NOTE[marked.policy] : "");

/** Runs `fn` with every upstream server connected (in a private tree directory), then disconnects. */
export async function withCodeMode<T>(config: SandgateConfig, io: CliIo, fn: (codeMode: CodeMode) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "sandgate-tools-"));
  const codeMode = new CodeMode(config, { log: createCliLogger(io.stderr, config.logLevel), toolsDir: dir });
  try {
    await codeMode.start();
    return await fn(codeMode);
  } finally {
    await codeMode.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runTools(options: ToolsCommandOptions, config: SandgateConfig, io: CliIo): Promise<number> {
  const detail = parseDetail(options.detail);
  const limit = parseLimit(options.limit);
  if (Object.keys(config.mcpServers).length === 0) {
    io.stderr.write("sandgate: no upstream MCP servers are configured; add them under mcpServers in sandgate.json (the format desktop MCP clients use)\n");
    return 1;
  }
  return withCodeMode(config, io, async (codeMode) => {
    const { catalog } = codeMode;
    const out = (text: string): void => void io.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
    if (options.show !== undefined) {
      const text = catalog.readTreeFile(options.show.replace(/^\/?sandgate\/tools\//, "").replace(/^\//, ""));
      if (text === undefined) throw new SandgateError("NOT_FOUND", `no file ${options.show} in the tool tree; \`sandgate tools --tree\` lists them`);
      out(text);
      return 0;
    }
    if (options.tree) {
      out(catalog.tree().join("\n"));
      return 0;
    }
    if (options.search !== undefined) {
      const down = options.server === undefined ? undefined : unavailableServer(codeMode.discoverySource(), options.server);
      if (down) throw down;
      const hits = catalog.search(options.search, { detail, ...(limit ? { limit } : {}), ...(options.server ? { server: options.server } : {}) }).map((h) => ({ ...h, ...policyOf(config, codeMode, h.id) }));
      if (options.json) out(JSON.stringify(hits, null, 2));
      else if (hits.length === 0) out(`no tool matches ${JSON.stringify(options.search)}`);
      else out(hits.map((h) => (detail === "full" ? `// ${h.id}${noteOf(h)}\n${h.signature ?? ""}` : `${h.id}${h.summary ? `  ${h.summary}` : ""}${noteOf(h)}`)).join(detail === "full" ? "\n\n" : "\n"));
      return 0;
    }
    const status = codeMode.status().filter((s) => options.server === undefined || s.name === options.server);
    if (options.server !== undefined && status.length === 0) {
      const known = Object.keys(config.mcpServers).join(", ");
      throw new SandgateError("INVALID_INPUT", `no upstream server \`${options.server}\` is configured (servers: ${known})`, { data: { server: options.server } });
    }
    if (options.json) {
      out(JSON.stringify({ servers: status, tools: catalog.tools(options.server).map(({ inputSchema: _i, outputSchema: _o, ...t }) => ({ ...t, ...policyOf(config, codeMode, t.id) })) }, null, 2));
    } else {
      for (const s of status) {
        out(`${s.name} (${s.transport}): ${s.state}, ${s.toolCount} tools${s.error ? `\n  error: ${s.error.split("\n").join("\n  ")}` : ""}`);
        for (const tool of catalog.tools(s.name)) out(`  ${tool.id}${tool.description ? `  ${tool.description.split("\n")[0]!.slice(0, 100)}` : ""}${noteOf(policyOf(config, codeMode, tool.id))}`);
      }
    }
    return status.some((s) => s.state === "failed") ? 1 : 0;
  });
}
