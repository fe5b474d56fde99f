// `npm test`'s checks before the suite: the type check, the linter and the build, run side by
// side (together they keep two cores busy; one after another they left one idle). Each one's
// output is printed whole when it ends, under its name; the exit status is the first failure's.
import { spawn } from "node:child_process";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const CHECKS = ["typecheck", "lint", "build"];

function run(script) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(npm, ["run", "--silent", script], { stdio: ["ignore", "pipe", "pipe"] });
    const chunks = [];
    child.stdout.on("data", (chunk) => chunks.push(chunk));
    child.stderr.on("data", (chunk) => chunks.push(chunk));
    child.on("close", (code, signal) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const output = Buffer.concat(chunks).toString("utf8");
      const status = code === 0 ? "ok" : `failed (${signal ?? `exit ${code}`})`;
      process.stdout.write(`> ${script}: ${status} in ${seconds} s\n${output}${output && !output.endsWith("\n") ? "\n" : ""}`);
      resolve(code === 0 ? 0 : (code ?? 1));
    });
  });
}

const codes = await Promise.all(CHECKS.map(run));
process.exitCode = codes.find((code) => code !== 0) ?? 0;
