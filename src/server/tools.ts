// The tools sandgate offers: one table of definitions (schemas, descriptions, handlers) that
// the MCP server, the REST conveniences and the OpenAPI document all read.

import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { LOCAL_OWNER, unknownLanguageError, type ExecuteRequest, type ExecutionResult, type CommandRequest, type JobRequest } from "../execution/index.js";
import { languageTitles, systemPythonModules, upstreamCallExamples } from "../languages/index.js";
import { defaultTimeoutS } from "../config/index.js";
import { sessionOnDemand } from "../features/sessions/index.js";
import { describeFlavors, describePackageSets, installedPackageNames } from "../sandbox/index.js";
import { isSandgateError, isToolResultCode, publicError, SandgateError } from "../errors/index.js";
import { cutName, nameSome } from "./client-names.js";
import type { ServerContext } from "./context.js";
import { defineTool, type ToolCallContext, type ToolDefinition, type ToolReply } from "./tool-definition.js";

export type { ToolCallContext, ToolDefinition, ToolReply };
import { describeResult, renderResultText } from "../features/execute/index.js";
import { operationTools } from "./operation-tools.js";
import { operations } from "./operations.js";
import { startJob } from "../features/index.js";
import { retryAfterOf } from "./retry-after.js";
import { toJsonSchema } from "./json-schema.js";
import {
  executeCodeInput,
  executeCommandInput,
  executionResultSchema,
  toWireResult,
  type WireExecutionResult,
} from "./wire.js";

/**
 * execute_command's outputSchema: execute_code's result, whose full schema that tool lists already
 * (repeating it made tools/list about a third longer). REST's OpenAPI keeps the full schema.
 */
const sameResultAsExecuteCode = z.object({}).passthrough().describe("The result object of execute_code (see its outputSchema)");
const orList = (items: string[]): string => (items.length > 1 ? `${items.slice(0, -1).join(", ")} or ${items.at(-1)}` : (items[0] ?? ""));

/**
 * The engine's variables of execute_code / execute_command arguments; session_env without a
 * session is refused here, before a stream starts.
 */
function envFields(args: { env?: Record<string, string>; session_env?: Record<string, string>; session_id?: string }): Pick<ExecuteRequest, "env" | "sessionEnv"> {
  if (args.session_env !== undefined && args.session_id === undefined) {
    throw new SandgateError("INVALID_INPUT", "session_env sets a session's variables and needs a session_id; use env for one call", { data: { field: "session_env" } });
  }
  return { ...(args.env ? { env: args.env } : {}), ...(args.session_env ? { sessionEnv: args.session_env } : {}) };
}

/** The engine request for execute_code arguments (REST validates the same request before streaming). */
export function codeRequest(args: z.infer<typeof executeCodeInput>): ExecuteRequest {
  return {
    code: args.code,
    language: args.language,
    ...(args.timeout !== undefined ? { timeoutS: args.timeout } : {}),
    ...(args.flavor ? { flavor: args.flavor } : {}),
    ...envFields(args),
    ...(args.keep_processes !== undefined ? { keepProcesses: args.keep_processes } : {}),
  };
}

/** The engine request for execute_command arguments. */
function commandRequest(args: z.infer<typeof executeCommandInput>): CommandRequest {
  return {
    command: args.command,
    ...(args.working_directory !== undefined ? { workingDirectory: args.working_directory } : {}),
    ...(args.timeout !== undefined ? { timeoutS: args.timeout } : {}),
    ...envFields(args),
    ...(args.keep_processes !== undefined ? { keepProcesses: args.keep_processes } : {}),
  };
}

/**
 * Runs one execution for a tool: the session started on demand, cancellation and streaming
 * wired in, and the result rendered for the agent.
 */
async function runExecution(
  ctx: ServerContext,
  sessionId: string | undefined,
  call: ToolCallContext,
  run: (common: Pick<ExecuteRequest, "sessionId" | "signal" | "onOutput" | "owner" | "approver" | "onWaiting">) => Promise<ExecutionResult>,
): Promise<{ structured: WireExecutionResult; text: string; isError: boolean; images?: ToolReply["images"] }> {
  const owner = ownerOf(call);
  const session = sessionOnDemand(ctx.engine.sessions, sessionId, owner);
  const result = await run({
    owner,
    ...(session.sessionId ? { sessionId: session.sessionId } : {}),
    ...(call.signal ? { signal: call.signal } : {}),
    ...(call.onOutput ? { onOutput: call.onOutput } : {}),
    ...(call.approver ? { approver: call.approver } : {}),
    ...(call.onWaiting ? { onWaiting: call.onWaiting } : {}),
  });
  if (session.note) result.stateReset = true;
  const wire = { ...toWireResult(result), ...(session.note ? { state_reset_reason: session.note } : {}) };
  const text = renderResultText(wire, describeResult(wire, ctx.config), session.note);
  const images = wire.images?.map((image) => ({ mimeType: image.mime, data: image.data_base64 }));
  return { structured: wire, text, isError: wire.status !== "ok", ...(images ? { images } : {}) };
}

