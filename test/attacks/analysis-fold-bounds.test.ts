// Programs of a few hundred bytes that make the analysis fold strings of gigabytes (doubling, replace,
// templates, join, then a reversal) end quickly as a failed, critical analysis instead of killing the process.

import { describe, expect, it } from "vitest";
import { Analyzer } from "../../src/features/governance/index.js";
import { FOLD_BOMBS as ATTACKS, WORK_BOMB } from "../fixtures/fold-bombs.js";

const analyzer = new Analyzer();
describe("the analysis of code that folds huge strings", () => {
  for (const attack of ATTACKS) {
    it(`finishes within seconds with a blocking finding for a ${attack.code.length}-byte program: ${attack.name}`, async () => {
      const started = performance.now();
      const analysis = await analyzer.analyze(attack.language, attack.code);
      // Today's code aborts the process (heap out of memory) or holds it for tens of seconds.
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(analysis.level === "high" || analysis.level === "critical", JSON.stringify(analysis.findings.map((f) => f.ruleId))).toBe(true);
      if (attack.folds) expect(analysis.findings.map((f) => f.ruleId)).toEqual(["analysis.failed"]);
    });
  }

  it("refuses a doubling past the bound as a critical analysis.failed finding that names why", async () => {
    const analysis = await analyzer.analyze("python", ATTACKS[0]?.code ?? "");
    expect(analysis.level).toBe("critical");
    expect(analysis.findings).toEqual([expect.objectContaining({ ruleId: "analysis.failed", severity: "critical", message: expect.stringMatching(/longer than 65536 characters/) })]);
  });

  it("refuses many folds that together build more than the work bound, each under the string bound", async () => {
    const analysis = await analyzer.analyze("python", WORK_BOMB);
    expect(analysis.findings).toEqual([expect.objectContaining({ ruleId: "analysis.failed", message: expect.stringMatching(/add up to more than/) })]);
  });

  it("still folds strings built from the program's own pieces, however long the program", async () => {
    const piece = "x".repeat(40_000);
    const analysis = await analyzer.analyze("python", `a = "${piece}"\nb = "${piece}"\nc = a + b + "__import__('os').system('id')"\nexec(c)\n`);
    expect(analysis.findings.map((f) => f.ruleId)).toContain("py.obfuscation.exec-built-string");
    expect(analysis.findings.map((f) => f.ruleId)).not.toContain("analysis.failed");
  });

  it("still folds short hidden payloads: a reversed string that runs os.system", async () => {
    const analysis = await analyzer.analyze("python", `p = ")'di'(metsys.)'so'(__tropmi__"\nexec(p[::-1])\n`);
    expect(analysis.findings.map((f) => f.ruleId)).toContain("py.obfuscation.exec-built-string");
    expect(analysis.findings.map((f) => f.ruleId)).not.toContain("analysis.failed");
  });
});
