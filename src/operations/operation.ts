// An operation declared once: its id, the scope a caller needs, what it does (effects), one input
// and one output schema, a run function, and how it appears on each surface. The MCP tools, the
// REST routes and the OpenAPI document are derived from the declaration; every surface key is
// required, and a surface an operation does not appear on says so with null, so adding an
// operation without deciding its place on a surface does not compile.

import { z } from "zod";
import type { Scope } from "../config/index.js";
import { SandgateError } from "../errors/index.js";
import type { Approver } from "../execution/approval.js";
import type { OutputStream } from "../sandbox/index.js";

/**
 * What an operation does, in the terms clients and policies care about: MCP's tool hints
 * (read-only, destructive, open world) and the REST concurrency cap are derived from these.
 */
export type Effect = "read" | "write" | "delete" | "runs-code" | "network";

/** Who calls, and how to stop: what an operation's run gets besides its input. */
export interface OperationCall {
  /** The verified caller identity; sessions and files are looked up among its own. */
  owner: string;
  /** Aborted when the caller goes away. */
  signal?: AbortSignal;
  /** Receives output while code runs (MCP logging and progress, REST server-sent events). */
  onOutput?: (stream: OutputStream, text: string) => void;
  /** Asks the calling client when a run or one of its tool calls needs approval (MCP elicitation); absent: the approvals queue. */
  approver?: Approver;
  /** Receives "waiting for approval ..." while the call waits for a person. */
  onWaiting?: (message: string) => void;
}

/** What an MCP result carries besides its text, when the output alone does not say it. */
export interface McpExtras {
  /** Images sent as image content after the text (the structured result then leaves out its `images`). */
  images?: Array<{ mimeType: string; data: string }>;
  /** Embedded resources (a binary file's blob) sent after the text. */
  resources?: Array<{ uri: string; mimeType: string; blob: string }>;
  /** The result is a failure the model should notice (MCP's isError); the call itself worked. */
  isError?: boolean;
  /** The structured content MCP sends instead of the output (when content already carries part of it). */
  structured?: Record<string, unknown>;
}

export interface McpSurface<Host, I, O> {
  /** The tool's name (snake_case, as MCP clients show it). */
  tool: string;
  title: string;
  /** What the model reads to decide when to call it; a function of the host when it names the server's settings. */
  description: string | ((host: Host) => string);
  /**
   * Whether the codemode tool profile lists it too (server.toolProfile; the full profile lists every
   * tool): as it is (true), or in a shorter form, with its own description and input fields left out.
   */
  codemode?: true | { description?: string | ((host: Host) => string); omit?: readonly string[] };
  /** The outputSchema tools/list shows, when it is shorter than the output's (a part other tools' schemas give already). */
  outputSchema?: z.AnyZodObject;
  /**
   * The text content of a result, for clients that do not read structured content; `host` for advice
   * that depends on the server's settings. `output` is the very object run returned, so what MCP shows
   * and the output has no field for (a note for the agent, a read image's bytes) can be kept beside it
   * by run, e.g. in a WeakMap keyed by it.
   */
  text(output: O, input: I, host: Host): string;
  /** Images, resources or an error flag the result carries on MCP besides its text. */
  extras?(output: O, input: I, host: Host): McpExtras;
}

export interface RestSurface {
  method: "get" | "post" | "put" | "delete";
  /** A Hono path; each `:name` is the input field of that name, the rest of the input is the body (or the query of a GET). */
  path: string;
  /** The OpenAPI tag that groups it. */
  tag: string;
  status?: 200 | 201;
  /** The route's longer description; the MCP description when omitted, none when null. */
  description?: string | null;
  /** "tool": the body is parsed as the MCP tool parses its arguments, so both surfaces refuse the same input with the same error. */
  body?: "tool";
  /** Counted against the caller's concurrency cap like a run (work that costs like one); operations with the "runs-code" effect are. */
  countsAsRun?: boolean;
  /** Input fields this route does not take (optional ones, left to their defaults), e.g. a filter only MCP offers. */
  omits?: readonly string[];
}

/**
 * How sandboxed code calls it: a function in Python (a global, and in module `sandgate`), a global
 * in JavaScript and TypeScript, a flag of `sandgate-tool` in Bash. The runners' stubs are
 * generated from this (src/operations/sandbox-stubs.ts); each sends one generic call (op id, args)
 * that the host answers by running the operation for the caller whose code runs.
 */
export interface SandboxSurface {
  /** Its name in each language (free there: no keyword, no name of the runners'); Bash's is the flag without `--`. */
  names: { python: string; javascript: string; bash: string };
  /** Required input fields taken by position, in this order; the rest are keyword arguments, an options object, `--flags`. */
  positional?: readonly string[];
  /** The output field code gets (a list without its envelope); the whole output when absent. */
  returns?: string;
  /** One sentence for the stub's documentation: what code gets back. */
  doc: string;
}

