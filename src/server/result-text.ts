// The text an agent reads for an execution result: the output first, then what went wrong
// and what to try next. The structured result carries the same facts for programs.

import type { SandgateConfig } from "../config/index.js";
import type { WireExecutionResult } from "./wire.js";
import { securityLine } from "./security-wire.js";

/** One sentence on how the run ended and, when it failed, what to do about it. */
export function describeResult(result: WireExecutionResult, config: SandgateConfig): string {
  const took = `${Math.round(result.duration_ms)} ms`;
  switch (result.status) {
    case "ok":
      return `Finished in ${took}.`;
    case "error":
      if (result.error?.type === "WorkspaceLimit") return `The run finished but ${result.error.message}.`;
      return result.error
        ? `The code failed with ${result.error.type}: ${result.error.message}. Fix the error and run it again.`
        : `The program exited with status ${result.exit_code ?? "unknown"}.`;
    case "timeout":
      return `The code was stopped after running too long (${took}${stateNote(result)}). Make it faster, work on less data, or pass a larger timeout (at most ${config.limits.maxExecutionTimeS} s; background: true runs it as a job you poll with get_job).`;
    case "memory_limit":
      return `The sandbox ran out of memory and the code was stopped. Process the data in smaller pieces or pass flavor "large" (at most ${config.limits.maxMemoryMb} MB).`;
    case "output_limit":
      return `The code printed more than ${config.limits.outputCapBytes} bytes and was stopped. Write large results to a file in /workspace and print a summary.`;
    case "killed":
      return `The run was cancelled before it finished${stateNote(result)}.`;
    case "running":
      return `Started as background job ${result.job_id ?? "?"}; read its output and result with get_job, stop it with stop_job.`;
  }
}

/** For a stopped run: whether the session's interpreter kept its state (interrupted) or lost it (killed). */
function stateNote(result: WireExecutionResult): string {
  if (result.state_reset) return "; the interpreter was killed, so the session's variables and imports are gone (files remain)";
  if (result.error?.message.includes("interrupted")) return "; it was interrupted and the session's variables and imports are kept";
  return "";
}

export function renderResultText(result: WireExecutionResult, summary: string, note?: string): string {
  const parts: string[] = [];
  if (note) parts.push(`Note: ${note}.`);
  if (result.stdout) parts.push(result.stdout.endsWith("\n") ? result.stdout.slice(0, -1) : result.stdout);
  if (result.stderr) parts.push(`[stderr]\n${result.stderr.endsWith("\n") ? result.stderr.slice(0, -1) : result.stderr}`);
  if (result.value !== undefined) parts.push(`[value] ${JSON.stringify(result.value)}`);
  // A timeout or cancel that interrupted the code has a traceback too: where the code was.
  if (result.error?.traceback && (result.status === "error" || result.status === "timeout" || result.status === "killed")) parts.push(`[traceback]\n${result.error.traceback.trimEnd()}`);
  if (result.output_note) parts.push(`[${result.output_note}]`);
  else if (result.full_output) parts.push(`[output cut; full text in ${Object.values(result.full_output).join(" and ")}]`);
  if (result.images?.length) parts.push(`[images] ${result.images.map((image) => `${image.mime} (${Math.ceil((image.data_base64.length * 3) / 4096)} KiB)`).join(", ")}`);
  if (result.images_note) parts.push(`[images: ${result.images_note}]`);
  if (result.tool_calls.length > 0) parts.push(describeToolCalls(result.tool_calls));
  const security = securityLine(result.security);
  if (security) parts.push(security);
  parts.push(`[${result.status}${result.exit_code === null ? "" : `, exit ${result.exit_code}`}] ${summary}`);
  return parts.join("\n\n");
}

/** One line on the tool calls: how many, and the first failures by name. */
function describeToolCalls(calls: WireExecutionResult["tool_calls"]): string {
  const failed = calls.filter((c) => !c.ok);
  // Calls may overlap (Promise.all, asyncio.gather), so their durations are not summed.
  const slowest = calls.reduce((a, b) => (b.duration_ms > a.duration_ms ? b : a));
  const head = `[tool calls] ${calls.length} (${calls.length - failed.length} ok${failed.length ? `, ${failed.length} failed` : ""}; slowest ${slowest.tool} ${Math.round(slowest.duration_ms)} ms)`;
  const shown = failed.slice(0, 3).map((c) => `\n- ${c.tool}: ${c.error ?? "failed"}`);
  return head + shown.join("") + (failed.length > 3 ? `\n- … ${failed.length - 3} more failures` : "");
}
