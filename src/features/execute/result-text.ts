// The text an agent reads for an execution result: the output first, then what went wrong
// and what to try next. The structured result carries the same facts for programs.

import type { SandgateConfig } from "../../config/index.js";
import { effectiveFlavors } from "../../sandbox/index.js";
import { securityLine } from "../governance/index.js";
import type { WireExecutionResult } from "./result-wire.js";

/**
 * What to do about how the run ended, in a sentence; empty when there is nothing to add to the
 * status line (a success, a non-zero exit whose stderr is shown, an error its traceback names).
 */
export function describeResult(result: WireExecutionResult, config: SandgateConfig): string {
  switch (result.status) {
    case "ok":
      return "";
    case "error": {
      const error = result.error;
      if (error?.type === "WorkspaceLimit") return `The run finished but ${error.message}.`;
      if (error === undefined || error.type === "ExitStatus") return "";
      // The traceback shown above ends with the exception and its message already.
      return error.traceback.includes(error.message) ? "Fix the error and run it again." : `${error.type}: ${error.message}. Fix the error and run it again.`;
    }
    case "timeout":
      return (
        `Stopped for running too long${stateNote(result)}. Make it faster, work on less data, or pass a larger timeout (at most ${config.limits.maxExecutionTimeS} s` +
        `${config.server.toolProfile === "full" ? "; or background: true, then get_job" : ""}).`
      );
    case "memory_limit":
      return memoryHint(result, config);
    case "output_limit":
      return `Stopped for printing more than ${config.limits.outputCapBytes} bytes: write large results to a file in /workspace and print a summary.`;
    case "killed":
      return `Cancelled before it finished${stateNote(result)}.`;
    case "running":
      return `Started as background job ${result.job_id ?? "?"}; read its output and result with get_job, stop it with stop_job.`;
  }
}

/**
 * Out of memory: a larger flavor only when this server has one above what the run had (an agent told
 * to use a flavor that is capped to the same size goes round in a loop), else smaller pieces.
 */
function memoryHint(result: WireExecutionResult, config: SandgateConfig): string {
  const flavors = effectiveFlavors(config);
  const stated = /memory limit of (\d+) MB/.exec(result.error?.message ?? "")?.[1];
  const hadMb = stated !== undefined ? Number(stated) : (flavors.find((f) => f.name === config.defaultFlavor)?.memoryMb ?? config.limits.maxMemoryMb);
  const larger = flavors.filter((f) => f.memoryMb > hadMb);
  const smaller = "process the data in smaller pieces (read it in chunks, load only the columns you need, use smaller dtypes)";
  if (larger.length === 0) return `Out of memory at ${hadMb} MB, the most this server gives a sandbox: ${smaller}.`;
  const options = larger.map((f) => `"${f.name}" (${f.memoryMb} MB)`).join(" or ");
  // A session's sandbox keeps the memory it started with; a larger flavor needs a new session.
  const where = result.session_id === null ? "" : " in a new session (a session keeps the memory its sandbox started with)";
  return `Out of memory at ${hadMb} MB: ${smaller}, or run it with flavor ${options}${where}.`;
}

/** For a stopped run: whether the session's interpreter kept its state (interrupted) or lost it (killed). */
function stateNote(result: WireExecutionResult): string {
  if (result.state_reset) return "; the interpreter was killed, so the session's variables and imports are gone (files remain)";
  if (result.error?.message.includes("interrupted")) return "; it was interrupted and the session's variables and imports are kept";
  return "";
}

/** The status line: how the run ended, its exit status when that says more, and how long it took. */
function statusLine(result: WireExecutionResult, summary: string): string {
  const exit = result.exit_code === null || (result.status === "ok" && result.exit_code === 0) ? "" : `, exit ${result.exit_code}`;
  const took = result.status === "running" ? "" : `, ${Math.round(result.duration_ms)} ms`;
  return `[${result.status}${exit}${took}]${summary ? ` ${summary}` : ""}`;
}

/** The result as text, one section per line group, nothing for empty fields; the status line last. */
export function renderResultText(result: WireExecutionResult, summary: string, note?: string): string {
  const parts: string[] = [];
  if (note) parts.push(`Note: ${note}.`);
  if (result.stdout) parts.push(result.stdout.endsWith("\n") ? result.stdout.slice(0, -1) : result.stdout);
  if (result.stderr) parts.push(`[stderr]\n${result.stderr.endsWith("\n") ? result.stderr.slice(0, -1) : result.stderr}`);
  if (result.value !== undefined) parts.push(valueText(result));
  // A timeout or cancel that interrupted the code has a traceback too: where the code was.
  if (result.error?.traceback && (result.status === "error" || result.status === "timeout" || result.status === "killed")) parts.push(`[traceback]\n${result.error.traceback.trimEnd()}`);
  if (result.output_note) parts.push(`[${result.output_note}]`);
  else if (result.full_output) parts.push(`[output cut; full text in ${Object.values(result.full_output).join(" and ")}]`);
  if (result.images?.length) parts.push(`[images] ${result.images.map((image) => `${image.mime} (${Math.ceil((image.data_base64.length * 3) / 4096)} KiB)`).join(", ")}`);
  if (result.images_note) parts.push(`[images: ${result.images_note}]`);
  if (result.tool_calls.length > 0) parts.push(describeToolCalls(result.tool_calls));
  const security = securityLine(result.security);
  if (security) parts.push(security);
  parts.push(statusLine(result, summary));
  return parts.join("\n");
}

/**
 * The value as the agent reads it: JSON for JSON values; the text form of others (a repr, a table)
 * as it is, on its own lines when it has several, instead of a quoted string of escaped newlines.
 */
function valueText(result: WireExecutionResult): string {
  const value = result.value;
  if (result.value_kind !== "repr" || typeof value !== "string") return `[value] ${JSON.stringify(value)}`;
  return value.includes("\n") ? `[value]\n${value.replace(/\n+$/, "")}` : `[value] ${value}`;
}

/** One line on the tool calls: how many, and the first failures by name. */
function describeToolCalls(calls: WireExecutionResult["tool_calls"]): string {
  const failed = calls.filter((c) => !c.ok);
  // Calls may overlap (Promise.all, asyncio.gather), so their durations are not summed.
  const slowest = calls.reduce((a, b) => (b.duration_ms > a.duration_ms ? b : a));
  const head = `[tool calls] ${calls.length} (${calls.length - failed.length} ok${failed.length ? `, ${failed.length} failed` : ""}; slowest ${slowest.tool} ${Math.round(slowest.duration_ms)} ms)`;
  const shown = failed.slice(0, 3).map((c) => `\n- ${c.tool}: ${c.error ?? "failed"}`);
  // Notes are alike (tokens sent as typed): the first one says it.
  const noted = calls.find((c) => c.note !== undefined);
  return head + shown.join("") + (failed.length > 3 ? `\n- … ${failed.length - 3} more failures` : "") + (noted ? `\n- ${noted.tool}: ${noted.note}` : "");
}