export interface Surfaces<Host, I, O> {
  mcp: McpSurface<Host, I, O> | null;
  rest: RestSurface | null;
  sandbox: SandboxSurface | null;
}

export interface Operation<Host, I extends z.AnyZodObject, O extends z.AnyZodObject> {
  /** `feature.verb`, unique in the registry. */
  id: string;
  /** One line: what it does (the REST summary; the MCP title when the surface has none). */
  summary: string;
  scope: OperationScope;
  effects: readonly Effect[];
  /** Calling it twice with the same input leaves things as once (MCP's idempotentHint); false when omitted. */
  idempotent?: boolean;
  input: I;
  /**
   * Other names clients may give input fields (another system's word for one: {template: "language"}):
   * accepted wherever the arguments are parsed as a tool's, listed on no surface (they cost no tokens).
   */
  inputAliases?: Readonly<Record<string, string>>;
  output: O;
  /** Does the work; `input` was parsed with `input` at the edge, exactly once. */
  run(host: Host, input: z.infer<I>, call: OperationCall): Promise<z.input<O>>;
  surfaces: Surfaces<Host, z.infer<I>, z.infer<O>>;
}

/**
 * What a caller needs to call an operation: an API key scope (server.keyScopes); "any" for every
 * caller the API-key guard let in (any valid key); "public" for anyone, without a key, as a
 * load balancer's health probe (a read, served on REST as a GET with no path parameters).
 */
export type OperationScope = Scope | "any" | "public";

/** Any operation that runs on `Host` (or on less than it). */
export type AnyOperation<Host> = Operation<Host, z.AnyZodObject, z.AnyZodObject>;

/** Declares an operation; the types of `run` and of the surfaces' renderers follow from the schemas. */
export function defineOperation<Host, I extends z.AnyZodObject, O extends z.AnyZodObject>(operation: Operation<Host, I, O>): Operation<Host, I, O> {
  return operation;
}

/**
 * Runs an operation for a surface: `input` was parsed at the edge, and the answer is the very object
 * run returned (its fields in the order it wrote them) once it fits the output schema; outside it is a
 * bug, thrown. Surfaces rely on that identity: what run keeps beside its output for MCP alone (an
 * image's bytes, a note) is found by the object itself.
 */
export async function runOperation<Host, I extends z.AnyZodObject, O extends z.AnyZodObject>(
  operation: Operation<Host, I, O>,
  host: Host,
  input: z.infer<I>,
  call: OperationCall,
): Promise<z.infer<O>> {
  const returned = await operation.run(host, input, call);
  const checked = operation.output.safeParse(returned);
  if (!checked.success) throw new Error(`operation ${operation.id} answered outside its output schema: ${checked.error.message}`);
  return returned;
}

/**
 * `args` with each alias renamed to its field. An alias beside its field is refused unless both say
 * the same, so neither is silently dropped; anything but an object is left for the schema to refuse.
 */
export function withAliasesResolved(args: unknown, aliases: Readonly<Record<string, string>> | undefined): unknown {
  if (!aliases || typeof args !== "object" || args === null || Array.isArray(args)) return args;
  const given = args as Record<string, unknown>;
  if (!Object.keys(aliases).some((alias) => Object.hasOwn(given, alias))) return args;
  const resolved: Record<string, unknown> = { ...given };
  for (const [alias, field] of Object.entries(aliases)) {
    if (!Object.hasOwn(given, alias)) continue;
    if (Object.hasOwn(given, field) && given[field] !== given[alias]) {
      throw new SandgateError("INVALID_INPUT", `${alias} is another name for ${field}; give one of them, not both with different values`, { data: { field: alias } });
    }
    resolved[field] = given[alias];
    delete resolved[alias];
  }
  return resolved;
}

/** A description as the model or the reader sees it: given, or made from the host's settings. */
export function descriptionFor<Host>(description: string | ((host: Host) => string), host: Host): string {
  return typeof description === "string" ? description : description(host);
}

/**
 * The input schema less `fields`, for a surface that does not take them. Each must be an optional
 * input field without a default, so that run sees it absent just as the full schema would leave it;
 * anything else is a declaration error, thrown when the surfaces are built.
 */
export function inputWithout<Host>(operation: AnyOperation<Host>, fields: readonly string[], surface: string): z.AnyZodObject {
  if (fields.length === 0) return operation.input;
  const shape = operation.input.shape as Record<string, z.ZodTypeAny>;
  for (const field of fields) {
    const schema = shape[field];
    if (!schema || !schema.isOptional() || hasDefault(schema)) {
      throw new Error(`operation ${operation.id}: ${surface} leaves out ${field}, which is not an optional input field without a default`);
    }
  }
  return operation.input.omit(Object.fromEntries(fields.map((field) => [field, true as const])));
}

/** Whether the field's schema fills in a value when it is absent (a default, under any optional or nullable). */
function hasDefault(schema: z.ZodTypeAny): boolean {
  if (schema instanceof z.ZodDefault) return true;
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return hasDefault(schema.unwrap() as z.ZodTypeAny);
  return false;
}
