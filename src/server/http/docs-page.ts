// GET /docs: a readable, self-contained page for the OpenAPI document (no CDN, no scripts
// from elsewhere), rendered on the server from the same document /openapi.json serves.

type Json = Record<string, unknown>;

const str = (value: unknown): string => (typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value));
const escape = (text: string): string => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

function schemaBlock(schema: unknown): string {
  return `<pre>${escape(JSON.stringify(schema ?? {}, null, 2))}</pre>`;
}

/** A request body in each media type it is accepted in (JSON, raw bytes, multipart): its example, then its schema. */
function bodyBlock(content: Record<string, Json>): string {
  return Object.entries(content)
    .map(([type, media]) => {
      const example = media.example === undefined ? "" : `<p>Example:</p><pre>${escape(JSON.stringify(media.example, null, 2))}</pre>`;
      return `<p><code>${escape(type)}</code></p>${example}<details><summary>Schema</summary>${schemaBlock(media.schema)}</details>`;
    })
    .join("");
}

/** The operation's curl line (x-codeSamples), shown as a command to copy. */
function sampleBlock(op: Json): string {
  const samples = (op["x-codeSamples"] as Json[] | undefined) ?? [];
  return samples.map((sample) => `<pre class="cmd">${escape(str(sample.source))}</pre>`).join("");
}

export function renderDocsPage(doc: Json): string {
  const info = doc.info as Json;
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const sections: string[] = [];
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const requestBody = op.requestBody as Json | undefined;
      const body = requestBody?.content as Record<string, Json> | undefined;
      const responses = op.responses as Record<string, Json>;
      const success = Object.entries(responses).find(([status]) => status !== "default");
      const successSchema = ((success?.[1].content as Record<string, Json> | undefined)?.["application/json"])?.schema;
      const params = (op.parameters as Json[] | undefined) ?? [];
      sections.push(`<section>
<h2><span class="m ${method}">${method.toUpperCase()}</span> <code>${escape(path)}</code></h2>
<p>${escape(str(op.summary))}</p>
${op.description ? `<p>${escape(str(op.description))}</p>` : ""}
${sampleBlock(op)}
${params.length ? `<h3>Parameters</h3><ul>${params.map((p) => `<li><code>${escape(str(p.name))}</code> (${escape(str(p.in))}${p.required ? ", required" : ""})${p.description ? `: ${escape(str(p.description))}` : ""}</li>`).join("")}</ul>` : ""}
${body ? `<h3>Request body</h3>${requestBody?.description ? `<p>${escape(str(requestBody.description))}</p>` : ""}${bodyBlock(body)}` : ""}
${successSchema ? `<details><summary>Response ${escape(success?.[0] ?? "")}</summary>${schemaBlock(successSchema)}</details>` : ""}
</section>`);
    }
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(str(info.title))} API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d232a}
section{border-top:1px solid #dde;padding:.5rem 0}h2{font-size:1.05rem}code,pre{font-family:ui-monospace,monospace}
pre{background:#f5f6f8;padding:.75rem;overflow:auto;font-size:.85rem}pre.cmd{background:#1d232a;color:#f5f6f8}.m{display:inline-block;min-width:4.2rem;font-weight:600}
.get{color:#1a7f37}.post{color:#0550ae}.put{color:#9a6700}.delete{color:#cf222e}
</style></head><body>
<h1>${escape(str(info.title))} ${escape(str(info.version))}</h1>
<p>${escape(str(info.description))}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a>. Errors are JSON <code>{"error":{"code","message","data"}}</code>. The examples call <code>http://localhost:7860</code>; with API keys set, export one as <code>SANDGATE_API_KEY</code> first.</p>
${sections.join("\n")}
</body></html>`;
}
