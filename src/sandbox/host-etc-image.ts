// A sandbox's whole /etc as one read-only directory: a copy of the host image's entries (see
// host-image.ts) and the synthetic passwd, group, hosts and hostname, plus a few live binds.

import { createHash, type Hash } from "node:crypto";
import { constants, existsSync, lstatSync, readdirSync, rmSync } from "node:fs";
import { chmod, lstat, mkdir, open, readdir, readFile, readlink, rename, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { hostImagePlan, type HostImagePlan } from "./host-image.js";

/** The synthetic files the runtime writes (runtime.ts), copied in last. */
export const SYNTHETIC_ETC_FILES = ["passwd", "group", "hosts", "hostname"] as const;

/** A copy larger than this is not made; sandboxes then get the entries bound one by one. */
const MAX_BYTES = 64 * 1024 * 1024;
const MAX_ENTRIES = 20_000;
const MAX_DEPTH = 8;
/** How often the host's /etc is looked at again for changes. */
const RECHECK_MS = 1000;

/** A ready copy: bind `dir` read-only at /etc, then each of `binds` at its own path. */
export interface EtcImage {
  dir: string;
  binds: string[];
}

interface Image {
  ready: EtcImage | undefined;
  /** mtimes of everything whose change calls for a new copy: /etc, the entries, their directories. */
  signature: string;
  watched: string[];
  checkedAt: number;
  /** A copy is being made. */
  building: boolean;
}

const images = new Map<string, Image>();

class TooLarge extends Error {}

interface Copy {
  hash: Hash;
  bytes: number;
  entries: number;
  dirs: string[];
}

async function copyTree(source: string, target: string, relative: string, copy: Copy, depth: number): Promise<void> {
  const st = await lstat(source);
  if (++copy.entries > MAX_ENTRIES || depth > MAX_DEPTH) throw new TooLarge();
  if (st.isSymbolicLink()) {
    // A link inside an entry resolves inside the sandbox, where only the image and /usr exist.
    const link = await readlink(source);
    await symlink(link, target);
    copy.hash.update(`l ${relative} ${link}\0`);
  } else if (st.isDirectory()) {
    // Only what any host user may read and enter: the sandbox runs as another host user.
    if ((st.mode & 0o005) !== 0o005) return;
    await mkdir(target, { mode: 0o755 });
    await chmod(target, 0o755);
    copy.hash.update(`d ${relative}\0`);
    copy.dirs.push(source);
    for (const name of (await readdir(source)).sort()) await copyTree(join(source, name), join(target, name), `${relative}/${name}`, copy, depth + 1);
  } else if (st.isFile() && (st.mode & 0o004) !== 0) {
    copy.bytes += st.size;
    if (copy.bytes > MAX_BYTES) throw new TooLarge();
    const content = await readWorldReadable(source);
    if (content === undefined) return;
    await writeFile(target, content, { mode: 0o644 });
    await chmod(target, 0o644);
    copy.hash.update(`f ${relative} ${content.length}\0`).update(content);
  }
  // sockets, fifos and devices are never copied
}

/** The file's bytes when it is still a regular, world-readable file once opened (not followed if it became a link). */
async function readWorldReadable(path: string): Promise<Buffer | undefined> {
  const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = await file.stat();
    if (!st.isFile() || (st.mode & 0o004) === 0 || st.size > MAX_BYTES) return undefined;
    return await file.readFile();
  } finally {
    await file.close();
  }
}

const STAGING_PREFIX = "etc-image.tmp-";

/** Staging directories a sandgate process left when it died mid-copy. */
function removeAbandonedStaging(parent: string): void {
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(STAGING_PREFIX)) continue;
    const pid = Number(name.slice(STAGING_PREFIX.length).split("-")[0]);
    try {
      process.kill(pid, 0);
      continue; // still running: its copy is under way
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") continue;
    }
    rmSync(join(parent, name), { recursive: true, force: true });
  }
}

/**
 * Makes the directories between `staging` and the entry at `relative` (as /ssl for /ssl/certs).
 * Never above `staging`: if the sandbox directory goes while a copy is made, the copy fails.
 */
