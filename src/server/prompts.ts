// The usage prompt: how an agent gets the most out of sandgate's tools, with this host's limits.

import type { Prompt } from "@modelcontextprotocol/sdk/types.js";
import { describeLanguages, languageTitles, upstreamCallExamples } from "../languages/index.js";
import { defaultTimeoutS } from "../config/index.js";
import { describeFlavors } from "../sandbox/index.js";
import type { ServerContext } from "./context.js";

export const GUIDE_PROMPT: Prompt = {
  name: "use_sandgate",
  title: "How to use sandgate",
  description: "Guidance for running code with sandgate's tools: sessions, files, limits and good habits",
  arguments: [{ name: "task", description: "The task at hand, appended to the guidance", required: false }],
};

/** The guidance for the tools the server's profile lists: the codemode profile's agent is told only of execute_code and search_tools. */
export function guideText(ctx: ServerContext, task?: string): string {
  const { limits } = ctx.config;
  const full = ctx.config.server.toolProfile === "full";
  /** Lines about tools only the full profile lists. */
  const ifFull = (...lines: string[]): string[] => (full ? lines : []);
  const lines = [
    "You can run code in isolated Linux sandboxes through sandgate. There is no network inside a sandbox.",
    "",
    `- execute_code runs ${languageTitles("or")}; its language argument takes a name or an alias: ${describeLanguages()}. The value of the last expression comes back as \`value\` (${languageTitles("and", (spec) => spec.returnsValue)}).`,
    ...ifFull("- execute_command runs one shell line (pipes and redirections work), e.g. `ls -la /workspace | head`."),
    "- Pass the same session_id to keep variables, imports and /workspace files between calls. Without it, every call starts from scratch.",
    "- env gives one call environment variables (API keys, settings); session_env gives them to every call of the session. Values of secret-looking names come back as [masked:NAME], so print what you need to see, not the secret.",
    full
      ? "- file_read, file_write and file_list move files in and out of a session's /workspace without writing code; a binary file comes back as a base64 blob resource (large files: download them over REST)."
      : "- Code reads and writes files in /workspace (kept with the session); admin-mounted data is under /mnt.",
    "- Plots come back to you as images: a matplotlib figure shown or left open, a PIL image as the last expression, or `sandgate.show(x)` (Python and JavaScript; `sandgate-show FILE` in Bash).",
    "- Packages cannot be installed (no network): use what execute_code's description lists, or ask the admin for more.",
    "- keep_processes: true keeps a server or other process the call started (`cmd > log 2>&1 &`) alive for the session's later calls.",
    ...ifFull("- get_volume_path shows read-only data the admin mounted under /mnt.", "- stop_session frees a session when the task is done."),
    full
      ? "- Upstream MCP tools are called from code, not directly: search_tools finds them (detail \"full\" gives TypeScript signatures), list_servers shows the servers."
      : "- Upstream MCP tools are called from code, not directly: search_tools finds them (detail \"full\" gives TypeScript signatures); code can search too (searchTools/listServers in JS/TS, search_tools/list_servers in Python, sandgate-tool --search/--servers in Bash).",
    ...upstreamCallExamples().map(
      ({ titles, example }) => `  ${titles}: \`${example.call}\`${example.importLine ? ` or \`${example.importLine}\`` : ""}${example.hint ? `; ${example.hint}` : ""}.`,
    ),
    "  A failed call raises an error naming the tool; results stay in the sandbox unless you print them.",
    ...(ctx.config.pii.enabled
      ? ["  Personal data in tool results reaches you as tokens like [EMAIL_1] (your code has the real values); write a token in a later tool call's arguments as it is and the tool gets the real value."]
      : []),
    ...(ctx.config.security.enabled
      ? [
          `- Code is analysed before it runs (security level ${ctx.config.security.level}): the policy may refuse it (POLICY_BLOCKED names the rule and line) or hold it until a person approves; ${full ? "analyze_code checks code without running it, and " : ""}each result's security field gives the risk and findings.`,
          "- Some upstream tools are denied or need a person's approval (search_tools marks them under policy); a call the policy refuses raises ToolError with kind ToolDenied. Do not disguise code or retry a refused call another way: do the task differently or tell the user.",
        ]
      : []),
    "",
    `Limits: ${defaultTimeoutS(limits)} s per call by default (pass timeout up to ${limits.maxExecutionTimeS} s${full ? ", or background: true for long jobs polled with get_job" : ""}), memory by flavor ${describeFlavors(ctx.config)}, ${limits.maxWorkspaceMb} MB of workspace files; output beyond ${ctx.config.codeMode.outputTokenBudget} tokens is shortened (JSON keeps its shape, text its head and tail) and the full text kept as a resource (sandgate://outputs/{id}/{stream}, named in the result).`,
    "Good habits: process large data inside the sandbox and print only summaries; write big results to files; when a call fails, read the error and traceback, fix the code and retry.",
  ];
  if (task?.trim()) lines.push("", `Task: ${task.trim()}`);
  return lines.join("\n");
}
