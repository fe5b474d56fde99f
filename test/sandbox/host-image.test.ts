// The host image inside real sandboxes: what a program finds under /usr works (alternatives,
// shared libraries, CA certificates, zones, fonts, /usr/local), and nothing secret or writable comes
// with it (/usr/local/etc and /usr/etc, where an npmrc or pip.conf may hold tokens, are empty).

import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { hostEtcImage } from "../../src/sandbox/host-etc-image.js";
import { HOST_ETC_ENTRIES, HOST_ETC_NEVER } from "../../src/sandbox/host-image.js";
import { createTestEngine, useTestEngine, waitFor } from "../helpers.js";

const t = useTestEngine({}, { python: 1, javascript: 0, bash: 1 });

// The steady state: /etc is the one-mount copy of the host image, made in the background.
beforeAll(async () => {
  await waitFor(() => hostEtcImage(t.engine.runtime.etcDir) !== undefined, 60_000);
  // Sandboxes the pool made before the copy was ready are replaced by ones that use it.
  await t.engine.execute({ code: "true", language: "bash" });
  await t.engine.execute({ code: "1", language: "python" });
}, 90_000);

const bash = (code: string) => t.engine.execute({ code, language: "bash" });
const py = (code: string) => t.engine.execute({ code, language: "python" });

/** True when a host command resolves to something executable on the host (alternatives included). */
function onHost(path: string): boolean {
  try {
    realpathSync(path);
    return true;
  } catch {
    return false;
  }
}

function hostPythonImports(modules: string): boolean {
  try {
    execFileSync("/usr/bin/python3", ["-c", `import ${modules}`], { stdio: "ignore", env: { PATH: "/usr/bin:/bin", MPLBACKEND: "Agg" } });
    return true;
  } catch {
    return false;
  }
}

/** What Python inside a sandbox sees of /usr/local: listings (or the error's name), whether a write got through, its PATH. */
interface UsrLocalSeen {
  bin: string[] | string;
  etc: string[] | string;
  write: string;
  path: string[];
}

async function usrLocal(): Promise<UsrLocalSeen> {
  const r = await py(`
import os, json
def ls(p):
    try: return sorted(os.listdir(p))
    except OSError as e: return type(e).__name__
try:
    open("/usr/local/bin/pwned", "w"); w = "WROTE"
except OSError as e:
    w = type(e).__name__
json.dumps({"bin": ls("/usr/local/bin"), "etc": ls("/usr/local/etc"), "write": w, "path": os.environ["PATH"].split(":")})
`);
  expect(r.status, r.stderr).toBe("ok");
  return JSON.parse(String(r.value)) as UsrLocalSeen;
}

function hostLocaltimeIsLink(): boolean {
  try {
    return lstatSync("/etc/localtime").isSymbolicLink();
  } catch {
    return false;
  }
}

/** The time zone as Python inside a sandbox knows it: by name, by the /etc/localtime link (or the error's name), from /etc/timezone. */
async function timeZone(): Promise<{ tzname: string; link: string; name: string | null; paris: string }> {
  const r = await py(`
import os, time, zoneinfo
def read(p):
    try: return open(p).read().strip()
    except OSError: return None
def link(p):
    try: return os.readlink(p)
    except OSError as e: return type(e).__name__
[time.tzname[0], link("/etc/localtime"), read("/etc/timezone"), str(zoneinfo.ZoneInfo("Europe/Paris"))]
`);
  expect(r.status, r.stderr).toBe("ok");
  const [tzname, link, name, paris] = r.value as [string, string, string | null, string];
  return { tzname, link, name, paris };
}