const ownerOf = (call: ToolCallContext): string => call.owner ?? LOCAL_OWNER;

/** Starts a call as a background job (background: true), in the caller's session when it names one. */
function runInBackground(ctx: ServerContext, sessionId: string | undefined, call: ToolCallContext, request: JobRequest): Promise<{ structured: WireExecutionResult; text: string }> {
  const session = sessionOnDemand(ctx.engine.sessions, sessionId, ownerOf(call));
  return startJob(ctx, { ...request, ...(session.sessionId ? { sessionId: session.sessionId } : {}) }, call.owner ?? LOCAL_OWNER, session.note);
}

/**
 * What the sandboxes can import beyond the standard libraries, read at start-up: the system
 * Python's modules of note (Debian's python3-* under /usr) and the admin's synced sets; and that
 * installs cannot add more.
 */
function packagesSentence(sandboxDir: string, python: string): string {
  const system = systemPythonModules(python);
  const sets = describePackageSets(installedPackageNames(sandboxDir));
  const parts = [...(system.length > 0 ? [`Python has ${system.join(", ")}`] : []), ...(sets === "" ? [] : [`Installed packages (besides the system's): ${sets}`])];
  return ` ${parts.length > 0 ? parts.join("; ") : "Packages: what the system has"}; pip and npm cannot install more (no network).`;
}

/** With governance on, that the code is judged before it runs, and (when listed) where to check first. */
function policySentence(config: ServerContext["config"], full: boolean): string {
  if (!config.security.enabled) return "";
  return (
    ` Code is analysed first (security level ${config.security.level}): blocked code does not run (POLICY_BLOCKED names findings and lines), some waits for a person's approval` +
    `${full ? "; analyze_code checks code without running it" : ""}.`
  );
}

/** How code calls upstream tools, and (codemode) that it can search them itself; empty without upstream servers. */
function upstreamSentence(config: ServerContext["config"], full: boolean): string {
  const servers = Object.keys(config.mcpServers);
  if (servers.length === 0) return "";
  return (
    ` Upstream MCP servers (${servers.join(", ")}): find tools with search_tools, call them from code with ` +
    `${orList(upstreamCallExamples().map(({ titles, example }) => `\`${example.call}\` (${titles})`))}; results stay in the sandbox unless printed.` +
    (config.pii.enabled ? " Personal data in printed tool results shows as tokens like [EMAIL_1]; pass them back in tool arguments as they are." : "") +
    (full ? "" : " Code can search too: searchTools/listServers (JS/TS), search_tools/list_servers (Python), sandgate-tool --search/--servers (Bash).")
  );
}

/** execute_code's description; `full` names the tools only the full profile lists. */
function executeCodeDescription(ctx: ServerContext, full: boolean): string {
  const { config, engine } = ctx;
  return (
    `Run ${languageTitles("or")} in a Linux sandbox without network; returns output and the last expression's value (${languageTitles("and", (spec) => spec.returnsValue)}). ` +
    `Limits: ${defaultTimeoutS(config.limits)} s by default (timeout up to ${config.limits.maxExecutionTimeS} s); memory by flavor: ${describeFlavors(config)}. ` +
    "Print summaries: long output is shortened and saved. Plots (matplotlib, PIL, sandgate.show(x)) come back as images." +
    (full ? " background: true runs a job (get_job)." : "") +
    packagesSentence(config.sandboxDir, engine.runtime.interpreters.python) +
    upstreamSentence(config, full) +
    policySentence(config, full)
  );
}

