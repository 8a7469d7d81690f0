/** The devices page's sort and decommissioned toggle in the URL (issue 10). */
import { describe, expect, it } from "vitest";
import { deviceParamsToSearch, parseDeviceParams } from "@/components/devices/params";

const parse = (q: string) => parseDeviceParams(new URLSearchParams(q));

describe("device list URL: sort, order, decommissioned", () => {
  it("defaults: by name ascending, decommissioned hidden, nothing written", () => {
    const p = parse("");
    expect(p).toMatchObject({ sort: "name", order: "asc", showDecommissioned: false });
    expect(deviceParamsToSearch(p)).toBe("");
  });

  it("reads back what it wrote", () => {
    const p = { ...parse("labelSelector=site%3Dlab"), sort: "lastSeen" as const, order: "desc" as const, showDecommissioned: true };
    const search = deviceParamsToSearch(p);
    expect(search).toBe("?labelSelector=site%3Dlab&sort=lastSeen&order=desc&decommissioned=show");
    expect(parse(search.slice(1))).toEqual(p);
  });

  it("an unknown sort or order falls back to the default instead of a failing list", () => {
    expect(parse("sort=colour&order=sideways")).toMatchObject({ sort: "name", order: "asc" });
    expect(parse("decommissioned=yes").showDecommissioned).toBe(false);
  });
});
