// Python rules on calls that touch the world: sockets, HTTP and TLS, secrets sent out, downloads,
// permissions, deletes, writes to system and start-up files, and privilege changes.

import type { PyContext } from "./python-context.js";
import { posOf } from "./python-context.js";
import type { CallInfo } from "./python-exec-rules.js";
import { isCredentialPath, isPersistencePath, isRootLikePath, isSystemPath } from "./python-paths.js";
import type { Val } from "./python-values.js";

/** Calls that send data off the machine, and which of their arguments carry it. */
const SENDERS =
  /^(requests|httpx)\.(get|post|put|patch|delete|head|request|options)$|^(requests\.Session|httpx\.Client|httpx\.AsyncClient|aiohttp\.ClientSession|urllib3\.PoolManager)\(\)\.(get|post|put|patch|request|delete)$|^urllib\.request\.(urlopen|Request|urlretrieve)$|^urllib\.urlopen$|^http\.client\.HTTPS?Connection\(\)\.(request|putrequest|send)$|^socket\.(socket|create_connection)\(\)\.(send|sendall|sendto|connect)$|^socket\.(gethostbyname|getaddrinfo|create_connection)$|^smtplib\.SMTP(_SSL)?\(\)\.(sendmail|send_message)$|^ftplib\.FTP\(\)\.(storbinary|storlines)$|^dns\.resolver\.(resolve|query)$|^paramiko\.|^telnetlib\.Telnet\(\)\.write$/;

/** Hosts that malware uses to drop data or fetch payloads. */
const SHADY_HOST =
  /https?:\/\/(\d{1,3}\.){3}\d{1,3}|pastebin\.com|paste\.ee|hastebin|transfer\.sh|ngrok|webhook\.site|requestbin|pipedream\.net|discord(app)?\.com\/api\/webhooks|api\.telegram\.org\/bot|interact\.sh|oast\.|burpcollaborator|bit\.ly|tinyurl/;

const HTTP_CLIENT = /^(requests|httpx|aiohttp|urllib3|urllib\.request|http\.client|urllib\.urlopen|ftplib|smtplib|telnetlib|paramiko|websocket|websockets)(\.|$)/;

function anyArg(c: CallInfo, test: (v: Val) => boolean): Val | undefined {
  for (const v of c.pos) if (test(v)) return v;
  for (const v of c.kw.values()) if (test(v)) return v;
  return undefined;
}

function argText(c: CallInfo): string {
  return c.node.childForFieldName("arguments")?.text ?? "";
}

