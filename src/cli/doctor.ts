// `sandgate doctor`: reports which protections are active on this host and exits non-zero
// when code cannot be isolated. Each check runs for real (a sandbox per language).

import { execFileSync } from "node:child_process";
import { allApiKeys, isLoopbackHost, type SandgateConfig } from "../config/index.js";
import { isSandgateError } from "../errors/index.js";
import { createCliLogger } from "./cli-logger.js";
import type { CliIo } from "./io.js";
import { Engine } from "../execution/index.js";
import { LANGUAGE_SPECS, LANGUAGES, RUNNER_SPECS } from "../languages/index.js";
import { findBwrap, SECCOMP_DENIED_SYSCALLS } from "../sandbox/index.js";
import { governanceChecks } from "./doctor-governance.js";
import { formatCapabilities, probeCapabilities, type Capabilities } from "./doctor-capabilities.js";
import { packageSetChecks, packageSetModules } from "./packages.js";
import { withCodeMode } from "./tools.js";

export interface Check {
  name: string;
  ok: boolean;
  /** A failed required check means code cannot be isolated. */
  required: boolean;
  detail: string;
}

const PROBE = `
import json, os, socket
status = dict(l.split(":\\t", 1) for l in open("/proc/self/status").read().splitlines() if ":\\t" in l)
ifaces = [l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]]
try:
    socket.create_connection(("1.1.1.1", 53), timeout=1); net = "reachable"
except OSError as e:
    net = type(e).__name__
json.dumps({"uid": os.getuid(), "pid": os.getpid(), "hostname": socket.gethostname(), "ifaces": ifaces,
  "capEff": status.get("CapEff", "").strip(), "seccomp": status.get("Seccomp", "").strip(),
  "noNewPrivs": status.get("NoNewPrivs", "").strip(), "procs": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
  "home": os.path.exists("/root") or os.path.exists("/home"), "net": net})
`;

interface Probe {
  uid: number;
  pid: number;
  hostname: string;
  ifaces: string[];
  capEff: string;
  seccomp: string;
  noNewPrivs: string;
  procs: number[];
  home: boolean;
  net: string;
}

