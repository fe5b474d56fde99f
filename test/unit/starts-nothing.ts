// Setup of the unit project: a unit test starts no process and opens no socket. Each way to do
// either throws, so a test that needs one fails here and belongs in another project.

import childProcess from "node:child_process";
import net from "node:net";
import { syncBuiltinESMExports } from "node:module";

const refuse = (what: string) => (): never => {
  throw new Error(`a unit test may not ${what}; move the test to the project that provides it (sandbox, server, cli, e2e)`);
};

for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const) {
  (childProcess as unknown as Record<string, unknown>)[name] = refuse(`start a process (child_process.${name})`);
}
net.Server.prototype.listen = refuse("listen on a socket");
(net as unknown as Record<string, unknown>).connect = refuse("open a connection");
(net as unknown as Record<string, unknown>).createConnection = refuse("open a connection");
syncBuiltinESMExports();
