import { describe, expect, it } from "vitest";
import { Analyzer, SEVERITIES, type Analysis, type Severity } from "../../src/features/governance/index.js";
import { BENIGN } from "../fixtures/analysis/python/benign.js";
import { MALICIOUS } from "../fixtures/analysis/python/malicious.js";

const analyzer = new Analyzer();
const py = (code: string): Promise<Analysis> => analyzer.analyze("python", code);
const atLeast = (severity: Severity, min: Severity): boolean => SEVERITIES.indexOf(severity) >= SEVERITIES.indexOf(min);

describe("python analysis finds malicious and insecure code", () => {
  it("has a corpus of at least 60 cases covering every Python category", () => {
    expect(MALICIOUS.length).toBeGreaterThanOrEqual(60);
    const categories = new Set(MALICIOUS.map((m) => m.expect.category));
    for (const category of ["code-exec", "process-exec", "deserialization", "reverse-shell", "download-exec", "exfiltration", "obfuscation", "network", "filesystem", "resource-abuse", "persistence", "privilege"]) {
      expect(categories, category).toContain(category);
    }
  });

  for (const m of MALICIOUS) {
    it(`${m.name}: ${m.expect.category} at ${m.expect.minSeverity} or more`, async () => {
      const { findings } = await py(m.code);
      const hit = findings.find((f) => f.category === m.expect.category && atLeast(f.severity, m.expect.minSeverity));
      expect(hit, JSON.stringify(findings.map((f) => `${f.severity} ${f.ruleId}`))).toBeDefined();
    });
  }
});

describe("python analysis stays quiet on benign programs", () => {
  it("gives a high or critical finding to at most 1 of at least 150 benign programs", async () => {
    expect(BENIGN.length).toBeGreaterThanOrEqual(150);
    const alarms: string[] = [];
    for (const program of BENIGN) {
      const { findings } = await py(program.code);
      const loud = findings.filter((f) => atLeast(f.severity, "high"));
      if (loud.length > 0) alarms.push(`${program.name}: ${loud.map((f) => `${f.ruleId} line ${f.line}`).join(", ")}`);
    }
    if (alarms.length > 0) process.stderr.write(`benign programs with high/critical findings:\n${alarms.join("\n")}\n`);
    expect(alarms.length).toBeLessThanOrEqual(1);
  });

  it("scores a typical data-processing program low", async () => {
    const program = BENIGN.find((p) => p.name.includes("pandas csv summary"));
    expect(program).toBeDefined();
    const analysis = await py(program?.code ?? "");
    expect(analysis.risk).toBeLessThan(30);
    expect(["none", "low"]).toContain(analysis.level);
  });
});

describe("python analysis follows names", () => {
  it("sees os.system through an import alias, a from-import alias and a star import", async () => {
    for (const code of ["import os as o\no.system(cmd)\n", "from os import system as run_it\nrun_it(cmd)\n", "from os import *\nsystem(cmd)\n"]) {
      const { findings } = await py(code);
      expect(findings.map((f) => f.ruleId), code).toContain("py.process-exec.shell-built");
    }
  });

  it("resolves names built from strings, char codes and base64 to the builtins they reach", async () => {
    const { findings } = await py(`import base64\nf = getattr(__import__(base64.b64decode("YnVpbHRpbnM=").decode()), "".join(map(chr, [101, 120, 101, 99])))\nf(data)\n`);
    expect(findings.some((f) => f.category === "obfuscation" && atLeast(f.severity, "high"))).toBe(true);
    expect(findings.some((f) => f.ruleId === "py.code-exec.exec-dynamic")).toBe(true);
  });

  it("does not mistake a user's own compile or a regex compile for the builtin", async () => {
    const { findings } = await py(`import re\ndef compile(rules):\n    return [re.compile(r) for r in rules]\ncompile(user_rules)\n`);
    expect(findings.filter((f) => f.category === "code-exec")).toEqual([]);
  });

  it("treats yaml.load with SafeLoader as safe and without it as unsafe", async () => {
    expect((await py("import yaml\nyaml.load(s, Loader=yaml.SafeLoader)\n")).findings).toEqual([]);
    expect((await py("import yaml\nyaml.load(s)\n")).findings[0]?.category).toBe("deserialization");
  });
});