function version(path: string, flag = "--version"): string {
  try {
    return execFileSync(path, [flag], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim().split("\n")[0] ?? "";
  } catch {
    return "unknown version";
  }
}

/** The checks; `out.capabilities` receives what code can use when a sandbox could be started. What the library logs goes to `io.stderr`. */
export async function runDoctorChecks(config: SandgateConfig, io: CliIo, out: { capabilities?: Capabilities } = {}): Promise<Check[]> {
  const checks: Check[] = [];
  const bwrap = findBwrap(config.paths.bwrap);
  checks.push({
    name: "bubblewrap",
    ok: bwrap !== undefined,
    required: true,
    detail: bwrap
      ? `${bwrap} (${version(bwrap)})`
      : config.paths.bwrap
        ? `not an executable at ${config.paths.bwrap} (SANDGATE_BWRAP)`
        : "not found: install it with `sudo apt-get install -y bubblewrap`",
  });
  if (!bwrap) return checks;
  let engine: Engine;
  try {
    engine = Engine.create(config, { pool: { python: 0, javascript: 0, bash: 0 }, log: createCliLogger(io.stderr, config.logLevel) });
  } catch (error) {
    checks.push({ name: "sandbox runtime", ok: false, required: true, detail: isSandgateError(error) ? error.message : String(error) });
    return checks;
  }
  try {
    const rt = engine.runtime;
    const cg = rt.cgroups;
    checks.push({
      name: "cgroups",
      ok: cg.mode !== "none",
      required: false,
      detail: cg.mode === "none"
        ? `unavailable (${cg.reason ?? "?"}); falling back to rlimits (address space, processes, file size)${process.getuid?.() === 0 ? "; as root, RLIMIT_NPROC does not hold back a fork bomb, so run where cgroups are writable" : ""}`
        : `${cg.mode}: ${cg.controllers.join(", ")} limited per sandbox${cg.reason ? ` (${cg.reason})` : ""}`,
    });
    checks.push({
      name: "freezing idle sessions",
      ok: cg.freezer === true,
      required: false,
      detail: cg.freezer
        ? "session sandboxes are frozen between calls: threads and timers left running use no CPU"
        : "no cgroup freezer: threads and timers a call leaves running in a session keep running between calls (their output is dropped)",
    });
    const wfs = await engine.sessions.filesystems.state();
    checks.push({
      name: "workspace quota",
      ok: wfs.active === "filesystem",
      required: false,
      detail:
        wfs.active === "filesystem"
          ? `each session workspace is its own ext4 filesystem of ${config.limits.maxWorkspaceMb} MB and ${config.limits.maxWorkspaceInodes} inodes: the kernel refuses writes past them`
          : `plain directories (${wfs.reason ?? "?"}): usage is checked after each call and file_write refused while over, but a single call can write past the limit; run as root with loop devices for a hard bound`,
    });
    checks.push({
      name: "host paths in the mount table",
      ok: rt.view.hidden,
      required: false,
      detail: rt.view.hidden
        ? "sandboxes get the synthetic /etc, the runners, the tool channels and the tool wrappers from tmpfs mounts of sandgate's own, so /proc/self/mountinfo shows no SANDBOX_DIR path for them (see README: volumes)"
        : `bound from ${config.sandboxDir}/runtime (${rt.view.reason ?? "?"}): code can read that path in /proc/self/mountinfo; run as root to hide it`,
    });
    const probe = await engine.execute({ code: PROBE, language: "python", timeoutS: Math.min(20, config.limits.maxExecutionTimeS) });
    if (probe.status !== "ok" || typeof probe.value !== "string") {
      checks.push({ name: "sandbox start", ok: false, required: true, detail: `${probe.status}: ${probe.error?.message ?? probe.stderr}` });
      return checks;
    }
    checks.push({ name: "sandbox start", ok: true, required: true, detail: "bubblewrap starts a runner and runs code" });
    const p = JSON.parse(probe.value) as Probe;
    const host = rt.hostUser ? `host uid ${rt.hostUser.uid} (sandgate runs as root; bwrap drops to this user)` : `host uid ${process.getuid?.() ?? "?"} (the user running sandgate)`;
    checks.push({ name: "user namespace", ok: p.uid !== 0 && rt.hostUser?.uid !== 0, required: true, detail: `code runs as uid ${p.uid} inside, ${host}` });
    checks.push({ name: "pid namespace", ok: p.procs.length <= 4 && p.pid < 10, required: true, detail: `code sees ${p.procs.length} processes (pids ${p.procs.join(", ")})` });
    checks.push({ name: "network namespace", ok: p.ifaces.every((i) => i === "lo") && p.net !== "reachable", required: true, detail: `interfaces: ${p.ifaces.join(", ")}; outbound connect: ${p.net}` });
    checks.push({ name: "uts namespace", ok: p.hostname === "sandgate", required: true, detail: `hostname ${p.hostname}` });
    checks.push({
      name: "mount namespace",
      ok: !p.home,
      required: true,
      detail: p.home ? "host /root or /home is visible" : "only /usr (read-only, /usr/local/etc and /usr/etc hidden), the host image's public /etc entries, synthetic passwd/group/hosts, /workspace and /tmp are visible",
    });
    checks.push({ name: "capabilities", ok: /^0+$/.test(p.capEff), required: true, detail: `effective capabilities ${p.capEff}` });
    checks.push({
      name: "seccomp",
      ok: p.seccomp === "2",
      required: false,
      detail: p.seccomp === "2" ? `filter active (${SECCOMP_DENIED_SYSCALLS.length} syscalls denied), no_new_privs=${p.noNewPrivs}` : `not active (Seccomp: ${p.seccomp})`,
    });
    for (const language of LANGUAGES) {
      const spec = LANGUAGE_SPECS[language];
      const { code, expect, from } = spec.doctorProbe;
      const result = await engine.execute({ code, language, timeoutS: Math.min(20, config.limits.maxExecutionTimeS) });
      const got = from === "stdout" ? result.stdout : result.value;
      const interpreter = rt.interpreters[RUNNER_SPECS[spec.runner].interpreter];
      checks.push({
        name: `${language} runner`,
        ok: result.status === "ok" && got === expect,
        required: true,
        detail: result.status === "ok" ? `${interpreter} (${version(interpreter)})` : `${result.status}: ${result.error?.message ?? result.stderr}`,
      });
    }
    checks.push(...(await governanceChecks(config)));
    out.capabilities = await probeCapabilities(engine, Math.min(60, config.limits.maxExecutionTimeS), packageSetModules(config));
    checks.push(...(await packageSetChecks(config)));
    const { server } = config;
    const exposed = !isLoopbackHost(server.host);
    const keys = allApiKeys(server).length;
    checks.push({
      name: "http server",
      ok: !exposed || keys > 0,
      required: false,
      detail:
        `serve listens on ${server.host}:${server.port}; MCP tools: ${server.toolProfile === "full" ? "full" : "codemode (execute_code, search_tools)"}; API key ${keys > 0 ? `required (${keys} configured)` : "not set"}; CORS ${server.cors.enabled ? `on for ${server.cors.origins.join(", ")}` : "off"}` +
        (exposed && keys === 0 ? "; serve will refuse to start: set server.apiKeys (SANDGATE_API_KEYS) or server.apiKey (SANDGATE_API_KEY), or bind to 127.0.0.1" : "") +
        (config.volumes.length > 0 ? `; volumes: ${config.volumes.map((v) => `/mnt/${v.name}${v.readOnly ? "" : " (writable)"}`).join(", ")}` : ""),
    });
  } finally {
    await engine.close();
  }
  if (Object.keys(config.mcpServers).length > 0) {
    await withCodeMode(config, io, async (codeMode) => {
      for (const s of codeMode.status()) {
        checks.push({
          name: `upstream ${s.name}`,
          ok: s.state === "ready" || s.state === "disabled",
          required: false,
          detail: s.state === "ready" ? `${s.transport}, ${s.toolCount} tools` : `${s.state}${s.error ? `: ${s.error.split("\n")[0]}` : ""}`,
        });
      }
    });
  }
  return checks;
}

export async function runDoctor(config: SandgateConfig, json: boolean, io: CliIo): Promise<number> {
  const out: { capabilities?: Capabilities } = {};
  const checks = await runDoctorChecks(config, io, out);
  const isolated = checks.every((c) => c.ok || !c.required);
  if (json) {
    io.stdout.write(`${JSON.stringify({ isolated, checks, ...out }, null, 2)}\n`);
  } else {
    const width = Math.max(...checks.map((c) => c.name.length)) + 1;
    for (const c of checks) io.stdout.write(`${c.ok ? "✓" : c.required ? "✗" : "!"} ${c.name.padEnd(width)} ${c.detail}\n`);
    if (out.capabilities) io.stdout.write(`\n${formatCapabilities(out.capabilities).join("\n")}\n`);
    io.stdout.write(isolated ? "\nCode can be isolated on this host.\n" : "\nCode CANNOT be isolated on this host; sandgate will refuse to run it. Fix the ✗ lines above.\n");
  }
  return isolated ? 0 : 1;
}