describe("programs under /usr", () => {
  it("runs awk and which, which resolve through /etc/alternatives", async () => {
    const r = await bash("awk 'BEGIN { print 6 * 7 }'; which sh; readlink /usr/bin/awk");
    expect(r.stderr).toBe("");
    expect(r.status).toBe("ok");
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe("42");
    expect(lines[1]).toMatch(/\/sh$/);
  });

  it.runIf(onHost("/usr/bin/cc"))("runs the host's C compiler and builds a program with it", async () => {
    const r = await bash("cc --version | head -1 && printf 'int main(void){return 7;}' > m.c && cc -o /tmp/m m.c && /tmp/m; echo \"exit $?\"");
    expect(r.stderr).not.toContain("not found");
    expect(r.stdout).toContain("exit 7");
  });

  it.runIf(onHost("/usr/bin/vi"))("runs vi, which is an alternative", async () => {
    const r = await bash("vi --version | head -1");
    expect(r.status).toBe("ok");
    expect(r.stdout).toMatch(/vi|vim|nvi/i);
  });

  it.runIf(onHost("/usr/bin/nodejs"))("runs nodejs, which is an alternative", async () => {
    const r = await bash("nodejs --version");
    expect(r.stdout.trim()).toBe(execFileSync("/usr/bin/nodejs", ["--version"], { encoding: "utf8" }).trim());
  });

  it("sees the dynamic linker's configuration", async () => {
    const r = await bash("/usr/sbin/ldconfig -p | head -1; cat /etc/ld.so.conf");
    expect(r.stdout).toMatch(/libs found in cache/);
    expect(r.stdout).toContain(readFileSync("/etc/ld.so.conf", "utf8").trim());
  });

  it("sees /usr/local read-only, found before /usr/bin on PATH as on the host", async () => {
    const seen = await usrLocal();
    expect(seen.path.indexOf("/usr/local/bin")).toBeGreaterThanOrEqual(0);
    expect(seen.path.indexOf("/usr/local/bin")).toBeLessThan(seen.path.indexOf("/usr/bin"));
    expect(seen.write).not.toBe("WROTE");
  });

  it.runIf(existsSync("/usr/local/bin"))("sees the programs of the host's /usr/local/bin", async () => {
    const hostBin = readdirSync("/usr/local/bin").sort();
    expect((await usrLocal()).bin).toEqual(hostBin);
  });

  // An npmrc or pip.conf there may hold registry tokens.
  it.runIf(existsSync("/usr/local/etc"))("sees the host's /usr/local/etc as an empty directory", async () => {
    expect((await usrLocal()).etc).toEqual([]);
  });

  // /usr/etc holds npm's global npmrc when Node's prefix is /usr, which may hold registry tokens.
  it.runIf(existsSync("/usr/etc") && readdirSync("/usr/etc").length > 0)("sees the host's /usr/etc as an empty read-only directory while the rest of /usr stays visible", async () => {
    const result = await t.engine.executeCommand({
      command: "ls -A /usr/etc | wc -l; touch /usr/etc/x 2>/dev/null && echo writable || echo read-only; ls /usr/bin/env >/dev/null && echo usr-visible",
      timeoutS: 15,
    });
    expect(result.stdout.trim().split("\n")).toEqual(["0", "read-only", "usr-visible"]);
  });
});

describe("Python's data stack and the host's data", () => {
  it.runIf(hostPythonImports("numpy, pandas, matplotlib"))("imports numpy, pandas and matplotlib and saves a figure with Agg", async () => {
    const r = await py(`
import matplotlib
matplotlib.use("Agg")
import numpy as np, pandas as pd
import matplotlib.pyplot as plt
df = pd.DataFrame({"x": np.arange(5), "y": np.arange(5) ** 2})
fig, ax = plt.subplots()
ax.plot(df.x, df.y)
fig.savefig("/workspace/plot.png")
plt.close(fig)
[open("/workspace/plot.png", "rb").read(8).hex(), float(np.linalg.inv(np.eye(2) * 2)[0, 0])]
`);
    expect(r.error?.message ?? "").toBe("");
    expect(r.status).toBe("ok");
    expect(r.value).toEqual(["89504e470d0a1a0a", 0.5]);
  });

  it("loads the host's CA certificates in a default TLS context", async () => {
    const r = await py(`
import ssl
ssl.create_default_context().cert_store_stats()["x509_ca"]
`);
    expect(r.status).toBe("ok");
    expect(r.value).toBeGreaterThan(0);
  });

  it("knows the host's time zone and the zone database", async () => {
    const zone = await timeZone();
    expect(zone.tzname).toBe(execFileSync("/usr/bin/python3", ["-c", "import time; print(time.tzname[0])"], { encoding: "utf8" }).trim());
    expect(zone.paris).toBe("Europe/Paris");
  });

  it.runIf(hostLocaltimeIsLink())("finds /etc/localtime linked to the host's zone file", async () => {
    expect((await timeZone()).link).toBe(readlinkSync("/etc/localtime"));
  });

  it.runIf(existsSync("/etc/timezone"))("reads the host's time zone name from /etc/timezone", async () => {
    expect((await timeZone()).name).toBe(readFileSync("/etc/timezone", "utf8").trim());
  });

  it("has the host's locale aliases, fonts configuration and MIME types", async () => {
    const r = await py(`
import locale, mimetypes, os
locale.setlocale(locale.LC_ALL, "C.UTF-8")
[os.path.exists(p) for p in ["/etc/locale.alias", "/etc/fonts/fonts.conf", "/etc/mime.types"]] + [mimetypes.guess_type("x.parquet")[0] or ""]
`);
    expect(r.status).toBe("ok");
    const [alias, fonts, mime] = r.value as boolean[];
    expect(alias).toBe(existsSync("/etc/locale.alias"));
    expect(fonts).toBe(existsSync("/etc/fonts/fonts.conf"));
    expect(mime).toBe(existsSync("/etc/mime.types"));
  });
});

