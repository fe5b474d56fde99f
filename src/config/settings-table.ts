// The README's settings table, generated from the setting() declarations so the documentation
// cannot drift: `node scripts/settings-table.mjs` writes it between the markers, a test compares.

import { CONFIG_FILE_VARIABLE, declaredSettings, type DeclaredSetting } from "./settings.js";

export const TABLE_START = "<!-- settings-table: generated from src/config/schema.ts by `node scripts/settings-table.mjs`; edit the declarations, not this table -->";
export const TABLE_END = "<!-- /settings-table -->";

/** Text safe inside a markdown table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");
}

function isEmpty(value: unknown): boolean {
  return (Array.isArray(value) && value.length === 0) || (typeof value === "object" && value !== null && Object.keys(value).length === 0);
}

/** The default column: stated in words when computed, as the variable would hold it otherwise. */
function defaultCell(setting: DeclaredSetting): string {
  if (setting.defaultDoc !== undefined) return cell(setting.defaultDoc);
  const value = setting.default;
  if (value === undefined || isEmpty(value)) return "none";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (setting.codec) return `\`${cell(setting.codec.show(value))}\``;
  return `\`${cell(typeof value === "string" ? value : JSON.stringify(value))}\``;
}

function row(setting: DeclaredSetting): string {
  const variable = setting.env === undefined ? "—" : `\`${setting.env}\``;
  const format = setting.codec?.format;
  const meaning = format === undefined ? setting.doc : `${setting.doc} (${format})`;
  return `| ${variable} | \`${setting.key}\` | ${cell(meaning)} | ${defaultCell(setting)} |`;
}

/** The table's lines: one row per setting, in schema order, then the config file's variable. */
export function settingsTable(): string[] {
  return [
    "| variable | setting | meaning | default |",
    "|---|---|---|---|",
    ...declaredSettings().map(row),
    `| \`${CONFIG_FILE_VARIABLE.env}\` | — | ${cell(CONFIG_FILE_VARIABLE.doc)} | ${cell(CONFIG_FILE_VARIABLE.defaultDoc)} |`,
  ];
}

/** `readme` with the text between the markers replaced by the generated table. */
export function withSettingsTable(readme: string): string {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start === -1 || end < start) throw new Error(`README has no settings table markers (${TABLE_START} ... ${TABLE_END})`);
  // Blank lines around the table keep markdown from reading it as part of the comments.
  return `${readme.slice(0, start + TABLE_START.length)}\n\n${settingsTable().join("\n")}\n\n${readme.slice(end)}`;
}