export function checkNetwork(ctx: PyContext, c: CallInfo): void {
  const q = c.q;
  // TLS checks switched off, on any client (requests, httpx, aiohttp, urllib3).
  const verify = c.kwNodes.get("verify") ?? c.kwNodes.get("ssl") ?? c.kwNodes.get("verify_ssl");
  if (verify && /^(False|0)$/.test(verify.text) && (HTTP_CLIENT.test(q) || /(^|\.)(get|post|put|patch|delete|head|request|stream|Client|AsyncClient|Session|ClientSession|TCPConnector|urlopen)$/.test(q || (c.fnNode?.text ?? "")))) ctx.add(verify, "network", "high", "tls-verify-off", `${q || "this call"} turns TLS certificate verification off`, "Keep verify=True; add the CA bundle instead of turning checks off.");
  if (q === "ssl._create_unverified_context" || q === "ssl._create_stdlib_context") {
    ctx.add(c.node, "network", "high", "tls-unverified-context", `${q} makes TLS connections without certificate checks`, "Use ssl.create_default_context().");
  }
  const certReqs = c.kwNodes.get("cert_reqs");
  if (certReqs && /CERT_NONE/.test(certReqs.text)) ctx.add(certReqs, "network", "high", "tls-cert-none", `${q || "this call"} asks for no certificate checks (CERT_NONE)`, "Use CERT_REQUIRED with a CA bundle.");
  if (q === "urllib3.disable_warnings") ctx.add(c.node, "network", "low", "tls-warnings-off", "urllib3.disable_warnings hides warnings about unverified TLS", "Fix certificate verification instead of hiding the warning.");
  // Raw sockets.
  if (q === "socket.socket") ctx.add(c.node, "network", "medium", "raw-socket", "socket.socket opens a raw network socket", "Use an HTTP client through the configured proxy.");
  if (/^socket\.(socket|create_connection)\(\)\.(connect|connect_ex)$|^socket\.create_connection$/.test(q)) {
    ctx.facts.socketConnect ??= posOf(c.node);
    const addr = c.pos[0]?.items?.[0]?.s ?? c.pos[0]?.s;
    const loopback = addr !== undefined && /^(localhost|127\.\d+\.\d+\.\d+|::1)$/.test(addr);
    ctx.add(c.node, "network", loopback ? "medium" : "high", loopback ? "socket-connect-local" : "socket-connect", `a raw socket connects to ${addr ? `"${addr}"` : "an address"}`, "Use an HTTP client through the configured proxy; raw connections are how reverse shells start.");
  }
  if (/^(socketserver\.(Threading|Forking)?(TCP|UDP)Server|http\.server\.(Threading)?HTTPServer)$/.test(q) && ["", "::"].includes(c.pos[0]?.items?.[0]?.s ?? "-")) {
    ctx.add(c.node, "network", "medium", "bind-all", `${q} listens on every network interface`, "Bind 127.0.0.1 unless the service must be reachable from outside.");
  }
  if (anyArg(c, (v) => /(^|[/:])(var\/)?run\/docker\.sock$|%2Fdocker\.sock/i.test(v.s ?? v.t ?? ""))) {
    ctx.add(c.node, "privilege", "high", "docker-socket", `${q || "this call"} uses the Docker socket, which gives root on the host`, "Do not use the Docker socket from sandboxed code.");
  }
  if (/^socket\.socket\(\)\.bind$/.test(q)) {
    const host = c.pos[0]?.items?.[0]?.s;
    if (host === "0.0.0.0" || host === "" || host === "::") ctx.add(c.node, "network", "medium", "bind-all", "a socket binds every network interface", "Bind 127.0.0.1 unless the service must be reachable from outside.");
  }
  if (/^socket\.socket\(\)\.(listen|accept)$/.test(q)) ctx.facts.socketListen ??= posOf(c.node);
  const host = c.kw.get("host")?.s;
  if ((host === "0.0.0.0" || host === "::") && !/^socket/.test(q)) ctx.add(c.node, "network", "medium", "bind-all", `${q || "a server"} listens on every network interface`, "Bind 127.0.0.1 unless the service must be reachable from outside.");
  if (/^paramiko\.SSHClient\(\)\.set_missing_host_key_policy$/.test(q) && /AutoAddPolicy|WarningPolicy/.test(argText(c))) {
    ctx.add(c.node, "network", "medium", "ssh-no-host-check", "paramiko accepts unknown host keys", "Load known host keys and reject unknown ones.");
  }
  if (q === "telnetlib.Telnet" || q === "ftplib.FTP") ctx.add(c.node, "network", "medium", "cleartext-protocol", `${q} sends data and passwords in clear text`, "Use SSH/SFTP or TLS.");
  // Binding every interface by a literal address anywhere (app.run("0.0.0.0"), serve(("0.0.0.0", 80))).
  if (!/^socket\./.test(q) && c.kwNodes.get("host") === undefined && anyArg(c, (v) => v.s === "0.0.0.0" || v.items?.[0]?.s === "0.0.0.0")) {
    ctx.add(c.node, "network", "medium", "bind-all", `${q || "a server"} uses the address 0.0.0.0 (every interface)`, "Bind 127.0.0.1 unless the service must be reachable from outside.");
  }
  if (c.kwNodes.get("debug")?.text === "True" && /\.run$/.test(q || (c.fnNode?.text ?? "")) && /app|flask|Flask/.test(c.fnNode?.text ?? "")) {
    ctx.add(c.node, "code-exec", "medium", "debug-server", "the web app runs with debug=True, whose debugger console runs any code sent to it", "Turn debug off outside local development.");
  }
  // Data smuggled out as the labels of a DNS name (`socket.gethostbyname(f"{b32(secret)}.x.example")`).
  if (/^socket\.(gethostbyname|gethostbyname_ex|getaddrinfo)$|^dns\.resolver\.(resolve|query)$|^dns\.resolver\.Resolver\(\)\.(resolve|query)$/.test(q) && c.pos[0] && c.pos[0].s === undefined) {
    const name = c.pos[0];
    const labelled = ((name.t ?? "").split(".")[0]?.includes("\u0000") === true && /\.[A-Za-z0-9-]+\.[A-Za-z]/.test(name.t ?? "")) || /^[^"'.]+\+\s*["']\.[A-Za-z0-9-]+\./.test(c.posNodes[0]?.text ?? "");
    if (name.secret || name.env) ctx.add(c.node, "exfiltration", name.secret ? "critical" : "high", "dns-exfil", `${q} looks up a host name built from ${name.secret ?? `the environment variable ${name.env}`}, sending it out over DNS`, "Look up fixed host names; never put data into DNS names.");
    else if (labelled || name.decoded) ctx.add(c.node, "exfiltration", "medium", "dns-label-data", `${q} looks up a host name whose first label is data`, "Look up fixed host names; never put data into DNS names.");
  }
  // Sending data out.
  if (SENDERS.test(q)) {
    ctx.facts.networkSend ??= posOf(c.node);
    const text = argText(c);
    if (/169\.254\.169\.254|metadata\.google\.internal|100\.100\.100\.200/.test(text)) {
      ctx.facts.credentialRead ??= posOf(c.node);
      ctx.add(c.node, "exfiltration", "high", "cloud-metadata", `${q} reads the cloud instance metadata service (credentials)`, "Do not read instance credentials from sandboxed code.");
    }
    const secret = anyArg(c, (v) => v.secret !== undefined);
    if (secret?.secret === "host identity") ctx.add(c.node, "exfiltration", "high", "send-host-info", `${q} sends the host's identity (hostname, user) over the network`, "Do not send host details out.");
    else if (secret) ctx.add(c.node, "exfiltration", "critical", "send-secret", `${q} sends ${secret.secret} over the network`, "Never send credentials or the environment to a remote host.");
    else if (SHADY_HOST.test(text)) ctx.add(c.node, "network", "medium", "shady-host", `${q} talks to a paste site, webhook collector, tunnel or bare IP address`, "Use the service's official API host; paste sites and webhooks are common drop points for stolen data.");
    else if (HTTP_CLIENT.test(q)) ctx.add(c.node, "network", "low", "http-client", `${q} makes a network request`, "Make sure the destination is expected.");
  }
  // Downloads written to files.
  if (q === "urllib.request.urlretrieve" || q === "wget.download") {
    const target = c.pos[1] ?? c.kw.get("filename") ?? c.kw.get("out");
    const node = c.posNodes[1] ?? c.kwNodes.get("filename") ?? c.kwNodes.get("out");
    if (target?.s) ctx.facts.downloads.push(target.s);
    if (node) ctx.facts.downloads.push(node.text);
  }
  if (/^builtins\.open\(\)\.(write|writelines)$|^pathlib\.Path\(\)\.write_bytes$|^shutil\.copyfileobj$/.test(q)) {
    const data = q === "shutil.copyfileobj" ? c.pos[0] : c.pos[0];
    const path = q === "shutil.copyfileobj" ? c.pos[1]?.path : c.fn.path;
    if (data?.remote && path) ctx.facts.downloads.push(path);
    const receiver = c.fnNode?.childForFieldName("object")?.text;
    if (data?.remote && receiver) ctx.facts.downloads.push(receiver);
  }
}

const WRITE_MODE = /[wax+]/;

function modeBits(c: CallInfo, index: number): { n?: number; text: string } {
  const v = c.pos[index] ?? c.kw.get("mode");
  const node = c.posNodes[index] ?? c.kwNodes.get("mode");
  return { n: v?.n, text: node?.text ?? "" };
}

export function checkFilesystem(ctx: PyContext, c: CallInfo): void {
  const q = c.q;
  if (q === "os.chmod" || q === "os.lchmod" || q === "os.fchmod" || q === "pathlib.Path().chmod") {
    const pathOnCall = q === "pathlib.Path().chmod" ? c.fn.path : c.pos[0]?.s ?? c.pos[0]?.t;
    const { n, text } = modeBits(c, q === "pathlib.Path().chmod" ? 0 : 1);
    const worldWritable = (n !== undefined && (n & 0o002) !== 0) || /S_IWOTH|S_IRWXO/.test(text);
    const setuid = (n !== undefined && (n & 0o6000) !== 0) || /S_ISUID|S_ISGID/.test(text);
    const executable = (n !== undefined && (n & 0o111) !== 0) || /S_IX|S_IEXEC|S_IRWXU/.test(text);
    if (setuid) ctx.add(c.node, "privilege", "high", "setuid-bit", `${q} sets the setuid/setgid bit`, "Do not create setuid programs.");
    if (worldWritable) ctx.add(c.node, "filesystem", "high", "world-writable", `${q} makes ${pathOnCall ? `"${pathOnCall}"` : "a file"} writable by everyone`, "Use 0o644 for files and 0o755 for directories, or narrower.");
    if (pathOnCall && isSystemPath(pathOnCall)) ctx.add(c.node, "filesystem", "high", "chmod-system", `${q} changes permissions of the system path "${pathOnCall}"`, "Leave system files alone.");
    if (executable && (ctx.isDownloaded(pathOnCall) || ctx.facts.downloads.some((d) => c.posNodes[0]?.text === d))) {
      ctx.add(c.node, "download-exec", "critical", "chmod-downloaded", `${q} makes a downloaded file executable`, "Never run downloaded programs.");
    }
    return;
  }
  if (q === "shutil.rmtree" || q === "os.removedirs" || q === "pathlib.Path().rmdir" || q === "os.rmdir") {
    const target = q.startsWith("pathlib") ? { s: c.fn.path } : c.pos[0] ?? c.kw.get("path") ?? {};
    const p = target.s;
    if (p !== undefined && isRootLikePath(p)) ctx.add(c.node, "filesystem", "critical", "rmtree-root", `${q} deletes "${p}" recursively`, "Delete only the directories your program created, under /workspace or /tmp.");
    else if (p !== undefined && isSystemPath(p)) ctx.add(c.node, "filesystem", "high", "rmtree-system", `${q} deletes the system directory "${p}"`, "Delete only the directories your program created.");
    else if (p === undefined && q === "shutil.rmtree") ctx.add(c.node, "filesystem", "medium", "rmtree-variable", "shutil.rmtree deletes a directory named by a variable", "Check the path is inside your working directory before deleting it.");
    return;
  }
  if (q === "os.remove" || q === "os.unlink" || q === "pathlib.Path().unlink") {
    const p = q.startsWith("pathlib") ? c.fn.path : c.pos[0]?.s;
    if (p !== undefined && isSystemPath(p) && !p.startsWith("/var/tmp")) ctx.add(c.node, "filesystem", "high", "delete-system-file", `${q} deletes the system file "${p}"`, "Leave system files alone.");
    return;
  }
  if (q === "os.setuid" || q === "os.setgid" || q === "os.seteuid" || q === "os.setreuid" || q === "os.setresuid") {
    ctx.add(c.node, "privilege", "high", "setuid", `${q} changes the process's user`, "Run with the user you were given.");
    return;
  }
  if (/^(tarfile\.open|tarfile\.TarFile|zipfile\.ZipFile)\(\)\.extractall$/.test(q) && c.kwNodes.get("filter") === undefined) {
    ctx.add(c.node, "filesystem", "medium", "extractall", `${q.replace("()", "(...)")} can write outside the target directory (../ or absolute member names)`, "Check member paths first, or pass filter=\"data\" (Python 3.12+).");
  }
  if (/^(xml\.etree\.(c?ElementTree|cElementTree)\.(parse|fromstring|XML|iterparse)|xml\.dom\.(minidom|pulldom)\.(parse|parseString)|xml\.sax\.(parse|parseString|make_parser)|lxml\.etree\.(parse|fromstring|XML))$/.test(q)) {
    ctx.add(c.node, "deserialization", "low", "xml-parser", `${q} parses XML with a parser open to entity expansion attacks`, "Use defusedxml for XML from outside.");
  }
  if (q === "tempfile.mktemp") ctx.add(c.node, "filesystem", "low", "mktemp", "tempfile.mktemp has a race between naming and creating the file", "Use tempfile.mkstemp or NamedTemporaryFile.");
  if (/^(winreg|_winreg)\.(SetValueEx?|CreateKey(Ex)?)$/.test(q)) {
    const run = /CurrentVersion\\\\Run/i.test(argText(c));
    ctx.add(c.node, "persistence", run ? "critical" : "medium", "registry-write", `${q} writes the Windows registry${run ? " Run key (starts code at logon)" : ""}`, "Do not change the registry from sandboxed code.");
  }
  if (/^crontab\.CronTab\(\)\.(new|write)$/.test(q)) ctx.add(c.node, "persistence", "critical", "cron-job", "python-crontab installs a cron job", "Do not install cron jobs from sandboxed code.");
  // Opening or writing a file: credentials read, start-up files and system files written.
  let path: string | undefined;
  let mode = "r";
  if (q === "builtins.open" || q === "io.open" || q === "codecs.open" || q === "os.open") {
    path = c.pos[0]?.s ?? c.pos[0]?.t;
    mode = q === "os.open" ? (/O_WRONLY|O_RDWR|O_APPEND|O_CREAT/.test(c.posNodes[1]?.text ?? "") ? "w" : "r") : (c.pos[1]?.s ?? c.kw.get("mode")?.s ?? "r");
  } else if (/^pathlib\.Path\(\)\.(open|write_text|write_bytes|read_text|read_bytes|touch|symlink_to)$/.test(q)) {
    path = c.fn.path;
    mode = /write|touch|symlink/.test(q) ? "w" : (c.pos[0]?.s ?? "r");
  } else if (/^shutil\.(copy|copy2|copyfile|move)$|^os\.(rename|replace|symlink|link)$/.test(q)) {
    path = c.pos[1]?.s ?? c.pos[1]?.t;
    mode = "w";
    const src = c.pos[0]?.s;
    if (src !== undefined && isCredentialPath(src)) {
      ctx.facts.credentialRead ??= posOf(c.node);
      ctx.add(c.node, "exfiltration", "high", "copy-credentials", `${q} copies the credentials file "${src}"`, "Do not touch credentials from sandboxed code.");
    }
  }
  if (/^(os\.(listdir|scandir|walk)|glob\.i?glob|pathlib\.Path\(\)\.(glob|rglob|iterdir))$/.test(q)) {
    const dir = q.startsWith("pathlib") ? c.fn.path : c.pos[0]?.s;
    const pattern = q.startsWith("pathlib") ? (c.pos[0]?.s ?? "x") : "id_x";
    if (dir !== undefined && isCredentialPath(`${dir}/${pattern}`.replace(/\*/g, "x"))) {
      ctx.facts.credentialRead ??= posOf(c.node);
      ctx.add(c.node, "exfiltration", "high", "list-credentials", `${q} lists the credentials directory "${dir}"`, "Do not read keys or credentials from sandboxed code.");
    }
    return;
  }
  // A .pth file in site-packages runs its import lines at every interpreter start.
  if ((WRITE_MODE.test(mode) && /\.pth$/.test(path ?? "")) || /\.pth["']\s*\)?\s*\.(write_text|write_bytes)$/.test(c.fnNode?.text ?? "")) {
    ctx.add(c.node, "persistence", "critical", "pth-write", `${q} writes a .pth file, whose import lines run every time Python starts`, "Do not write .pth files; install packages through the package manager.");
  }
  if (path === undefined) return;
  const writing = WRITE_MODE.test(mode);
  if (writing) {
    if (isPersistencePath(path)) ctx.add(c.node, "persistence", "critical", "startup-file-write", `${q} writes "${path}", which runs code at login, on a schedule or on ssh access`, "Do not change start-up files, cron, systemd units or authorized_keys.");
    else if (/^\/etc\/(passwd|shadow|sudoers|group)/.test(path)) ctx.add(c.node, "privilege", "critical", "auth-file-write", `${q} writes the account file "${path}"`, "Do not change system accounts.");
    else if (isSystemPath(path) && !/^\/(var\/tmp|dev\/(null|tty|stdout|stderr|shm|fd|pts)|proc\/self\/fd)/.test(path)) ctx.add(c.node, "filesystem", "high", "system-file-write", `${q} writes the system path "${path}"`, "Write under /workspace or /tmp.");
  } else if (isCredentialPath(path)) {
    ctx.facts.credentialRead ??= posOf(c.node);
    ctx.add(c.node, "exfiltration", "high", "read-credentials", `${q} reads the credentials file "${path}"`, "Do not read keys or credentials from sandboxed code; pass what is needed explicitly.");
  } else if (/^\/etc\/passwd$/.test(path)) {
    ctx.add(c.node, "exfiltration", "medium", "read-passwd", `${q} reads the list of system accounts`, "Do not enumerate the host's accounts.");
  }
}
