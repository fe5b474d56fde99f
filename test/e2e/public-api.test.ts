// The library surface as an installed package sees it: `import ... from "sandgate"` resolved through
// package.json "exports" to the build (run `npm run build` first). A change to the list fails here.

import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REVERSE_SHELL } from "../fixtures/risky-code.js";

const ROOT = resolve(import.meta.dirname, "..", "..");

/** Values a program can import (classes, functions, constants). */
const RUNTIME_EXPORTS = [
  "Analyzer",
  "ApprovalQueue",
  "CodeMode",
  "Governance",
  "openAuditLog",
  "verifyAudit",
  "ERROR_CODES",
  "Engine",
  "LANGUAGES",
  "SandgateError",
  "httpStatusOf",
  "isSandgateError",
  "jsonRpcCodeOf",
  "loadConfig",
  "locateConfigFile",
  "validateConfig",
];

/** Types only (interfaces and type aliases); classes are in the list above. */
const TYPE_EXPORTS = [
  "Action",
  "Analysis",
  "ApprovalBroker",
  "ApprovalDecision",
  "ApprovalRequest",
  "Approver",
  "AuditLogOptions",
  "AuditStore",
  "Category",
  "EventSink",
  "Finding",
  "GovernanceEvent",
  "GovernanceOptions",
  "RiskLevel",
  "SecuritySummary",
  "Severity",
  "VerifyResult",
  "CodeModeConfig",
  "CodeModeOptions",
  "CommandRequest",
  "ConfigLocation",
  "EngineFiles",
  "EngineHooks",
  "EngineJobs",
  "EngineOptions",
  "EngineSessions",
  "EnsuredSession",
  "ErrorCode",
  "ErrorInfo",
  "ExecuteRequest",
  "ExecutionResult",
  "FileEncoding",
  "FileEventSink",
  "Flavor",
  "FlavorName",
  "JobCommandRequest",
  "JobInfo",
  "JobReadOptions",
  "JobRequest",
  "JobSnapshot",
  "JobStatus",
  "Language",
  "Limits",
  "LoadConfigOptions",
  "NewFileEvent",
  "RunContext",
  "RunHooks",
  "RunVerdict",
  "SandgateConfig",
  "SandgateErrorOptions",
  "ServerConfig",
  "SessionInfo",
  "SessionOptions",
  "TokenCounts",
  "ToolProvider",
  "UpstreamCallSummary",
  "UpstreamServerConfig",
  "UpstreamState",
  "UpstreamStatus",
  "VolumeConfig",
  "WorkspaceEntry",
  "WorkspaceFile",
  "WorkspaceListing",
  "WrittenFile",
];

