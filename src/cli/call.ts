// `sandgate call`: any declared operation from a terminal, its flags derived from the operation's
// input schema. In this process (on an app built as `sandgate exec` builds one: nothing lasts past
// the command) or, with --url, on a running server: through the operation's REST route when it has
// one, else its MCP tool at /mcp/execute. The answer is the operation's output as JSON.

import { z } from "zod";
import type { SandgateConfig } from "../config/index.js";
import { publicError, SandgateError } from "../errors/index.js";
import { LOCAL_OWNER } from "../execution/index.js";
import { runOperation, type AnyOperation } from "../operations/index.js";
import { operations } from "../server/operations.js";
import { parseOperationArguments } from "../server/tools.js";
import type { CliIo } from "./io.js";
import { terminalApp } from "./terminal-app.js";

/** How a flag's text becomes the field's value. */
type FlagKind = "string" | "number" | "boolean" | "list" | "json";

interface Flag {
  field: string;
  /** The field's name with dashes for underscores: --session-id for session_id (the field's own name works too). */
  flag: string;
  kind: FlagKind;
  required: boolean;
  description: string;
}

/** The schema under optional, default, nullable and refinements. */
function inner(schema: z.ZodTypeAny): z.ZodTypeAny {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return inner(schema.unwrap() as z.ZodTypeAny);
  if (schema instanceof z.ZodDefault) return inner(schema.removeDefault() as z.ZodTypeAny);
  if (schema instanceof z.ZodEffects) return inner(schema.innerType() as z.ZodTypeAny);
  return schema;
}

/** The values an enum field takes, for its help: "" when it is no enum or has too many to list. */
function choicesOf(schema: z.ZodTypeAny): string {
  const base = inner(schema);
  const values = base instanceof z.ZodEnum ? (base.options as string[]) : [];
  return values.length > 0 && values.length <= 16 ? `one of ${values.join(", ")}` : "";
}

function kindOf(schema: z.ZodTypeAny): FlagKind {
  const base = inner(schema);
  if (base instanceof z.ZodString || base instanceof z.ZodEnum || (base instanceof z.ZodLiteral && typeof base.value === "string")) return "string";
  if (base instanceof z.ZodNumber) return "number";
  if (base instanceof z.ZodBoolean) return "boolean";
  if (base instanceof z.ZodArray && kindOf(base.element as z.ZodTypeAny) === "string") return "list";
  return "json";
}

/** The flags of an operation, one per input field, in the schema's order. */
export function flagsOf(operation: AnyOperation<unknown>): Flag[] {
  return Object.entries(operation.input.shape as Record<string, z.ZodTypeAny>).map(([field, schema]) => ({
    field,
    flag: field.replace(/_/g, "-"),
    kind: kindOf(schema),
    required: !schema.isOptional(),
    description: [schema.description ?? "", choicesOf(schema)].filter(Boolean).join("; "),
  }));
}

const VALUE_NAMES: Record<FlagKind, string> = { string: "TEXT", number: "N", boolean: "", list: "TEXT (repeatable)", json: "JSON" };

/** The list of operations, for `sandgate call` alone. */
function operationList(): string {
  const rows = operations.list().map((op) => [op.id, op.scope, op.summary] as const);
  const width = Math.max(...rows.map(([id]) => id.length));
  const scopeWidth = Math.max(...rows.map(([, scope]) => scope.length));
  return [
    "Usage: sandgate call OPERATION [--FIELD VALUE]... [--input JSON] [--url URL [--key KEY]]",
    "",
    "Operations (the scope an API key needs with --url; `sandgate call OPERATION --help` for its fields):",
    ...rows.map(([id, scope, summary]) => `  ${id.padEnd(width)}  ${scope.padEnd(scopeWidth)}  ${summary}`),
    "",
    "Without --url the operation runs in this process, on a sandgate of its own: sessions, jobs and files",
    "last only as long as the command. With --url it runs on that server (key: --key or SANDGATE_API_KEY).",
    "",
  ].join("\n");
}