async function parentsUnder(staging: string, relative: string): Promise<void> {
  let dir = staging;
  for (const part of relative.split("/").filter(Boolean).slice(0, -1)) {
    dir = join(dir, part);
    try {
      await mkdir(dir, { mode: 0o755 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
}

let builds = 0;

/** Builds the image for `plan`; returns its directory (named by its content) and the directories copied. */
async function build(plan: HostImagePlan, etcDir: string): Promise<{ dir: string; binds: string[]; dirs: string[] }> {
  const parent = dirname(etcDir);
  if (builds++ === 0) removeAbandonedStaging(parent);
  const staging = join(parent, `${STAGING_PREFIX}${process.pid}-${builds}`);
  const copy: Copy = { hash: createHash("sha256"), bytes: 0, entries: 0, dirs: [] };
  try {
    await mkdir(staging, { mode: 0o755 });
    for (const path of plan.entries) {
      const relative = path.slice("/etc".length);
      const target = join(staging, relative);
      await parentsUnder(staging, relative);
      try {
        await copyTree(path, target, relative, copy, 0);
      } catch (error) {
        if (error instanceof TooLarge) throw error;
        // gone or unreadable since the scan: left out, as a missing entry is
      }
    }
    const binds: string[] = [];
    for (const path of plan.binds) {
      // The mount point: bubblewrap cannot make one in a read-only /etc.
      const relative = path.slice("/etc".length);
      await parentsUnder(staging, relative);
      try {
        if ((await lstat(path)).isDirectory()) await mkdir(join(staging, relative), { mode: 0o755 });
        else await writeFile(join(staging, relative), "", { mode: 0o644 });
      } catch {
        continue; // gone since the scan
      }
      binds.push(path);
      copy.hash.update(`m ${relative}\0`);
    }
    for (const [linkTarget, path] of plan.links) {
      const relative = path.slice("/etc".length);
      await parentsUnder(staging, relative);
      await symlink(linkTarget, join(staging, relative));
      copy.hash.update(`l ${relative} ${linkTarget}\0`);
    }
    for (const name of SYNTHETIC_ETC_FILES) {
      const content = await readFile(join(etcDir, name));
      await writeFile(join(staging, name), content, { mode: 0o644 });
      await chmod(join(staging, name), 0o644);
      copy.hash.update(`f /${name} ${content.length}\0`).update(content);
    }
    await chmod(staging, 0o755);
    const dir = join(parent, `etc-image-${copy.hash.digest("hex").slice(0, 16)}`);
    try {
      await rename(staging, dir);
    } catch {
      // the same copy exists already (made before, or by another sandgate process): as good as ours
    }
    // Older copies stay: sandboxes started before a change keep theirs mounted (like the runners' copies).
    return { dir, binds, dirs: copy.dirs };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

function signatureOf(paths: readonly string[]): string {
  return paths
    .map((path) => {
      try {
        const st = lstatSync(path);
        return `${path}:${st.ino}:${st.mtimeMs}:${st.size}`;
      } catch {
        return `${path}:-`;
      }
    })
    .join("\n");
}

/**
 * What to bind at /etc for sandboxes whose synthetic files are in `etcDir`, or undefined while no
 * copy is ready (then bind the entries one by one). A few mounts instead of thirty keep a sandbox's
 * start as fast as before. The copy is made in the background, never on a sandbox's start: the
 * first call starts it, and /etc is looked at again at most once a second, a change to /etc, to a
 * copied entry or to a directory in one making a new copy for later sandboxes.
 */
export function hostEtcImage(etcDir: string): EtcImage | undefined {
  const now = Date.now();
  let image = images.get(etcDir);
  if (!image) {
    image = { ready: undefined, signature: "", watched: [], checkedAt: 0, building: false };
    images.set(etcDir, image);
  }
  // A copy removed under us (SANDBOX_DIR cleaned by hand) must not be bound: bind entry by entry until a new one is made.
  if (image.ready !== undefined && !existsSync(join(image.ready.dir, "passwd"))) {
    image.ready = undefined;
    image.signature = "";
    image.checkedAt = 0;
  }
  if (image.building || now - image.checkedAt < RECHECK_MS) return image.ready;
  image.checkedAt = now;
  if (image.signature !== "" && image.signature === signatureOf(["/etc", ...image.watched])) return image.ready;
  image.building = true;
  void refresh(image, etcDir);
  return image.ready;
}

async function refresh(image: Image, etcDir: string): Promise<void> {
  try {
    const plan = hostImagePlan();
    // Bound entries change live; only their appearing or going (a change of their parent) matters.
    const entryPaths = [...plan.entries, ...plan.links.map(([, path]) => path), ...plan.binds.map((path) => dirname(path))];
    const before = signatureOf(["/etc", ...entryPaths]);
    const { dir, binds, dirs } = await build(plan, etcDir);
    const watched = [...new Set([...entryPaths, ...dirs])];
    image.ready = { dir, binds };
    image.watched = watched;
    // A change while copying leaves the signature empty, so the next look makes a new copy.
    image.signature = before === signatureOf(["/etc", ...entryPaths]) ? signatureOf(["/etc", ...watched]) : "";
  } catch {
    // No copy (too large, no room): sandboxes keep binding the entries one by one; tried again after a change.
    image.ready = undefined;
    image.signature = signatureOf(["/etc", ...image.watched]);
  } finally {
    image.building = false;
  }
}
