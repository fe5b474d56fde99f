// What execute_code's description tells the model about this server: languages and limits, the
// packages code can import, the upstream servers it can call, and the security policy in force.

import { defaultTimeoutS, type SandgateConfig } from "../../config/index.js";
import type { Engine } from "../../execution/index.js";
import { languageTitles, systemPythonModules, upstreamCallExamples } from "../../languages/index.js";
import { describeFlavors, describePackageSets, installedPackageNames } from "../../sandbox/index.js";

/** What the execute operations use: the engine, and the settings their descriptions and texts name. */
export interface ExecuteHost {
  engine: Engine;
  config: SandgateConfig;
}

const orList = (items: string[]): string => (items.length > 1 ? `${items.slice(0, -1).join(", ")} or ${items.at(-1)}` : (items[0] ?? ""));

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
function policySentence(config: SandgateConfig, full: boolean): string {
  if (!config.security.enabled) return "";
  return (
    ` Code is analysed first (security level ${config.security.level}): blocked code does not run (POLICY_BLOCKED names findings and lines), some waits for a person's approval` +
    `${full ? "; analyze_code checks code without running it" : ""}.`
  );
}

/** How code calls upstream tools, and (codemode) that it can search them itself; empty without upstream servers. */
function upstreamSentence(config: SandgateConfig, full: boolean): string {
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
export function executeCodeDescription(host: ExecuteHost, full: boolean): string {
  const { config, engine } = host;
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
