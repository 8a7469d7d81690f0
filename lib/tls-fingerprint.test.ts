import { describe, expect, it } from "vitest";
import { parseFingerprint } from "./tls-fingerprint";

const HEX = "bd37b7a59c20bad8394a612b156f614ec6fddddb2d0dfd90ac73ae41b6714caa";
const COLONS = HEX.toUpperCase().replace(/(..)(?=.)/g, "$1:");

describe("parseFingerprint", () => {
  it.each([
    ["64 lowercase hex digits, as the console shows it", HEX, HEX],
    ["openssl's colon-separated upper case", COLONS, HEX],
    ["with a sha256: prefix and blanks around", `  sha256:${HEX}\n`, HEX],
    ["one digit short", HEX.slice(1), null],
    ["a digit that is not hex", `${HEX.slice(1)}g`, null],
    ["a SHA-1 (40 digits)", HEX.slice(0, 40), null],
    ["empty", "", null],
  ])("%s", (_rule, text, expected) => {
    expect(parseFingerprint(text)).toBe(expected);
  });
});