describe("nothing secret, nothing writable", () => {
  const allowed = new Set(["passwd", "group", "hosts", "hostname"]);
  for (const entry of HOST_ETC_ENTRIES) {
    if (typeof entry.path === "string") allowed.add(entry.path.split("/")[2] ?? "");
    else for (const name of readdirSync("/etc")) if (entry.path.test(name)) allowed.add(name);
  }

  const synthetic = ["/etc/passwd", "/etc/group", "/etc/hosts", "/etc/hostname"];
  const never = [...HOST_ETC_NEVER.map((entry) => String(entry.path)).filter((path) => !synthetic.includes(path)), "/usr/lib/ssl/private/."];

  it("shows only the table's entries and the synthetic files in /etc, never shadow, keys or credentials", async () => {
    const r = await py(`
import os, json
json.dumps({"etc": sorted(os.listdir("/etc")), "ssl": sorted(os.listdir("/etc/ssl")) if os.path.isdir("/etc/ssl") else [],
  "present": [p for p in ${JSON.stringify(never)} if os.path.lexists(p)]})
`);
    const seen = JSON.parse(String(r.value)) as { etc: string[]; ssl: string[]; present: string[] };
    expect(seen.present).toEqual([]);
    expect(seen.etc.filter((name) => !allowed.has(name))).toEqual([]);
    expect(seen.ssl).not.toContain("private");
  });

  it("keeps the synthetic passwd, group and hosts instead of the host's", async () => {
    const r = await bash("cat /etc/passwd; echo ---; cat /etc/group; echo ---; cat /etc/hosts; echo ---; id -un");
    const [passwd, group, hosts, me] = r.stdout.split("---\n");
    expect(passwd).not.toBe(readFileSync("/etc/passwd", "utf8"));
    expect(group).not.toBe(readFileSync("/etc/group", "utf8"));
    expect(hosts).not.toBe(readFileSync("/etc/hosts", "utf8"));
    expect(passwd?.split("\n").filter(Boolean).length).toBeLessThanOrEqual(3);
    expect(me?.trim()).not.toBe("");
  });

  it("cannot write to /etc or to any mounted host entry", async () => {
    const r = await bash(
      "for p in /etc/pwned /etc/alternatives/awk /etc/ssl/certs/pwned.pem /etc/fonts/pwned /etc/ld.so.cache; do " +
        "if ( : > \"$p\" ) 2>/dev/null; then echo \"WROTE $p\"; fi; done; " +
        "ln -sf /tmp/evil /etc/alternatives/awk 2>/dev/null && echo RELINKED; awk 'BEGIN { print \"awk ok\" }'",
    );
    expect(r.stdout).not.toContain("WROTE");
    expect(r.stdout).not.toContain("RELINKED");
    expect(r.stdout).toContain("awk ok");
  });
});

