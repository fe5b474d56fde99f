// The tree-sitter grammars the analysis parses with: web-tree-sitter and the .wasm files shipped in
// the grammar packages, loaded once per process. Every tree is freed by `withTree`, never by callers.

import { createRequire } from "node:module";
import { Language as Grammar, Parser, type Node, type Tree } from "web-tree-sitter";

export const GRAMMARS = ["python", "javascript", "typescript", "bash"] as const;
export type GrammarName = (typeof GRAMMARS)[number];

/** Package and file of each grammar's .wasm. */
const WASM: Record<GrammarName, string> = {
  python: "tree-sitter-python/tree-sitter-python.wasm",
  javascript: "tree-sitter-javascript/tree-sitter-javascript.wasm",
  typescript: "tree-sitter-typescript/tree-sitter-typescript.wasm",
  bash: "tree-sitter-bash/tree-sitter-bash.wasm",
};

const require = createRequire(import.meta.url);

/** A parser per grammar; parsing is synchronous once they are loaded. */
export class Grammars {
  private constructor(private readonly parsers: Record<GrammarName, Parser>) {}

  private static loading: Promise<Grammars> | undefined;

  /** Loads the runtime and every grammar once; later calls share the same instance. */
  static load(): Promise<Grammars> {
    return (Grammars.loading ??= (async () => {
      await Parser.init();
      const entries = await Promise.all(
        GRAMMARS.map(async (name) => {
          const parser = new Parser();
          parser.setLanguage(await Grammar.load(require.resolve(WASM[name])));
          return [name, parser] as const;
        }),
      );
      return new Grammars(Object.fromEntries(entries) as Record<GrammarName, Parser>);
    })());
  }

  /** Parses `source` and hands the root to `use`; the tree is freed when `use` returns or throws. */
  withTree<T>(grammar: GrammarName, source: string, use: (root: Node, tree: Tree) => T): T {
    const tree = this.parsers[grammar].parse(source);
    if (!tree) throw new Error(`tree-sitter returned no tree for ${grammar}`);
    try {
      return use(tree.rootNode, tree);
    } finally {
      tree.delete();
    }
  }
}
