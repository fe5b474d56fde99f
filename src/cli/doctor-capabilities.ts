// `sandgate doctor`'s listing of what code can use: Python modules of note, Node and its packages,
// common command-line tools, each checked inside a real sandbox (one per language), and how to add more.

import type { Engine } from "../execution/index.js";
import { PYTHON_MODULES_OF_NOTE } from "../languages/index.js";

/** Command-line tools checked inside a Bash sandbox, with the Debian package that provides each. */
const CLI_TOOLS: ReadonlyArray<readonly [tool: string, aptPackage: string]> = [
  ["awk", "mawk"], ["sed", "sed"], ["grep", "grep"], ["find", "findutils"], ["sort", "coreutils"], ["diff", "diffutils"],
  ["tar", "tar"], ["gzip", "gzip"], ["xz", "xz-utils"], ["zip", "zip"], ["unzip", "unzip"], ["file", "file"],
  ["which", "debianutils"], ["bc", "bc"], ["jq", "jq"], ["sqlite3", "sqlite3"], ["git", "git"], ["curl", "curl"],
  ["make", "make"], ["cc", "gcc"], ["c++", "g++"], ["vi", "vim"], ["less", "less"], ["perl", "perl"],
  ["python3", "python3"], ["node", "nodejs"], ["convert", "imagemagick"], ["ffmpeg", "ffmpeg"], ["pandoc", "pandoc"],
];

export interface ModuleStatus {
  name: string;
  /** The module's version when it imports ("" when it names none). */
  version?: string;
  /** Why it does not import: "not installed" or the import's error. */
  error?: string;
}

export interface Capabilities {
  python?: { version: string; modules: ModuleStatus[] } | { error: string };
  node?: { version: string; modules: ModuleStatus[] } | { error: string };
  tools?: { present: string[]; missing: string[] } | { error: string };
  howToAdd: string[];
}

/** Module names a language's package set adds to the listing (import names for Python, package names for Node). */
export interface ExtraModules {
  python: readonly string[];
  node: readonly string[];
}

const pythonProbe = (modules: readonly string[]): string => `
import importlib, importlib.util, json, platform
def probe(name):
    try:
        if importlib.util.find_spec(name) is None:
            return {"name": name, "error": "not installed"}
        module = importlib.import_module(name)
        return {"name": name, "version": str(getattr(module, "__version__", "") or "")}
    except BaseException as e:
        return {"name": name, "error": (type(e).__name__ + ": " + str(e)).splitlines()[0][:200]}
json.dumps({"version": platform.python_version(), "modules": [probe(n) for n in ${JSON.stringify(modules)}]})
`;

const nodeProbe = (modules: readonly string[]): string => `
const modules = [];
for (const name of ${JSON.stringify(modules)}) {
  try {
    const m = await import(name);
    modules.push({ name, version: String(m.version ?? m.default?.version ?? "") });
  } catch (e) {
    modules.push({ name, error: e && e.code === "ERR_MODULE_NOT_FOUND" ? "not installed" : String(e && e.message || e).split("\\n")[0].slice(0, 200) });
  }
}
JSON.stringify({ version: process.version, modules });
`;

const toolsProbe = (tools: readonly string[]): string =>
  `for t in ${tools.join(" ")}; do p=$(command -v "$t") && [ -x "$(readlink -f "$p")" ] && echo "+$t" || echo "-$t"; done`;

/** The steps that add what is missing, for the listing's end. */
function howToAdd(missingTools: readonly string[], missingModules: readonly string[]): string[] {
  const apt = [...new Set(missingTools.map((tool) => CLI_TOOLS.find(([name]) => name === tool)?.[1] ?? tool))];
  const pyApt = missingModules.flatMap((module) => PYTHON_MODULES_OF_NOTE.find(([name]) => name === module)?.[1] ?? []);
  return [
    `command-line tools and libraries: install them on the host${apt.length > 0 ? ` (e.g. \`sudo apt-get install -y ${apt.slice(0, 6).join(" ")}\`)` : ""}; sandboxes see /usr (and /usr/local) read-only from their next start`,
    `Python modules: Debian's python3-* packages on the host are importable in every sandbox (e.g. \`sudo apt-get install -y ${(pyApt.length > 0 ? pyApt.slice(0, 4) : ["python3-scipy"]).join(" ")}\`)`,
    "package sets for every sandbox: list them under python.packages or node.packages in the config file, then run `sandgate packages sync` (see `sandgate packages list`)",
  ];
}

