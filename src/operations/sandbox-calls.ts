// Sandgate's operations as sandboxed code calls them (the runners' generated stubs): which may be
// called, each call parsed with the operation's input, run for the code's caller, refusals worded from the schema.

import { z } from "zod";
import { httpStatusOf, publicError, type ErrorLog } from "../errors/index.js";
import type { OperationHandler, UpstreamCallReply } from "../sandbox/index.js";
import { OPERATION_ID } from "../sandbox/index.js";
import { runOperation, type AnyOperation, type SandboxSurface } from "./operation.js";

/** An operation code may call, with its sandbox surface. */
export type SandboxOperation<Host> = AnyOperation<Host> & { surfaces: { sandbox: SandboxSurface } };

const PYTHON_KEYWORDS = ["False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else"];
const PYTHON_MORE = ["except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield"];
const JS_RESERVED = ["await", "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do", "else", "enum", "export", "extends", "false"];
const JS_MORE = ["finally", "for", "function", "if", "implements", "import", "in", "instanceof", "interface", "let", "new", "null", "package", "private", "protected", "public"];
const JS_REST = ["return", "static", "super", "switch", "this", "throw", "true", "try", "typeof", "var", "void", "while", "with", "yield", "arguments", "eval", "undefined"];
/** Names that are not free, per language: its keywords, and the names the runners give code beside the generated ones. */
const TAKEN_NAMES = {
  python: new Set([...PYTHON_KEYWORDS, ...PYTHON_MORE, "call_mcp_tool", "callMCPTool", "ToolError", "show", "return_image", "return_content", "display"]),
  javascript: new Set([...JS_RESERVED, ...JS_MORE, ...JS_REST, "callMCPTool", "ToolError", "servers", "require", "sandgate", "returnImage", "returnContent"]),
  bash: new Set(["return", "help", "h"]),
};
/** Input fields become parameters in both languages, beside the stubs' own `options` and `call`. */
const TAKEN_FIELDS = new Set([...TAKEN_NAMES.python, ...TAKEN_NAMES.javascript, "options", "call"]);
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const BASH_FLAG = /^[a-z][a-z0-9-]{0,31}$/;

/**
 * The operations code may call, in declaration order, checked: each needs only the `execute` scope
 * and runs no code (code gets nothing its caller could not do, and cannot start runs outside the
 * caller's concurrency cap and approvals); its id, names and fields are ones every runner can
 * carry; positional fields are required ones; a name is unique per language. A breach is a declaration error.
 */
export function sandboxOperations<Host>(operations: readonly AnyOperation<Host>[]): SandboxOperation<Host>[] {
  const chosen = operations.filter((operation): operation is SandboxOperation<Host> => operation.surfaces.sandbox !== null);
  const taken = { python: new Map<string, string>(), javascript: new Map<string, string>(), bash: new Map<string, string>() };
  for (const operation of chosen) {
    const surface = operation.surfaces.sandbox;
    const fail = (why: string): never => {
      throw new Error(`operation ${operation.id}: its sandbox surface ${why}`);
    };
    if (!OPERATION_ID.test(operation.id)) fail("needs an id of the form feature.verb (lowercase letters, digits, _ and -)");
    if (operation.scope !== "execute") fail(`needs the execute scope (code would get what its caller's key may not do), not ${operation.scope}`);
    if (operation.effects.includes("runs-code")) fail("cannot be on an operation that runs code (it would start runs outside the caller's cap and approvals)");
    const shape = operation.input.shape as Record<string, z.ZodTypeAny>;
    for (const field of Object.keys(shape)) if (!/^[a-z][a-z0-9_]{0,63}$/.test(field) || TAKEN_FIELDS.has(field)) fail(`cannot carry input field ${field}: not a parameter name in every language`);
    for (const field of surface.positional ?? []) {
      const schema = shape[field];
      if (schema === undefined) fail(`takes ${field} by position, which is not an input field`);
      else if (schema.isOptional()) fail(`takes ${field} by position, which is optional (positional fields are required ones)`);
    }
    if (surface.returns !== undefined && !(surface.returns in (operation.output.shape as object))) fail(`returns ${surface.returns}, which is not an output field`);
    for (const language of ["python", "javascript", "bash"] as const) {
      const name = surface.names[language];
      const valid = language === "bash" ? BASH_FLAG.test(name) && name !== "return" : IDENTIFIER.test(name);
      if (!valid || TAKEN_NAMES[language].has(name)) fail(`names it ${JSON.stringify(name)} in ${language}, which is not a free name there`);
      const other = taken[language].get(name);
      if (other !== undefined) fail(`names it ${name} in ${language}, as operation ${other} is named`);
      taken[language].set(name, operation.id);
    }
  }
  return chosen;
}

/** What one execution's calls need: who runs the code, how many calls it may make, where failures are logged. */
export interface SandboxCallScope {
  owner: string;
  /** Calls of operations one execution may make, a count of its own (not its upstream tool calls). */
  maxCalls: number;
  /** Where an unexpected failure is logged; code gets only its public form, as MCP and REST clients do. */
  log?: ErrorLog;
}

/**
 * Answers one execution's calls: the operation by id among `operations`, its arguments parsed with
 * its input, run on `host()` for the scope's owner; a refusal, a failure and a call over the count
 * come back as error replies of the kind code sees (ToolError's `kind`), never as a thrown error.
 */
