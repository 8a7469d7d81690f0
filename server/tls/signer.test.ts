import { execFileSync } from "node:child_process";
import { X509Certificate, createPrivateKey } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { x509Signer } from "./signer";

describe("x509Signer (DROVER_TLS=auto's certificates)", () => {
  it("makes a CA that signs certificates only, and a server certificate for the names, signed by it, valid the days asked", async () => {
    const now = new Date("2026-11-28T12:00:00Z");
    const ca = await x509Signer.createCa("Drover CA test, with a comma", now);
    const caCert = new X509Certificate(ca.certPem);
    expect(caCert.ca).toBe(true);
    expect(caCert.subject).toContain("Drover CA test");
    expect(caCert.verify(caCert.publicKey)).toBe(true);
    expect(new Date(caCert.validTo).getUTCFullYear()).toBe(2036);

    const issued = await x509Signer.issueServerCertificate(ca, { dns: ["drover.example", "localhost"], ips: ["127.0.0.1", "::1"] }, 397, now);
    const cert = new X509Certificate(issued.certPem);
    expect(cert.ca).toBe(false);
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.checkIssued(caCert)).toBe(true);
    expect(cert.checkHost("drover.example")).toBe("drover.example");
    expect(cert.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(cert.checkHost("other.example")).toBeUndefined();
    expect(Math.round((new Date(cert.validTo).getTime() - now.getTime()) / 86_400_000)).toBe(397);
    expect(cert.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
    // Its key is the certificate's.
    expect(cert.checkPrivateKey((await import("node:crypto")).createPrivateKey(issued.keyPem))).toBe(true);
    // Two certificates never share a serial number.
    const again = new X509Certificate((await x509Signer.issueServerCertificate(ca, { dns: ["localhost"], ips: [] }, 1, now)).certPem);
    expect(again.serialNumber).not.toBe(cert.serialNumber);
  });
});

describe("x509Signer's device certificates (issue 23)", () => {
  it.each([["EC P-256", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]], ["RSA 2048", ["-newkey", "rsa:2048"]]])(
    "signs a CSR made by openssl (%s), as another agent would: for its key, under the server's names, whatever the request asked",
    async (_kind, keyArgs) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-csr-"));
      try {
        const [key, csr] = [path.join(dir, "device.key"), path.join(dir, "device.csr")];
        execFileSync("openssl", ["req", "-new", ...keyArgs, "-nodes", "-keyout", key, "-subj", "/CN=admin/O=evil", "-addext", "subjectAltName=DNS:drover.example", "-out", csr], { stdio: "ignore" });
        const now = new Date();
        const ca = await x509Signer.createCa("test CA", now);
        const issued = await x509Signer.issueClientCertificate(ca, fs.readFileSync(csr, "utf8"), { id: "d-1", name: "edge-1" }, 86_400, now);
        const cert = new X509Certificate(issued.certPem);
        expect(cert.subject).toBe("CN=edge-1");
        expect(cert.subjectAltName).toBe("URI:urn:drover:device:d-1");
        expect(cert.ca).toBe(false);
        expect(cert.checkIssued(new X509Certificate(ca.certPem))).toBe(true);
        expect(cert.checkPrivateKey(createPrivateKey(fs.readFileSync(key, "utf8")))).toBe(true);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