/** Runs an ES module snippet with node from the package root, where "sandgate" names this package. */
function runModule(code: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, ["--input-type=module", "-e", code], { cwd: ROOT, timeout: 30_000 }, (error, stdout, stderr) => {
      done({ status: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** The names "sandgate" exports as TypeScript resolves it for a consumer (through "exports" and "types"). */
function typeScriptView(): { values: string[]; types: string[]; diagnostics: string[] } {
  // The probe must sit inside the package for the self-reference to resolve; a hidden dir keeps it out of the project.
  const dir = mkdtempSync(join(ROOT, ".public-api-"));
  try {
    const probe = join(dir, "probe.ts");
    writeFileSync(probe, 'import * as api from "sandgate";\nexport { api };\n');
    const program = ts.createProgram([probe], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ["node"],
    });
    const source = program.getSourceFile(probe)!;
    const diagnostics = ts.getPreEmitDiagnostics(program, source).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    const checker = program.getTypeChecker();
    const declaration = source.statements.find(ts.isImportDeclaration)!;
    const module = checker.getSymbolAtLocation(declaration.moduleSpecifier);
    const values: string[] = [];
    const types: string[] = [];
    for (const symbol of module ? checker.getExportsOfModule(module) : []) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      // `export type { SomeClass }` hands out the class's type but no value a program could import.
      const specifier = symbol.declarations?.find(ts.isExportSpecifier);
      const typeOnly = specifier !== undefined && (specifier.isTypeOnly || specifier.parent.parent.isTypeOnly);
      (target.flags & ts.SymbolFlags.Value && !typeOnly ? values : types).push(symbol.getName());
    }
    return { values: values.sort(), types: types.sort(), diagnostics };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the sandgate package", () => {
  it("exports exactly the curated names at run time", async () => {
    const run = await runModule('const api = await import("sandgate"); console.log(JSON.stringify(Object.keys(api).sort()));');
    expect(run.stderr, "is the package built? run `npm run build`").toBe("");
    expect(JSON.parse(run.stdout)).toEqual([...RUNTIME_EXPORTS].sort());
  });

  it("declares the same values and exactly the curated types for TypeScript consumers", () => {
    const view = typeScriptView();
    expect(view.diagnostics).toEqual([]);
    expect(view.values).toEqual([...RUNTIME_EXPORTS].sort());
    expect(view.types).toEqual([...TYPE_EXPORTS].sort());
  });

  it("refuses deep imports of its internals but lends out its package.json", async () => {
    const run = await runModule(
      [
        'import { createRequire } from "node:module";',
        'const require = createRequire(process.cwd() + "/");',
        'console.log(require("sandgate/package.json").name);',
        'try { await import("sandgate/dist/execution/engine.js"); console.log("imported"); } catch (e) { console.log(e.code); }',
        'try { await import("sandgate/dist/config/index.js"); console.log("imported"); } catch (e) { console.log(e.code); }',
      ].join("\n"),
    );
    expect(run.stderr).toBe("");
    expect(run.stdout.trim().split("\n")).toEqual(["sandgate", "ERR_PACKAGE_PATH_NOT_EXPORTED", "ERR_PACKAGE_PATH_NOT_EXPORTED"]);
  });

  it("lets a program gate its engine with a Governance, passed as itself (as before the engine's hooks) or as its hooks", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-public-gate-"));
    try {
      const run = await runModule(
        [
          'import { Engine, Governance, loadConfig } from "sandgate";',
          `const config = loadConfig({ SANDBOX_DIR: ${JSON.stringify(dir)} });`,
          `const code = ${JSON.stringify(REVERSE_SHELL)};`,
          'for (const how of ["governance", "hooks"]) {',
          "  const governance = new Governance({ config });",
          "  const engine = Engine.create(config, { pool: { python: 0, javascript: 0, bash: 0 }, ...(how === 'governance' ? { governance } : { hooks: governance.engineHooks() }) });",
          "  try { await engine.execute({ language: 'python', code }); console.log(how, 'ran'); } catch (e) { console.log(how, e.code); }",
          "  const plain = await engine.execute({ language: 'python', code: 'print(6 * 7)' });",
          "  console.log(how, plain.stdout.trim(), plain.security?.action);",
          "  await engine.close(); await governance.analyzer.close();",
          "}",
        ].join("\n"),
      );
      expect(run.stderr).toBe("");
      expect(run.stdout.trim().split("\n")).toEqual(["governance POLICY_BLOCKED", "governance 42 allow", "hooks POLICY_BLOCKED", "hooks 42 allow"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("lets a program write its own run hooks: judge, admit (a refusal stops the run before any sandbox runs it) and record, in that order", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-public-hooks-"));
    try {
      const run = await runModule(
        [
          'import { Engine, SandgateError, loadConfig } from "sandgate";',
          `const config = loadConfig({ SANDBOX_DIR: ${JSON.stringify(dir)} });`,
          "const seen = [];",
          "const runs = {",
          "  async judge(context) { seen.push(`judge ${context.language}`); return { context, heldAtAdmit: context.code.includes('forbidden'), security: { risk: 0, level: 'low', action: 'allow', findings: [] } }; },",
          "  async admit(verdict) { seen.push('admit'); if (verdict.heldAtAdmit) throw new SandgateError('POLICY_BLOCKED', 'my own policy says no'); },",
          "  async roomToRecord() {},",
          "  async recordRun(verdict, ms, result, error) { seen.push(`record ${result?.status ?? error?.code}`); },",
          "};",
          "const engine = Engine.create(config, { pool: { python: 0, javascript: 0, bash: 0 }, hooks: { runs } });",
          "const ok = await engine.execute({ language: 'python', code: 'print(6 * 7)' });",
          "console.log(ok.stdout.trim());",
          "try { await engine.execute({ language: 'python', code: 'open(\"/tmp/ran\", \"w\") # forbidden' }); console.log('ran'); } catch (e) { console.log(e.code, e.message); }",
          "console.log(seen.join(', '));",
          "await engine.close();",
        ].join("\n"),
      );
      expect(run.stderr).toBe("");
      expect(run.stdout.trim().split("\n")).toEqual(["42", "POLICY_BLOCKED my own policy says no", "judge python, admit, record ok, judge python, admit"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("lets sandboxed code of an engine built with `tools: codeMode` search the tools and list the servers (none configured: empty)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandgate-public-codemode-"));
    try {
      const run = await runModule(
        [
          'import { CodeMode, Engine, loadConfig } from "sandgate";',
          `const config = loadConfig({ SANDBOX_DIR: ${JSON.stringify(dir)} });`,
          "const codeMode = new CodeMode(config);",
          "await codeMode.start();",
          "const engine = Engine.create(config, { tools: codeMode, pool: { python: 0, javascript: 0, bash: 0 } });",
          "const r = await engine.execute({ language: 'python', code: 'print(await search_tools(\"create issue\"), await list_servers())' });",
          "console.log(r.status, r.stdout.trim(), r.error?.message ?? '');",
          "await engine.close(); await codeMode.close();",
        ].join("\n"),
      );
      expect(run.stderr).toBe("");
      expect(run.stdout.trim()).toBe("ok [] []");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps its command working: the bin file runs and reports the package version", async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string; bin: Record<string, string> };
    const bin = join(ROOT, pkg.bin.sandgate!);
    expect(readFileSync(bin, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    const version = await new Promise<string>((done) => {
      execFile(process.execPath, [bin, "--version"], { cwd: ROOT }, (error, stdout, stderr) => done(error ? `failed: ${stderr}` : stdout.trim()));
    });
    expect(version).toBe(pkg.version);
  });
});