export function sandboxCallHandler<Host>(operations: readonly SandboxOperation<Host>[], host: () => Host, scope: SandboxCallScope): OperationHandler {
  // Made for every execution, most of which call none: nothing is built until a call comes.
  let made = 0;
  return async ({ op, args }, signal) => {
    // Counted first: refused calls cost the host too.
    if (++made > scope.maxCalls) {
      const all = operations.map((o) => o.surfaces.sandbox.names.python).join(", ");
      return failure("ToolLimit", `this execution reached its limit of ${scope.maxCalls} calls of sandgate's own functions (${all})`);
    }
    const operation = operations.find((o) => o.id === op);
    if (!operation) {
      const known = operations.map((o) => o.id).join(", ") || "none";
      return failure("InvalidArguments", `no operation ${op} can be called from code (operations: ${known})`);
    }
    const parsed = operation.input.safeParse(args);
    if (!parsed.success) return failure("InvalidArguments", refusal(operation, parsed.error));
    try {
      const output = (await runOperation(operation, host(), parsed.data, { owner: scope.owner, signal })) as Record<string, unknown>;
      const { returns } = operation.surfaces.sandbox;
      return { ok: true, value: returns === undefined ? output : output[returns] };
    } catch (error) {
      // A bug's text (host paths, internals) is logged, not sent; a SandgateError's is scrubbed of host paths.
      const shown = publicError(error, scope.log);
      return failure(kindOf(httpStatusOf(shown.code)), shown.message);
    }
  };
}

function failure(type: string, message: string): UpstreamCallReply {
  return { ok: false, error: { type, message } };
}

/** The kind code sees for a SandgateError, by the HTTP status the error table gives its code. */
function kindOf(status: number): string {
  if (status === 400 || status === 413) return "InvalidArguments";
  if (status === 403) return "ToolDenied";
  if (status === 404) return "ToolNotFound";
  if (status === 408 || status === 504) return "ToolTimeout";
  if (status === 429) return "ToolLimit";
  if (status === 503) return "ToolUnavailable";
  return "ToolError";
}

/** Why arguments were refused, in words a programmer acts on: the field and what it takes, from the schema. */
function refusal<Host>(operation: AnyOperation<Host>, error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "invalid arguments";
  const shape = operation.input.shape as Record<string, z.ZodTypeAny>;
  if (issue.path.length === 0) {
    if (issue.code === "unrecognized_keys") {
      const options = Object.keys(shape);
      // Code may send a million keys: the message names a few.
      const more = issue.keys.length > 5 ? ` and ${issue.keys.length - 5} more` : "";
      const unknown = `${issue.keys.slice(0, 5).map((k) => `\`${k.slice(0, 64)}\``).join(", ")}${more}`;
      return options.length === 0 ? `it takes no options (got ${unknown})` : `unknown option ${unknown} (options: ${options.join(", ")})`;
    }
    return "the options must be a JSON object";
  }
  const field = String(issue.path[0]);
  const schema = shape[field];
  const wanted = schema === undefined ? undefined : takes(schema);
  // A message the declaration wrote itself says more than a description of the type.
  if (issue.code === "custom" || (issue.code !== "invalid_type" && !isDefaultMessage(issue.message))) return issue.message;
  if (issue.path.length === 1 && wanted !== undefined) return `${field} must be ${wanted}`;
  return `${issue.path.join(".")}: ${issue.message}`;
}

/** zod's own words for a failed check start with the value's type; a declaration's own do not. */
function isDefaultMessage(message: string): boolean {
  return /^(Number|String|Array|Invalid|Expected|Required|Unrecognized|Too)\b/.test(message);
}

/** What a field takes, for a refusal: "a whole number from 1 to 50", "\"a\", \"b\" or \"c\"", "a string". */
function takes(schema: z.ZodTypeAny): string | undefined {
  const inner = unwrapField(schema);
  if (inner instanceof z.ZodEnum) return listed((inner.options as string[]).map((o) => JSON.stringify(o)));
  if (inner instanceof z.ZodNumber) {
    const whole = inner.isInt ? "a whole number" : "a number";
    const { minValue: min, maxValue: max } = inner;
    if (min !== null && max !== null) return `${whole} from ${min} to ${max}`;
    if (min !== null) return `${whole} of at least ${min}`;
    if (max !== null) return `${whole} of at most ${max}`;
    return whole;
  }
  if (inner instanceof z.ZodString) return `a string${span(inner.minLength, inner.maxLength, "characters")}`;
  if (inner instanceof z.ZodBoolean) return "true or false";
  if (inner instanceof z.ZodArray) {
    const def = inner._def as { minLength: { value: number } | null; maxLength: { value: number } | null };
    return `a list${span(def.minLength?.value ?? null, def.maxLength?.value ?? null, "items")}`;
  }
  if (inner instanceof z.ZodObject || inner instanceof z.ZodRecord) return "an object";
  return undefined;
}

/** The type under a field's optional, nullable, default and refinements. */
export function unwrapField(schema: z.ZodTypeAny): z.ZodTypeAny {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) return unwrapField(schema.unwrap() as z.ZodTypeAny);
  if (schema instanceof z.ZodDefault) return unwrapField(schema.removeDefault() as z.ZodTypeAny);
  if (schema instanceof z.ZodEffects) return unwrapField(schema.innerType() as z.ZodTypeAny);
  return schema;
}

/** " of 1 to 64 characters", " of at most 10 items", or nothing without bounds. */
function span(min: number | null, max: number | null, unit: string): string {
  if (min !== null && min > 0 && max !== null) return ` of ${min} to ${max} ${unit}`;
  if (max !== null) return ` of at most ${max} ${unit}`;
  // At least one character or item: the type says enough (an empty value's own message is the declaration's).
  if (min !== null && min > 1) return ` of at least ${min} ${unit}`;
  return "";
}

function listed(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

