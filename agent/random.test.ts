import { describe, expect, it } from "vitest";
import { randomBytes } from "./random";

describe("randomBytes", () => {
  it("gives as many bytes as asked, different each time", async () => {
    const a = await randomBytes(32);
    const b = await randomBytes(32);
    expect(a).toHaveLength(32);
    expect(b).toHaveLength(32);
    expect(a.equals(b)).toBe(false);
    expect(await randomBytes(0)).toHaveLength(0);
  });
});
