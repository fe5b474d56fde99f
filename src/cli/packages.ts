// `sandgate packages sync|list`: installs the config's package sets on the host, or shows what
// is installed and whether it matches the config. Progress on stderr; the result on stdout.

import { statSync } from "node:fs";
import type { SandgateConfig } from "../config/index.js";
import { SandgateError } from "../errors/index.js";
import { PACKAGE_LANGUAGES, readActiveManifest, type PackageLanguage } from "../sandbox/package-sets.js";
import { inCwd, type CliIo } from "./io.js";
import { packageSetState, syncPackages, type SyncOptions } from "./package-sync.js";

export interface PackagesCommand {
  action: string | undefined;
  json: boolean;
  apt: boolean;
  findLinks: string[];
  noIndex: boolean;
  /** Words after the action, which no action takes. */
  extra?: string[];
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

const SETTING: Record<PackageLanguage, string> = { python: "python.packages", node: "node.packages" };

export async function runPackages(command: PackagesCommand, config: SandgateConfig, io: CliIo): Promise<number> {
  if (command.extra !== undefined && command.extra.length > 0) {
    throw new SandgateError("INVALID_INPUT", `sandgate packages ${command.action ?? ""} takes no ${JSON.stringify(command.extra[0])}: the packages come from python.packages and node.packages in the config`);
  }
  if (command.action === "sync") return sync(command, config, io);
  if (command.action === "list") {
    const syncOnly = command.apt ? "--apt" : command.findLinks.length > 0 ? "--find-links" : command.noIndex ? "--no-index" : undefined;
    if (syncOnly !== undefined) throw new SandgateError("INVALID_INPUT", `${syncOnly} is for \`sandgate packages sync\`, not list`);
    return list(command, config, io);
  }
  throw new SandgateError("INVALID_INPUT", `sandgate packages needs \`sync\` or \`list\`${command.action === undefined ? "" : `, not ${JSON.stringify(command.action)}`}`);
}

async function sync(command: PackagesCommand, config: SandgateConfig, io: CliIo): Promise<number> {
  // pip only warns about a missing --find-links directory and then fails on every package.
  const isUrl = (dir: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(dir);
  for (const dir of command.findLinks) {
    if (!isUrl(dir) && !isDirectory(inCwd(io, dir))) throw new SandgateError("INVALID_INPUT", `--find-links ${dir}: no such directory (give a directory of wheel files)`);
  }
  const options: SyncOptions = {
    apt: command.apt,
    findLinks: command.findLinks.map((dir) => (isUrl(dir) ? dir : inCwd(io, dir))),
    env: io.env,
    noIndex: command.noIndex,
    progress: (line) => io.stderr.write(`${line}\n`),
  };
  const outcomes = await syncPackages(config, options);
  const failed = outcomes.some((o) => o.status === "failed");
  if (command.json) {
    io.stdout.write(`${JSON.stringify({ ok: !failed, languages: outcomes }, null, 2)}\n`);
    return failed ? 1 : 0;
  }
  const lines: string[] = [];
  for (const outcome of outcomes) {
    switch (outcome.status) {
      case "none":
        lines.push(`${outcome.language}: nothing configured (${SETTING[outcome.language]})`);
        break;
      case "installed":
      case "up-to-date":
        lines.push(
          `${outcome.language}: ${outcome.status === "installed" ? "installed" : "up to date"}, active in new sandboxes: ${(outcome.manifest?.packages ?? []).map((p) => `${p.name} ${p.version ?? "?"} (${p.source})`).join(", ")}`,
        );
        break;
      case "failed":
        lines.push(`${outcome.language}: FAILED, the previous set stays active:`);
        for (const failure of outcome.failures) lines.push(`  ${failure.spec}: ${failure.reason}`);
        break;
    }
  }
  io.stdout.write(`${lines.join("\n")}\n`);
  return failed ? 1 : 0;
}

/** `sandgate doctor`'s lines on the package sets: what is installed for each language and whether it matches the config. */
export async function packageSetChecks(config: SandgateConfig): Promise<Array<{ name: string; ok: boolean; required: false; detail: string }>> {
  const checks: Array<{ name: string; ok: boolean; required: false; detail: string }> = [];
  for (const language of PACKAGE_LANGUAGES) {
    const s = await packageSetState(config, language);
    if (s.configured.length === 0 && s.manifest === undefined) {
      checks.push({ name: `${language} packages`, ok: true, required: false, detail: `none configured; list them in ${SETTING[language]}, then run \`sandgate packages sync\`` });
      continue;
    }
    const installed = (s.manifest?.packages ?? []).map((p) => `${p.name} ${p.version ?? "?"} (${p.source})`).join(", ") || "nothing";
    checks.push({
      name: `${language} packages`,
      ok: s.inSync,
      required: false,
      detail: `${installed} at /sandgate/packages/${language}${s.inSync ? "" : `; the config lists ${s.configured.join(", ") || "nothing"}: run \`sandgate packages sync\``}`,
    });
  }
  return checks;
}

/** Import names of the installed sets, for doctor's capability probe. */
export function packageSetModules(config: SandgateConfig): Record<PackageLanguage, string[]> {
  const modules = {} as Record<PackageLanguage, string[]>;
  for (const language of PACKAGE_LANGUAGES) modules[language] = (readActiveManifest(config.sandboxDir, language)?.packages ?? []).flatMap((p) => p.modules);
  return modules;
}

async function list(command: PackagesCommand, config: SandgateConfig, io: CliIo): Promise<number> {
  const states = await Promise.all(PACKAGE_LANGUAGES.map(async (language) => ({ language, ...(await packageSetState(config, language)) })));
  if (command.json) {
    const out = Object.fromEntries(
      states.map((s) => [
        s.language,
        {
          configured: s.configured,
          in_sync: s.inSync,
          dir: s.manifest ? (s.dir ?? null) : null,
          synced_at: s.manifest?.createdAt ?? null,
          interpreter: s.manifest?.interpreter ?? null,
          packages: s.manifest?.packages ?? [],
        },
      ]),
    );
    io.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  }
  const lines: string[] = [];
  for (const s of states) {
    const status = s.inSync ? "in sync with the config" : "NOT in sync with the config: run `sandgate packages sync`";
    if (s.manifest === undefined) {
      lines.push(`${s.language}: none installed${s.configured.length > 0 ? `; configured: ${s.configured.join(", ")}` : ""} (${status})`);
      continue;
    }
    lines.push(`${s.language}: ${s.dir ?? ""} (${status}; synced ${s.manifest.createdAt})`);
    const width = Math.max(...s.manifest.packages.map((p) => p.name.length), 4);
    for (const p of s.manifest.packages) lines.push(`  ${p.name.padEnd(width)}  ${(p.version ?? "?").padEnd(12)}  ${p.source}`);
  }
  io.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}