export function createTools(ctx: ServerContext): ToolDefinition[] {
  const { engine, config } = ctx;

  const executeCode = defineTool({
    name: "execute_code",
    scope: "execute",
    title: "Run code in a sandbox",
    description: executeCodeDescription(ctx, true),
    input: executeCodeInput,
    output: executionResultSchema,
    annotations: { title: "Run code in a sandbox", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: async (args, call) =>
      args.background
        ? runInBackground(ctx, args.session_id, call, codeRequest(args))
        : runExecution(ctx, args.session_id, call, (common) => engine.execute({ ...codeRequest(args), ...common })),
  });
  // The codemode profile lists no get_job, so no background jobs there.
  executeCode.codemode = { ...executeCode, description: executeCodeDescription(ctx, false), input: executeCodeInput.omit({ background: true }) };

  const executeCommand = defineTool({
    name: "execute_command",
    scope: "execute",
    title: "Run a shell command in a sandbox",
    description:
      `Run one bash line, e.g. "ls -la | head" (pipes, redirections, && work). A cd does not persist: use working_directory. ` +
      `Arguments, limits${config.security.enabled ? ", security policy" : ""} and result as execute_code.`,
    input: executeCommandInput,
    output: sameResultAsExecuteCode,
    annotations: { title: "Run a shell command in a sandbox", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: async (args, call) =>
      args.background
        ? runInBackground(ctx, args.session_id, call, commandRequest(args))
        : runExecution(ctx, args.session_id, call, (common) => engine.executeCommand({ ...commandRequest(args), ...common })),
  });

  return [
    executeCode,
    executeCommand,
    ...operationTools(operations.list(), ctx),
  ];
}

const listed = new WeakMap<ToolDefinition, Tool>();

/** The MCP `tools/list` entry of a definition (built once; schemas do not change at run time). */
export function toMcpTool(tool: ToolDefinition): Tool {
  const cached = listed.get(tool);
  if (cached) return cached;
  const entry: Tool = {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: toJsonSchema(tool.input) as Tool["inputSchema"],
    outputSchema: toJsonSchema(tool.output) as Tool["outputSchema"],
    annotations: tool.annotations,
  };
  listed.set(tool, entry);
  return entry;
}

/** Parses arguments against the tool's schema; the error names the field and what was wrong. */
export function parseToolArguments(tool: Pick<ToolDefinition, "name" | "input">, args: unknown): Record<string, unknown> {
  const parsed = tool.input.safeParse(args ?? {});
  if (parsed.success) return parsed.data;
  // A language that is not one of the enum's names and aliases is refused as the engine refuses it.
  const [only] = parsed.error.issues;
  if (parsed.error.issues.length === 1 && only?.code === "invalid_enum_value" && only.path.join(".") === "language") {
    throw unknownLanguageError(String((args as { language: unknown }).language));
  }
  const problems = parsed.error.issues.map((issue) => {
    const field = issue.path.join(".");
    if (issue.code === "unrecognized_keys") return `unknown argument ${nameSome(issue.keys)}`;
    return `${field || "arguments"}: ${issue.message}`;
  });
  const first = parsed.error.issues[0];
  // An unknown argument's issue sits on the object itself: the field is the key it names.
  const field = first?.code === "unrecognized_keys" ? [...first.path, cutName(first.keys[0] ?? "")].join(".") : (first?.path.join(".") ?? "");
  throw new SandgateError("INVALID_INPUT", `invalid arguments for tool ${tool.name}: ${problems.join("; ")}`, {
    data: { tool: tool.name, field },
  });
}

/** Finds a tool by name; an unknown name is UNKNOWN_TOOL listing the ones there are. */
export function findTool(tools: ToolDefinition[], name: string): ToolDefinition {
  const tool = tools.find((t) => t.name === name);
  if (tool) return tool;
  throw new SandgateError("UNKNOWN_TOOL", `unknown tool ${JSON.stringify(name)}; the tools are ${tools.map((t) => t.name).join(", ")}`, {
    data: { tool: name },
  });
}

/** Validates and runs a tool; every failure is thrown as it came (REST maps them to statuses). */
export async function runTool(tools: ToolDefinition[], name: string, args: unknown, call: ToolCallContext = {}): Promise<ToolReply> {
  const tool = findTool(tools, name);
  return tool.run(parseToolArguments(tool, args), call);
}

/**
 * Calls a tool the MCP way. Throws SandgateError for a request that is itself wrong (unknown
 * tool, bad arguments); returns a result with isError for what failed while doing the work.
 */
export async function callTool(tools: ToolDefinition[], name: string, args: unknown, call: ToolCallContext = {}): Promise<CallToolResult> {
  try {
    const reply = await runTool(tools, name, args, call);
    if (reply.images) {
      // The images go once, as image content; structuredContent without them stays small.
      const { images: _sent, ...structured } = reply.structured;
      const content = [{ type: "text" as const, text: reply.text }, ...reply.images.map((image) => ({ type: "image" as const, ...image }))];
      return { content, structuredContent: structured, ...(reply.isError ? { isError: true } : {}) };
    }
    const resources = (reply.resources ?? []).map((resource) => ({ type: "resource" as const, resource }));
    return { content: [{ type: "text", text: reply.text }, ...resources], structuredContent: reply.structured, ...(reply.isError ? { isError: true } : {}) };
  } catch (error) {
    if (isSandgateError(error) && isToolResultCode(error.code)) {
      const retry = retryAfterOf(error);
      return { content: [{ type: "text", text: `${publicError(error).message} [${error.code}${retry === undefined ? "" : `, retry after ${retry} s`}]` }], isError: true };
    }
    throw error;
  }
}
