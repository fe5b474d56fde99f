// Secrets given in env under well-known names that are not written as separate words (libpq's
// PGPASSWORD) or in the plural (SECRETS) are masked in a real sandbox's output like API_KEY is.

import { describe, expect, it } from "vitest";
import { useTestEngine } from "../helpers.js";

const fx = useTestEngine({}, { python: 0, javascript: 0, bash: 1 });

describe("env masking by well-known names", () => {
  it.each([["PGPASSWORD"], ["SECRETS"], ["DB_PASSWORDS"]])("masks the value of %s", async (name) => {
    const value = "pg-Secret-Value-0042";
    const result = await fx.engine.execute({ language: "bash", env: { [name]: value }, code: `echo "$${name}"` });
    expect(result.stdout).toBe(`[masked:${name}]\n`);
  });

  it("leaves values of ordinary names alone", async () => {
    const result = await fx.engine.execute({ language: "bash", env: { MAX_TOKENS: "4096", PGHOST: "db.example" }, code: 'echo "$MAX_TOKENS $PGHOST"' });
    expect(result.stdout).toBe("4096 db.example\n");
  });
});