/** One operation's fields as flags, for `sandgate call OPERATION --help`. */
function operationHelp(operation: AnyOperation<unknown>): string {
  const flags = flagsOf(operation);
  const positional = flags.filter((f) => f.required).map((f) => f.flag.toUpperCase());
  const lines = flags.map((f) => {
    const left = `  --${f.flag}${VALUE_NAMES[f.kind] ? ` ${VALUE_NAMES[f.kind]}` : ""}`;
    return `${left.padEnd(34)} ${f.required ? "(required) " : ""}${f.description}`.trimEnd();
  });
  return [
    `Usage: sandgate call ${operation.id}${positional.map((p) => ` ${p}`).join("")} [--FIELD VALUE]... [--input JSON] [--url URL]`,
    "",
    operation.summary,
    "",
    ...(flags.length > 0 ? ["Fields (required ones may also be given in this order, without their flag):", ...lines] : ["It takes no fields."]),
    "",
    `Scope: ${operation.scope}. Output: the operation's result as JSON.`,
    "",
  ].join("\n");
}

/** The operation named `name`: its id (or its MCP tool's name); INVALID_INPUT naming the ids otherwise. */
function findOperation(name: string): AnyOperation<unknown> {
  const found = operations.get(name) ?? operations.list().find((op) => op.surfaces.mcp?.tool === name);
  if (found) return found as AnyOperation<unknown>;
  throw new SandgateError("INVALID_INPUT", `no operation ${JSON.stringify(name)}; run \`sandgate call\` for the list`);
}

function valueOf(flag: Flag, text: string): unknown {
  switch (flag.kind) {
    case "string":
    case "list":
      return text;
    case "number": {
      const n = Number(text);
      if (text.trim() === "" || !Number.isFinite(n)) throw new SandgateError("INVALID_INPUT", `--${flag.flag} takes a number, not ${JSON.stringify(text)}`, { data: { field: flag.field } });
      return n;
    }
    case "boolean":
      if (text === "true" || text === "false") return text === "true";
      throw new SandgateError("INVALID_INPUT", `--${flag.flag} is true or false, not ${JSON.stringify(text)}`, { data: { field: flag.field } });
    case "json":
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new SandgateError("INVALID_INPUT", `--${flag.flag} takes JSON, e.g. ${flag.field === "env" ? '\'{"NAME":"value"}\'' : "'{...}'"}; ${JSON.stringify(text.slice(0, 60))} is not`, { data: { field: flag.field } });
      }
  }
}

export interface CallArgs {
  /** The operation's input, from --input and the flags (the flags win), not yet checked by its schema. */
  input: Record<string, unknown>;
  url?: string;
  key?: string;
  help: boolean;
}