function parse<T>(value: unknown): T {
  return JSON.parse(String(value)) as T;
}

/** Runs the three probes, one sandbox each; a probe that fails is reported, not thrown. */
export async function probeCapabilities(engine: Engine, timeoutS: number, extra: ExtraModules = { python: [], node: [] }): Promise<Capabilities> {
  const caps: Capabilities = { howToAdd: [] };
  const python = await engine.execute({ language: "python", code: pythonProbe([...new Set([...PYTHON_MODULES_OF_NOTE.map(([name]) => name), ...extra.python])]), timeoutS });
  caps.python = python.status === "ok" ? parse(python.value) : { error: `${python.status}: ${python.error?.message ?? python.stderr}`.slice(0, 300) };
  const node = await engine.execute({ language: "javascript", code: nodeProbe([...new Set(extra.node)]), timeoutS });
  caps.node = node.status === "ok" ? parse(node.value) : { error: `${node.status}: ${node.error?.message ?? node.stderr}`.slice(0, 300) };
  const tools = await engine.execute({ language: "bash", code: toolsProbe(CLI_TOOLS.map(([tool]) => tool)), timeoutS });
  const lines = tools.stdout.split("\n");
  caps.tools =
    tools.status === "ok"
      ? { present: lines.filter((l) => l.startsWith("+")).map((l) => l.slice(1)), missing: lines.filter((l) => l.startsWith("-")).map((l) => l.slice(1)) }
      : { error: `${tools.status}: ${tools.error?.message ?? tools.stderr}`.slice(0, 300) };
  const notInstalled = caps.python && "modules" in caps.python ? caps.python.modules.filter((m) => m.error === "not installed").map((m) => m.name) : [];
  caps.howToAdd = howToAdd("missing" in caps.tools ? caps.tools.missing : [], notInstalled);
  return caps;
}

function moduleList(modules: readonly ModuleStatus[]): string {
  const ok = modules.filter((m) => m.error === undefined).map((m) => (m.version ? `${m.name} ${m.version}` : m.name));
  const notInstalled = modules.filter((m) => m.error === "not installed").map((m) => m.name);
  const broken = modules.filter((m) => m.error !== undefined && m.error !== "not installed").map((m) => `${m.name} (${m.error})`);
  return [
    ok.length > 0 ? ok.join(", ") : "no modules of note",
    ...(notInstalled.length > 0 ? [`not installed: ${notInstalled.join(", ")}`] : []),
    ...(broken.length > 0 ? [`FAIL TO IMPORT: ${broken.join("; ")}`] : []),
  ].join("; ");
}

/** The listing as text lines for the terminal. */
export function formatCapabilities(caps: Capabilities): string[] {
  const lines = ["What code can use (checked inside a sandbox):"];
  const { python, node, tools } = caps;
  if (python) lines.push("error" in python ? `  python: ${python.error}` : `  python ${python.version}: ${moduleList(python.modules)}`);
  if (node) lines.push("error" in node ? `  node: ${node.error}` : `  node ${node.version}${node.modules.length > 0 ? `: ${moduleList(node.modules)}` : " (no package set)"}`);
  if (tools) lines.push("error" in tools ? `  tools: ${tools.error}` : `  tools: ${tools.present.join(", ")}${tools.missing.length > 0 ? `; missing: ${tools.missing.join(", ")}` : ""}`);
  lines.push("To add more:", ...caps.howToAdd.map((step) => `  - ${step}`));
  return lines;
}
