// The JavaScript/TypeScript rules on file calls: credential reads, writes to start-up files, accounts and system
// directories, recursive deletes of the root, home or system directories, and world-writable or setuid modes.

import { isCredentialPath, isPersistencePath, isPrivilegePath, isRootOrHome, isSystemPath } from "./javascript-patterns.js";
import { READ_FILE, type Call, type Program } from "./javascript-program.js";

const WRITE_FILE = new Set([
  "fs.writeFileSync", "fs.writeFile", "fs.appendFileSync", "fs.appendFile", "fs.createWriteStream", "fs.symlinkSync", "fs.symlink",
  "fs-extra.outputFile", "fs-extra.outputFileSync", "fs-extra.writeFile", "fs-extra.writeFileSync", "Bun.write", "Deno.writeTextFile",
]);
const COPY_FILE = new Set(["fs.copyFileSync", "fs.copyFile", "fs.cpSync", "fs.cp", "fs.renameSync", "fs.rename", "fs-extra.copy", "fs-extra.copySync", "fs-extra.move"]);
const REMOVE = new Set(["fs.rmSync", "fs.rm", "fs.rmdirSync", "fs.rmdir"]);
const REMOVE_ALWAYS_RECURSIVE = new Set(["rimraf", "rimraf.sync", "rimraf.rimraf", "rimraf.rimrafSync", "fs-extra.remove", "fs-extra.removeSync", "fs-extra.emptyDir", "fs-extra.emptyDirSync", "del", "del.sync", "del.deleteAsync"]);
const UNLINK = new Set(["fs.unlinkSync", "fs.unlink", "fs.truncateSync", "fs.truncate"]);
const CHMOD = new Set(["fs.chmodSync", "fs.chmod", "fs.lchmodSync", "fs.lchmod", "fs.fchmodSync", "fs.fchmod"]);

/** Runs the file rule for `call` and says whether it was a file call. */
export function checkFileCall(program: Program, call: Call): boolean {
  const { name } = call;
  if (READ_FILE.has(name)) readFile(program, call);
  else if (WRITE_FILE.has(name) || COPY_FILE.has(name)) writeFile(program, call);
  else if (REMOVE.has(name) || REMOVE_ALWAYS_RECURSIVE.has(name) || UNLINK.has(name)) remove(program, call);
  else if (CHMOD.has(name)) chmod(program, call);
  else return false;
  return true;
}

function readFile(program: Program, call: Call): void {
  const path = program.pathOf(call.args[0] ?? null);
  if (!isCredentialPath(path)) {
    if (path.includes("*")) computedPath(program, call, "reads");
    return;
  }
  program.strongSecret ??= "file";
  program.add(call.node, "read-credentials", "exfiltration", "high", `${call.name} reads ${path} (credentials or keys)`, "Do not read credential files from sandboxed code; pass the secret the tool needs explicitly.");
}

function writeFile(program: Program, call: Call): void {
  const { node, name, args } = call;
  const target = COPY_FILE.has(name) ? args[1] : args[0];
  const path = program.pathOf(target ?? null);
  if (isPersistencePath(path))
    program.add(node, "persistence-write", "persistence", "critical", `${name} writes ${path}, which runs code at login, on schedule or grants ssh access`, "Do not change start-up files, cron tables or ssh keys.");
  else if (isPrivilegePath(path))
    program.add(node, "account-write", "privilege", "critical", `${name} writes ${path} (accounts or sudo rules)`, "Never change system accounts from code.");
  else if (isSystemPath(path) && path !== "*" && path.startsWith("/"))
    program.add(node, "system-write", "filesystem", "high", `${name} writes into the system directory ${path}`, "Write under /workspace or /tmp.");
  else if (path.includes("*")) computedPath(program, call, "writes");
}

/** A path from a variable can be steered outside the working directory (../, absolute paths). */
function computedPath(program: Program, call: Call, verb: string): void {
  program.add(call.node, "computed-path", "filesystem", "info", `${call.name} ${verb} a path computed at run time`, "Resolve the path and check it stays under /workspace before using it.");
}

function remove(program: Program, call: Call): void {
  const { node, name, args } = call;
  const recursive = REMOVE_ALWAYS_RECURSIVE.has(name) || /recursive\s*:\s*true/.test(args[1]?.text ?? "");
  const path = program.pathOf(args[0] ?? null);
  if (UNLINK.has(name)) {
    if (isCredentialPath(path) || isPrivilegePath(path) || (isSystemPath(path) && path.startsWith("/etc")))
      program.add(node, "system-delete", "filesystem", "high", `${name} deletes or truncates ${path}`, "Delete only files your program created under /workspace.");
    return;
  }
  if (!recursive) return;
  if (isRootOrHome(path) || /^(~|\/home\/\*|\/root)\/?\*?$/.test(path))
    program.add(node, "rm-rf-root", "filesystem", "critical", `${name} deletes ${path} recursively`, "Delete only paths under /workspace that your program created.");
  else if (isSystemPath(path) && path.startsWith("/"))
    program.add(node, "rm-rf-system", "filesystem", "high", `${name} deletes inside the system directory ${path} recursively`, "Delete only paths under /workspace.");
  else if (path.includes("*"))
    program.add(node, "rm-rf-variable", "filesystem", "medium", `${name} deletes a computed path recursively`, "Check the path is inside your working directory before deleting.");
}

function chmod(program: Program, call: Call): void {
  const { node, name, args } = call;
  const raw = program.scope.fold(args[1] ?? null);
  if (raw === undefined) return;
  const mode = /^[0-7]{3,4}$/.test(raw) && args[1]?.type !== "number" ? parseInt(raw, 8) : Number(raw);
  if (!Number.isInteger(mode)) return;
  if (mode & 0o6000) program.add(node, "setuid-bit", "privilege", "high", `${name} sets setuid/setgid bits (mode ${mode.toString(8)})`, "Never set setuid bits from code.");
  if (mode & 0o002) program.add(node, "world-writable", "filesystem", "high", `${name} makes a file world-writable (mode ${mode.toString(8)})`, "Use 0o644 for files and 0o755 for programs.");
  if (mode & 0o111) program.dynamicRuns.push(node);
}