/** Reads the flags of `operation` from argv (after the operation's name); `stdin` is read for `--input -`. */
export async function parseCallArgs(operation: AnyOperation<unknown>, argv: readonly string[], stdin: () => Promise<string>): Promise<CallArgs> {
  const flags = flagsOf(operation);
  const byName = new Map<string, Flag>();
  for (const flag of flags) byName.set(flag.flag, flag).set(flag.field, flag);
  const given: Record<string, unknown> = {};
  const positionals: string[] = [];
  let base: Record<string, unknown> = {};
  let url: string | undefined;
  let key: string | undefined;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--") || arg === "-") {
      if (arg === "-h") help = true;
      else positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    const next = (): string => {
      if (inline !== undefined) return inline;
      const value = argv[++i];
      if (value === undefined) throw new SandgateError("INVALID_INPUT", `--${name} needs a value`);
      return value;
    };
    if (name === "help") {
      help = true;
      continue;
    }
    if (name === "url") url = next();
    else if (name === "key") key = next();
    else if (name === "input") {
      const text = next();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text === "-" ? await stdin() : text) as unknown;
      } catch {
        throw new SandgateError("INVALID_INPUT", "--input takes the operation's input as a JSON object (or - to read it from standard input)");
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new SandgateError("INVALID_INPUT", "--input takes a JSON object");
      base = parsed as Record<string, unknown>;
    } else {
      const flag = byName.get(name);
      if (!flag) {
        const known = flags.map((f) => `--${f.flag}`);
        throw new SandgateError("INVALID_INPUT", `${operation.id} has no field ${JSON.stringify(name)}; ${known.length > 0 ? `its fields: ${known.join(", ")}` : "it takes none"}`, { data: { field: name } });
      }
      if (flag.kind === "boolean" && inline === undefined) {
        // `--background false` says false; a bare `--background` says true.
        const following = argv[i + 1];
        if (following === "true" || following === "false") given[flag.field] = argv[++i] === "true";
        else given[flag.field] = true;
      }
      else if (flag.kind === "list") given[flag.field] = [...((given[flag.field] as string[] | undefined) ?? []), next()];
      else given[flag.field] = valueOf(flag, next());
    }
  }
  // Required fields not given by flag, in the schema's order, from the positionals.
  const open = flags.filter((f) => f.required && !(f.field in given) && !(f.field in base));
  if (positionals.length > open.length) {
    throw new SandgateError("INVALID_INPUT", `${operation.id} takes ${open.length === 0 ? "no more values without a flag" : `${open.map((f) => f.flag.toUpperCase()).join(" ")} without flags`}; ${JSON.stringify(positionals[open.length])} is one too many`);
  }
  positionals.forEach((text, index) => {
    const flag = open[index];
    if (flag) given[flag.field] = flag.kind === "list" ? [text] : valueOf(flag, text);
  });
  return { input: { ...base, ...given }, ...(url !== undefined ? { url } : {}), ...(key !== undefined ? { key } : {}), help };
}

/** The operation run in this process, as `sandgate exec` runs code: no warm pool, nobody to approve, no audit log. */
async function callHere(operation: AnyOperation<unknown>, input: Record<string, unknown>, config: SandgateConfig, io: CliIo, version: string): Promise<unknown> {
  const app = terminalApp(config, io, "nobody can approve at a terminal (sandgate call); call it on a server with --url", version);
  const withdraw = io.onInterrupt?.(() => app.close());
  try {
    await app.start();
    return await runOperation(operation, app, input, { owner: LOCAL_OWNER });
  } catch (error) {
    throw publicError(error, app.log);
  } finally {
    withdraw?.();
    await app.close();
  }
}

/** --url as a base URL: http or https, else INVALID_INPUT. */
function serverUrl(url: string): URL {
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw new SandgateError("INVALID_INPUT", `--url ${JSON.stringify(url)} is not a URL; e.g. http://127.0.0.1:8080`);
  }
  if (base.protocol !== "http:" && base.protocol !== "https:") throw new SandgateError("INVALID_INPUT", `--url must be http or https, not ${base.protocol}`);
  return base;
}

/** Text a server chose, fit for one line of a terminal: no control characters (escape sequences), at most 1,000 characters. */
function printable(text: unknown, fallback: string): string {
  if (typeof text !== "string" || text === "") return fallback;
  // eslint-disable-next-line no-control-regex
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g, " ").trim();
  return line.length > 1000 ? `${line.slice(0, 999)}…` : line;
}

/** A server's answer when it refused or made no sense: one line on stderr with its code. */
class RemoteFailure extends Error {
  readonly code: string;
  constructor(message: unknown, code: unknown) {
    super(printable(message, "the server gave no reason"));
    this.code = printable(code, "REMOTE_ERROR").replace(/[^A-Za-z0-9_]/g, "_").slice(0, 64);
  }
}

