/**
 * Certificates for the TLS tests (issue 23), made with the openssl command: a CA, and server
 * certificates it signs for this machine's names (localhost, 127.0.0.1), so a test can start a
 * server on them (DROVER_TLS_CERT, DROVER_TLS_KEY, DROVER_TLS_CA) and have clients trust, pin or
 * refuse it. ECDSA P-256, as quick to make as to use.
 */
import { execFileSync } from "node:child_process";
import { createHash, X509Certificate } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export interface TestCa {
  name: string;
  /** The CA's certificate file and text. */
  caFile: string;
  caPem: string;
  caKeyFile: string;
  /** SHA-256 of its DER, lowercase hex (lib/tls-fingerprint.ts). */
  fingerprint: string;
}

export interface TestServerCertificate {
  certFile: string;
  keyFile: string;
}

const openssl = (args: string[], cwd: string) => execFileSync("openssl", args, { cwd, stdio: "pipe" });

/** A new CA in `dir` (its files named after it). */
export function makeTestCa(dir: string, name = "test-ca", subject = name): TestCa {
  fs.mkdirSync(dir, { recursive: true });
  const caFile = path.join(dir, `${name}.pem`);
  const caKeyFile = path.join(dir, `${name}.key`);
  openssl(
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", caKeyFile, "-out", caFile, "-days", "3650", "-subj", `/CN=${subject}`,
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
    dir,
  );
  const caPem = fs.readFileSync(caFile, "utf8");
  return { name, caFile, caPem, caKeyFile, fingerprint: createHash("sha256").update(new X509Certificate(caPem).raw).digest("hex") };
}

/** A server certificate `ca` signs for localhost and 127.0.0.1, as `name`.pem and `name`.key in `dir`. */
export function issueTestServerCertificate(ca: TestCa, dir: string, name = "server"): TestServerCertificate {
  const certFile = path.join(dir, `${name}.pem`);
  const keyFile = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const ext = path.join(dir, `${name}.ext`);
  fs.writeFileSync(ext, "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n");
  openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", keyFile, "-out", csr, "-subj", "/CN=localhost"], dir);
  openssl(["x509", "-req", "-in", csr, "-CA", ca.caFile, "-CAkey", ca.caKeyFile, "-CAcreateserial", "-out", certFile, "-days", "365", "-extfile", ext], dir);
  return { certFile, keyFile };
}

/** One request over https trusting `ca` alone (global fetch cannot be given a CA): status, headers and body text. */
export function httpsRequest(
  url: string,
  /** cert and key: a client certificate to present (issue 23, device certificates). */
  options: { ca: string; method?: string; headers?: Record<string, string>; body?: string; cert?: string; key?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return import("node:https").then(
    ({ default: https }) =>
      new Promise((resolve, reject) => {
        const req = https.request(url, { method: options.method ?? "GET", headers: options.headers, ca: options.ca, cert: options.cert, key: options.key, agent: false }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        });
        req.on("error", reject);
        req.end(options.body);
      }),
  );
}
