/**
 * `npx tsx bench/tls-memory.ts [N]`: where a held TLS connection's memory goes, without Drover
 * (issue 23, item 5). A bare node:https server (ECDSA P-256, the certificate and options of
 * DROVER_TLS=auto: a client certificate asked for, session tickets) and, for comparison, a bare
 * node:http one, each holding N requests (default 1,000) from a client in another process; the
 * server process's memoryUsage() before and with them held (after a GC), per 1,000 connections:
 * RSS, V8 heap, external, array buffers. RSS minus heap minus external is native memory
 * outside V8: OpenSSL's SSL objects and their buffers, libuv's and Node's C++ stream objects.
 * A variant without a client certificate asked for (the operator's DROVER_TLS_CERT: none asked).
 */
import { execFileSync, fork } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";

const N = process.argv[2] === "serve" ? 0 : Number(process.argv[2] ?? 1000);

type Variant = "plain" | "tls" | "tls-no-client-cert";

interface Usage {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

function usage(): Usage {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
}

/** Child: the server of one variant; answers "usage" with its memoryUsage(). */
async function serve(variant: Variant, dir: string): Promise<void> {
  const held: http.ServerResponse[] = [];
  const handler = (_req: http.IncomingMessage, res: http.ServerResponse) => void held.push(res);
  const server =
    variant === "plain"
      ? http.createServer(handler)
      : https.createServer(
          {
            key: fs.readFileSync(path.join(dir, "server.key")),
            cert: fs.readFileSync(path.join(dir, "server.pem")),
            sessionTimeout: 86_400,
            ticketKeys: Buffer.alloc(48, 1),
            ...(variant === "tls" ? { requestCert: true, rejectUnauthorized: false, ca: [fs.readFileSync(path.join(dir, "ca.pem"))] } : {}),
          },
          handler,
        );
  server.keepAliveTimeout = 0;
  server.headersTimeout = 0;
  server.requestTimeout = 0;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  process.send!({ port: (server.address() as AddressInfo).port });
  process.on("message", (m: string) => {
    if (m === "usage") process.send!({ usage: usage(), held: held.length });
  });
}

function makeCertificates(dir: string): void {
  const run = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=ca",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"]);
  fs.writeFileSync(path.join(dir, "ext"), "subjectAltName=IP:127.0.0.1\n");
  run(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"]);
  run(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext"]);
}

async function measure(variant: Variant, dir: string): Promise<Record<string, number>> {
  const child = fork(import.meta.filename, ["serve", variant, dir], { execArgv: ["--import", "tsx", "--expose-gc"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const ask = <T>(msg?: string) => new Promise<T>((r) => (child.once("message", (m) => r(m as T)), msg && child.send(msg)));
  const { port } = await ask<{ port: number }>();
  await new Promise((r) => setTimeout(r, 500));
  const before = (await ask<{ usage: Usage }>("usage")).usage;
  const agent = variant === "plain" ? new http.Agent({ keepAlive: true, maxSockets: Infinity }) : new https.Agent({ keepAlive: true, maxSockets: Infinity, ca: fs.readFileSync(path.join(dir, "ca.pem")) });
  const requests: http.ClientRequest[] = [];
  for (let i = 0; i < N; i++) {
    const req = (variant === "plain" ? http : https).request({ host: "127.0.0.1", port, path: "/work?wait=60", agent });
    req.on("error", () => {});
    req.end();
    requests.push(req);
    if (i % 100 === 99) await new Promise((r) => setTimeout(r, 50));
  }
  for (;;) {
    const { held } = await ask<{ held: number }>("usage");
    if (held >= N) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await new Promise((r) => setTimeout(r, 1000));
  const after = (await ask<{ usage: Usage }>("usage")).usage;
  for (const req of requests) req.destroy();
  child.kill();
  const per1000 = (k: keyof Usage) => Number((((after[k] - before[k]) / N) * 1000 / 2 ** 20).toFixed(2));
  const rss = per1000("rss");
  const heapUsed = per1000("heapUsed");
  const external = per1000("external");
  return { rss, heapUsed, external, arrayBuffers: per1000("arrayBuffers"), native: Number((rss - heapUsed - external).toFixed(2)) };
}

if (process.argv[2] === "serve") {
  await serve(process.argv[3] as Variant, process.argv[4]!);
} else {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-tls-memory-"));
  try {
    makeCertificates(dir);
    const report: Record<string, unknown> = { connections: N, node: process.version, openssl: process.versions.openssl, loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))) };
    for (const variant of ["plain", "tls", "tls-no-client-cert"] as const) report[variant] = await measure(variant, dir);
    process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