/** The most of a server's answer read: more is a server (or something at its address) gone wrong, not an output to print. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

async function readJson(response: Response): Promise<unknown> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  for (;;) {
    const next = reader ? await reader.read() : { done: true as const, value: undefined };
    if (next.done) break;
    const chunk = next.value as Uint8Array;
    size += chunk.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader?.cancel();
      throw new RemoteFailure(`the server's answer passed ${MAX_ANSWER_BYTES / 1024 / 1024} MB; stopped reading it`, "BAD_RESPONSE");
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RemoteFailure(`the server answered ${response.status} with something that is not JSON: ${JSON.stringify(text.slice(0, 200))}`, "BAD_RESPONSE");
  }
}

/**
 * What a tools/call at /mcp/execute answered: the structured result (also of a tool whose work failed,
 * as a run that failed is a result, the same as without --url), a JSON-RPC error or a tool's refusal as
 * a failure, and anything else as a server that makes no sense.
 */
function mcpAnswer(body: unknown, status: number): unknown {
  const answer = typeof body === "object" && body !== null ? (body as { result?: unknown; error?: unknown }) : {};
  if (typeof answer.error === "object" && answer.error !== null) {
    const error = answer.error as { message?: unknown; data?: { code?: unknown } };
    throw new RemoteFailure(error.message, error.data?.code ?? "JSON_RPC_ERROR");
  }
  const result = answer.result;
  if (status < 200 || status > 299 || typeof result !== "object" || result === null || Array.isArray(result)) {
    throw new RemoteFailure(`the server answered ${status} without a tool result`, "BAD_RESPONSE");
  }
  const { structuredContent, isError, content } = result as { structuredContent?: unknown; isError?: unknown; content?: unknown };
  if (structuredContent !== undefined) return structuredContent;
  const texts = Array.isArray(content) ? content.map((block) => (typeof block === "object" && block !== null ? (block as { text?: unknown }).text : undefined)).filter((t) => typeof t === "string") : [];
  if (isError === true) throw new RemoteFailure(texts.join(" ") || "the tool failed", "TOOL_ERROR");
  return result;
}

/** The operation on the server at `url`: its REST route when declared, else its MCP tool at /mcp/execute. */
async function callThere(operation: AnyOperation<unknown>, input: Record<string, unknown>, base: URL, key: string | undefined): Promise<unknown> {
  const headers: Record<string, string> = { accept: "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) };
  const at = (path: string): URL => new URL(path.replace(/^\//, ""), base.href.endsWith("/") ? base.href : `${base.href}/`);
  const { rest, mcp } = operation.surfaces;
  // A field the route does not take (an MCP-only filter) goes through the operation's MCP tool, which takes every field.
  const restTakes = rest !== null && !(mcp !== null && (rest.omits ?? []).some((field) => Object.hasOwn(input, field)));
  let response: Response;
  try {
    if (rest && restTakes) {
      const remaining = { ...input };
      const path = rest.path.replace(/:([A-Za-z_]+)/g, (_m, field: string) => {
        const value = remaining[field];
        delete remaining[field];
        if (value === undefined) throw new SandgateError("INVALID_INPUT", `${operation.id} needs --${field.replace(/_/g, "-")}`, { data: { field } });
        const text = typeof value === "string" ? value : JSON.stringify(value);
        // A URL resolves "." and ".." segments (encoded too) away, so they would name another route.
        if (text === "." || text === "..") throw new SandgateError("INVALID_INPUT", `--${field.replace(/_/g, "-")} ${text} cannot travel in a URL path`, { data: { field } });
        return encodeURIComponent(text);
      });
      const target = at(path);
      if (rest.method === "get") {
        for (const [name, value] of Object.entries(remaining)) target.searchParams.set(name, typeof value === "string" ? value : JSON.stringify(value));
        response = await fetch(target, { method: "GET", headers, redirect: "error" });
      } else {
        const hasBody = Object.keys(remaining).length > 0 || rest.method === "post" || rest.method === "put";
        response = await fetch(target, {
          method: rest.method.toUpperCase(),
          headers: { ...headers, ...(hasBody ? { "content-type": "application/json" } : {}) },
          redirect: "error",
          ...(hasBody ? { body: JSON.stringify(remaining) } : {}),
        });
      }
      const body = await readJson(response);
      if (!response.ok) {
        const error = typeof body === "object" && body !== null ? (body as { error?: { code?: unknown; message?: unknown } }).error : undefined;
        throw new RemoteFailure(error?.message ?? `the server answered ${response.status}`, error?.code ?? `HTTP_${response.status}`);
      }
      return body;
    }
    if (mcp) {
      response = await fetch(at("mcp/execute"), {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        redirect: "error",
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: mcp.tool, arguments: input } }),
      });
      return mcpAnswer(await readJson(response), response.status);
    }
  } catch (error) {
    if (error instanceof RemoteFailure || error instanceof SandgateError) throw error;
    throw new RemoteFailure(`could not reach ${base.origin}: ${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}`, "UNREACHABLE");
  }
  throw new Error(`operation ${operation.id} has no surface to call on a server`);
}

