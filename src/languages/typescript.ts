// TypeScript: transpiled on the host (types stripped, lines kept), then run by the Node runner
// exactly like JavaScript.

import { JAVASCRIPT } from "./javascript.js";
import { prepareJavaScript } from "./js-transform.js";
import type { LanguageSpec } from "./spec.js";
import { transpileTypeScript } from "./ts-transpile.js";

export const TYPESCRIPT: LanguageSpec = {
  name: "typescript",
  title: "TypeScript",
  aliases: ["ts"],
  extensions: [".ts", ".mts", ".cts"],
  runner: "javascript",
  returnsValue: true,
  filename: "main.ts",
  prepare: (source) => prepareJavaScript(transpileTypeScript(source)),
  doctorProbe: { code: "const n: number = 1; n + 1", expect: 2, from: "value" },
  upstreamCall: JAVASCRIPT.upstreamCall,
};