describe("few mounts for /etc", () => {
  it("once the copy is ready, a sandbox's /etc is one read-only mount plus the table's live binds, so starts stay as fast", async () => {
    const r = await bash("awk '$5 == \"/etc\" || index($5, \"/etc/\") == 1 { print $5, $6 }' /proc/self/mountinfo");
    const mounts = r.stdout.trim().split("\n").map((line) => line.split(" "));
    const binds = HOST_ETC_ENTRIES.flatMap((entry) => (entry.bind && typeof entry.path === "string" && existsSync(entry.path) ? [entry.path] : []));
    expect(mounts.map(([point]) => point).sort()).toEqual(["/etc", ...binds].sort());
    for (const [, options] of mounts) expect(options).toMatch(/^ro(,|$)/);
  });
});

describe("a change to the host's /etc", () => {
  it.runIf(process.getuid?.() === 0 && existsSync("/etc/fonts"))(
    "shows in later sandboxes within seconds, and a file only root may read is never copied",
    async () => {
      const name = `sandgate-test-${process.pid}`;
      const open = `/etc/fonts/${name}.txt`;
      const secret = `/etc/fonts/${name}-secret.txt`;
      const look = `for f in ${open} ${secret}; do if [ -e "$f" ]; then echo "$f: $(cat "$f" 2>&1)"; else echo "$f: absent"; fi; done`;
      try {
        writeFileSync(open, "public\n", { mode: 0o644 });
        writeFileSync(secret, "s3cr3t\n", { mode: 0o600 });
        chmodSync(secret, 0o600);
        let seen = (await bash(look)).stdout;
        for (let tries = 0; tries < 150 && !seen.includes(`${open}: public`); tries++) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          seen = (await bash(look)).stdout;
        }
        expect(seen).toContain(`${open}: public`);
        expect(seen).toContain(`${secret}: absent`);
        expect(seen).not.toContain("s3cr3t");
      } finally {
        rmSync(open, { force: true });
        rmSync(secret, { force: true });
      }
      // And its removal shows as well (later tests compare this engine's /etc with a fresh one's).
      let after = (await bash(look)).stdout;
      for (let tries = 0; tries < 150 && after.includes(`${open}: public`); tries++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        after = (await bash(look)).stdout;
      }
      expect(after).toBe(`${open}: absent\n${secret}: absent\n`);
    },
    60_000,
  );
});

describe("a copy of /etc removed by hand", () => {
  it("is made again, and sandboxes keep starting meanwhile", async () => {
    const fresh = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
    try {
      const etcDir = fresh.engine.runtime.etcDir;
      await fresh.engine.execute({ code: "true", language: "bash" });
      expect(await waitFor(() => hostEtcImage(etcDir) !== undefined, 60_000)).toBe(true);
      const copy = hostEtcImage(etcDir)?.dir ?? "";
      rmSync(copy, { recursive: true, force: true });
      const meanwhile = await fresh.engine.execute({ code: "cat /etc/hostname; awk 'BEGIN { print \"awk ok\" }'", language: "bash" });
      expect(meanwhile.stdout).toBe("sandgate\nawk ok\n");
      expect(await waitFor(() => existsSync(hostEtcImage(etcDir)?.dir ?? "/nonexistent"), 60_000)).toBe(true);
      const after = await fresh.engine.execute({ code: "cat /etc/hostname; ls -A /etc/alternatives | grep -c .", language: "bash" });
      expect(after.stdout).toBe(`sandgate\n${readdirSync("/etc/alternatives").length}\n`);
    } finally {
      await fresh.close();
    }
  });
});

describe("before the copy of /etc is ready", () => {
  const listing =
    "ls -A /etc /etc/ssl /etc/alternatives /etc/fonts | md5sum; readlink /etc/localtime /etc/alternatives/awk; " +
    "cat /etc/passwd /etc/hosts /etc/ld.so.conf /etc/ssl/certs/ca-certificates.crt 2>&1 | md5sum; awk 'BEGIN { print \"awk ok\" }'";

  it("the first sandboxes see the same /etc, bound entry by entry", async () => {
    const fresh = createTestEngine({}, { python: 0, javascript: 0, bash: 0 });
    try {
      const first = await fresh.engine.execute({ code: listing, language: "bash" });
      const steady = await t.engine.execute({ code: listing, language: "bash" });
      expect(first.stdout).toContain("awk ok");
      expect(first.stdout).toBe(steady.stdout);
    } finally {
      await fresh.close();
    }
  });
});