/**
 * `sandgate call [OPERATION [flags]]`: 0 with the output as JSON on stdout; 1 when the operation (or
 * the server) refused or failed, with one line on stderr; bad flags are thrown (exit 2).
 */
export async function runCall(argv: readonly string[], config: () => SandgateConfig, io: CliIo, version: string): Promise<number> {
  // --url and --key may come before the operation's name too: they are moved after it.
  const leading: string[] = [];
  let at = 0;
  for (; at < argv.length; at++) {
    const arg = argv[at] ?? "";
    if (/^--(url|key)=/.test(arg)) leading.push(arg);
    else if (arg === "--url" || arg === "--key") {
      const value = argv[++at];
      if (value === undefined) throw new SandgateError("INVALID_INPUT", `${arg} needs a value`);
      leading.push(arg, value);
    } else break;
  }
  const name = argv[at];
  const rest = [...leading, ...argv.slice(at + 1)];
  if (name === undefined || name === "--help" || name === "-h") {
    io.stdout.write(operationList());
    return name === undefined ? 2 : 0;
  }
  const operation = findOperation(name);
  const stdin = async (): Promise<string> => {
    let text = "";
    for await (const chunk of io.stdin) text += typeof chunk === "string" ? chunk : chunk.toString("utf8");
    return text;
  };
  const args = await parseCallArgs(operation, rest, stdin);
  if (args.help) {
    io.stdout.write(operationHelp(operation));
    return 0;
  }
  // Checked here, with the operation's own schema (as its MCP tool parses its arguments): bad input
  // never starts a sandgate nor reaches a server. A server gets the input as given and parses it itself.
  const input = parseOperationArguments(operation, operation.id, args.input);
  const server = args.url === undefined ? undefined : serverUrl(args.url);
  if (server && !operation.surfaces.rest && !operation.surfaces.mcp) {
    throw new SandgateError("INVALID_INPUT", `${operation.id} has neither a REST route nor an MCP tool of its own to call on a server; run it without --url`);
  }
  try {
    const output = server === undefined ? await callHere(operation, input, config(), io, version) : await callThere(operation, args.input, server, args.key ?? io.env.SANDGATE_API_KEY);
    let text: string;
    try {
      text = JSON.stringify(output, null, 2);
    } catch (error) {
      // A server's answer nested deeper than the stack: refused, not a crash of the command.
      if (error instanceof RangeError) throw new RemoteFailure("the answer is nested too deeply to print", "BAD_RESPONSE");
      throw error;
    }
    io.stdout.write(`${text}\n`);
    return 0;
  } catch (error) {
    // Input this command refused (here, or the operation run here) exits 2, as bad flags do.
    if (error instanceof SandgateError && error.code === "INVALID_INPUT") throw error;
    if (error instanceof RemoteFailure || error instanceof SandgateError) {
      io.stderr.write(`sandgate: ${error.message} [${error.code}]\n`);
      return 1;
    }
    throw error;
  }
}
