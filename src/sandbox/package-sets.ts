// The admin's package sets on disk: SANDBOX_DIR/packages/<lang>-<hash>/ versions, the <lang> link
// naming the active one, its manifest, and where sandboxes see it (read-only at /sandgate/packages/<lang>).

import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

export const PACKAGE_LANGUAGES = ["python", "node"] as const;
export type PackageLanguage = (typeof PACKAGE_LANGUAGES)[number];

/** Where a package set appears inside every sandbox. */
export const SANDBOX_PACKAGES_DIR = "/sandgate/packages";
/** The manifest `sandgate packages sync` writes at the top of each version. */
export const MANIFEST_FILE = "sandgate-packages.json";
/** The names only, comma-separated on one line, for the shims and hints inside the sandbox (sh and Python read it). */
export const NAMES_FILE = "sandgate-packages.txt";

const packageSourceSchema = z.enum(["system", "apt", "venv", "npm"]);
export type PackageSource = z.infer<typeof packageSourceSchema>;

export const packageManifestSchema = z.object({
  language: z.enum(PACKAGE_LANGUAGES),
  /** The config's list this version was built from, in config order. */
  specs: z.array(z.string()),
  /** Hash of the specs and the interpreter's version: the version directory's suffix. */
  hash: z.string(),
  interpreter: z.object({ path: z.string(), version: z.string() }),
  createdAt: z.string(),
  packages: z.array(
    z.object({
      name: z.string(),
      spec: z.string(),
      version: z.string().nullable(),
      source: packageSourceSchema,
      /** What code imports: Python's top-level modules (PIL for pillow), the package name for npm. */
      modules: z.array(z.string()).default([]),
    }),
  ),
});
export type PackageManifest = z.infer<typeof packageManifestSchema>;

/**
 * The runner files that stand in for pip and npm inside sandboxes (no network: installs fail at
 * once with what to do instead); bin/ is on PATH, pyshim/ on PYTHONPATH (see runner-command.ts).
 */
export const INSTALL_SHIM_FILES = ["bin/pip", "bin/pip3", "bin/npm", "bin/npx", "pyshim/sandgate_pip.py", "pyshim/pip/__init__.py", "pyshim/pip/__main__.py"];

/** SANDBOX_DIR/packages. */
export function packagesRoot(sandboxDir: string): string {
  return join(sandboxDir, "packages");
}

/** The link naming the active version of a language's set. */
export function activeLink(sandboxDir: string, language: PackageLanguage): string {
  return join(packagesRoot(sandboxDir), language);
}

/** The manifest of the version in `dir`, or undefined when it has none (half-built, or not a version). */
export function readManifest(dir: string): PackageManifest | undefined {
  try {
    const parsed = packageManifestSchema.safeParse(JSON.parse(readFileSync(join(dir, MANIFEST_FILE), "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The active version's manifest, or undefined when the language has none (never synced, or emptied). */
export function readActiveManifest(sandboxDir: string, language: PackageLanguage): PackageManifest | undefined {
  return readManifest(activeLink(sandboxDir, language));
}

/** The names of the packages installed for each language (what tool descriptions and /languages show). */
export function installedPackageNames(sandboxDir: string): Record<PackageLanguage, string[]> {
  const names = {} as Record<PackageLanguage, string[]>;
  for (const language of PACKAGE_LANGUAGES) names[language] = readActiveManifest(sandboxDir, language)?.packages.map((p) => p.name) ?? [];
  return names;
}

/** A package set to bind read-only into a sandbox. */
export interface PackageMount {
  language: PackageLanguage;
  /** The active version's directory (the link resolved now, so a sync during the sandbox's life does not change it). */
  hostPath: string;
}

/** The active versions, looked up at each sandbox start: a sync takes effect for every sandbox started after it. */
export function activePackageMounts(packagesDir: string): PackageMount[] {
  const mounts: PackageMount[] = [];
  for (const language of PACKAGE_LANGUAGES) {
    const link = join(packagesDir, language);
    if (!existsSync(join(link, MANIFEST_FILE))) continue;
    try {
      mounts.push({ language, hostPath: realpathSync(link) });
    } catch {
      // removed between the two calls: this sandbox goes without it
    }
  }
  return mounts;
}

/** Short text naming the installed packages, bounded, for tool descriptions. */
export function describePackageSets(names: Record<PackageLanguage, string[]>, maxNames = 24): string {
  const parts: string[] = [];
  const titles: Record<PackageLanguage, string> = { python: "Python", node: "JavaScript/TypeScript" };
  for (const language of PACKAGE_LANGUAGES) {
    const list = names[language];
    if (list.length === 0) continue;
    const shown = list.slice(0, maxNames).join(", ");
    parts.push(`${titles[language]}: ${shown}${list.length > maxNames ? ` and ${list.length - maxNames} more` : ""}`);
  }
  return parts.join("; ");
}
