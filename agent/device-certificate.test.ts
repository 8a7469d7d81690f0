import { spawnSync } from "node:child_process";
import { X509Certificate, createPrivateKey } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { certificateRequest, newDeviceKey } from "./device-certificate";
import { InvalidCsr, verifiedCsr, x509Signer } from "../server/tls/signer";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drover-csr-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("the agent's certificate signing request (hand-written PKCS#10)", () => {
  it.each([["edge-1"], ["a name of 200 characters: " + "x".repeat(174)], ["non-ascii é ✓"]])("is one openssl verifies, for %s", (name) => {
    const file = path.join(dir, "req.pem");
    fs.writeFileSync(file, certificateRequest(newDeviceKey(), name));
    const run = spawnSync("openssl", ["req", "-in", file, "-verify", "-noout", "-nameopt", "utf8", "-subject"], { encoding: "utf8" });
    expect(run.status).toBe(0);
    expect(run.stdout + run.stderr).toContain("verify OK");
    expect(run.stdout).toContain(`CN=${name}`);
  });

  it("is one the server's signer accepts, signing the device's public key under the name it chooses", async () => {
    const key = newDeviceKey();
    const now = new Date();
    const ca = await x509Signer.createCa("test CA", now);
    const issued = await x509Signer.issueClientCertificate(ca, certificateRequest(key, "what the device says"), { id: "0b6c3d9e-1", name: "edge-7" }, 3600, now);
    const cert = new X509Certificate(issued.certPem);
    expect(cert.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(cert.checkIssued(new X509Certificate(ca.certPem))).toBe(true);
    expect(cert.subject).toBe("CN=edge-7");
    expect(cert.subjectAltName).toBe("URI:urn:drover:device:0b6c3d9e-1");
    expect(cert.keyUsage).toEqual(["1.3.6.1.5.5.7.3.2"]);
    expect(cert.fingerprint256.replaceAll(":", "").toLowerCase()).toBe(issued.fingerprint);
    expect(issued.notAfter.getTime()).toBe(Math.floor((now.getTime() + 3600_000) / 1000) * 1000);
  });

  it("is refused when it is not a request or its signature is not its key's", async () => {
    await expect(verifiedCsr("hello")).rejects.toBeInstanceOf(InvalidCsr);
    const good = certificateRequest(newDeviceKey(), "edge-1");
    const der = Buffer.from(good.replace(/-----[^-]+-----/g, "").replace(/\s/g, ""), "base64");
    der[der.length - 5] = der[der.length - 5]! ^ 0xff; // inside the signature
    const bad = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64")}\n-----END CERTIFICATE REQUEST-----\n`;
    await expect(verifiedCsr(bad)).rejects.toThrow(/signature|PKCS#10/);
    await expect(verifiedCsr(good)).resolves.toBeDefined();
  });
});