describe("python findings", () => {
  it("point at the right line, end line and column", async () => {
    const { findings } = await py(`import subprocess\n\nx = 1\nif x:\n    subprocess.run(\n        f"echo {x}",\n        shell=True,\n    )\n`);
    const hit = findings.find((f) => f.ruleId === "py.process-exec.shell-built");
    expect(hit).toMatchObject({ line: 5, endLine: 8, column: 5 });
    expect(hit?.message).toContain("subprocess.run");
    expect(hit?.recommendation.length).toBeGreaterThan(10);
  });

  it("carry rule ids of the form py.<category>.<name>", async () => {
    for (const m of MALICIOUS.slice(0, 20)) {
      for (const f of (await py(m.code)).findings) expect(f.ruleId).toMatch(new RegExp(`^py\\.${f.category}\\.[a-z0-9_-]+$`));
    }
  });

  const table: [string, string, string, Severity][] = [
    ["eval of a literal", `eval("1 + 2")\n`, "py.code-exec.eval-literal", "low"],
    ["eval of a variable", `eval(x)\n`, "py.code-exec.eval-dynamic", "high"],
    ["subprocess of a literal harmless program", `import subprocess\nsubprocess.run(["date"])\n`, "py.process-exec.process-literal", "low"],
    ["subprocess of a literal program", `import subprocess\nsubprocess.run(["nmap", "host"])\n`, "py.process-exec.process-literal", "medium"],
    ["shell=True with a built command", `import subprocess\nsubprocess.call("ls " + d, shell=True)\n`, "py.process-exec.shell-built", "high"],
    ["exec of base64", `import base64\nexec(base64.b64decode(p))\n`, "py.obfuscation.exec-decoded", "critical"],
    ["plain HTTP client", `import requests\nrequests.get("https://example.com")\n`, "py.network.http-client", "low"],
    ["TLS verification off", `import requests\nrequests.get(u, verify=False)\n`, "py.network.tls-verify-off", "high"],
    ["chmod 0o777", `import os\nos.chmod(p, 0o777)\n`, "py.filesystem.world-writable", "high"],
    ["rmtree of a variable", `import shutil\nshutil.rmtree(d)\n`, "py.filesystem.rmtree-variable", "medium"],
    ["rmtree of /", `import shutil\nshutil.rmtree("/")\n`, "py.filesystem.rmtree-root", "critical"],
    ["pickle.loads", `import pickle\npickle.loads(b)\n`, "py.deserialization.pickle-loads", "high"],
    ["fork in an endless loop", `import os\nwhile True:\n    os.fork()\n`, "py.resource-abuse.fork-bomb", "critical"],
  ];
  for (const [name, code, ruleId, severity] of table) {
    it(`rates ${name} ${severity}`, async () => {
      const hit = (await py(code)).findings.find((f) => f.ruleId === ruleId);
      expect(hit?.severity).toBe(severity);
    });
  }
});

describe("python analysis on hard input", () => {
  it("analyses code with syntax errors without throwing and still finds what parses", async () => {
    const analysis = await py(`import os\ndef broken(:\n    pass\nos.system(cmd)\nprint "py2 style"\nx = [1, 2\n`);
    expect(analysis.metrics.parseErrors).toBeGreaterThan(0);
    expect(analysis.findings.some((f) => f.category === "process-exec")).toBe(true);
  });

  it("accepts top-level await as sandgate Python does", async () => {
    const analysis = await py(`import asyncio\nawait asyncio.sleep(0)\nproc = await asyncio.create_subprocess_shell(cmd)\n`);
    expect(analysis.metrics.parseErrors).toBe(0);
    expect(analysis.findings.some((f) => f.ruleId === "py.process-exec.shell-built")).toBe(true);
  });

  it("finishes a 200 KB program and counts its metrics", async () => {
    const unit = BENIGN.map((p) => p.code).join("\n");
    let code = "";
    while (code.length < 200_000) code += unit + "\n";
    const analysis = await py(code);
    expect(analysis.metrics.bytes).toBeGreaterThanOrEqual(200_000);
    expect(analysis.metrics.functions).toBeGreaterThan(100);
    expect(analysis.metrics.calls).toBeGreaterThan(1000);
    expect(analysis.metrics.imports).toBeGreaterThan(100);
    expect(analysis.metrics.cyclomatic).toBeGreaterThan(100);
  });

  it("survives a 100 000-byte char-code payload and out-of-range escapes", async () => {
    const codes = Array.from({ length: 100_000 }, (_, i) => 97 + (i % 26)).join(", ");
    const { findings } = await py(`exec(bytes([${codes}]).decode())\ns = "\\UFFFFFFFF"\n`);
    expect(findings.some((f) => f.ruleId === "py.obfuscation.exec-decoded")).toBe(true);
  });

  it("survives a 30 000-term string concatenation without overflowing the stack", async () => {
    const chain = Array.from({ length: 30_000 }, (_, i) => `"${String.fromCharCode(97 + (i % 26))}"`).join(" + ");
    const analysis = await py(`import os\ncmd = ${chain}\nos.system(cmd)\n`);
    expect(analysis.findings.some((f) => f.category === "process-exec")).toBe(true);
  });

  it("survives deeply nested expressions and empty input", async () => {
    expect((await py("")).findings).toEqual([]);
    const deep = `x = ${"(".repeat(300)}1${")".repeat(300)}\neval(${"str(".repeat(200)}y${")".repeat(200)})\n`;
    expect((await py(deep)).findings.some((f) => f.ruleId === "py.code-exec.eval-dynamic")).toBe(true);
  });
});
