/**
 * The list pages keep their filters in the URL. The label selector is `labelSelector` there,
 * as the REST API names it (issue 10: `/devices?labelSelector=…` was silently ignored while
 * the console read `selector`); links made before still work.
 */
import { describe, expect, it } from "vitest";
import { deviceParamsToSearch, parseDeviceParams } from "@/components/devices/params";
import { actionParamsToSearch, parseActionParams } from "@/components/actions/params";

describe("label selector in the URL", () => {
  it.each([
    ["devices", (q: string) => parseDeviceParams(new URLSearchParams(q)).selector],
    ["actions", (q: string) => parseActionParams(new URLSearchParams(q)).selector],
  ])("%s: reads labelSelector, and selector from older links", (_page, read) => {
    expect(read("labelSelector=site%3Dlab")).toBe("site=lab");
    expect(read("selector=site%3Dlab")).toBe("site=lab");
    expect(read("labelSelector=a%3D1&selector=b%3D2")).toBe("a=1");
  });

  it("devices: writes labelSelector, and reads back what it wrote", () => {
    const p = parseDeviceParams(new URLSearchParams("labelSelector=env+in+(dev,test)"));
    const search = deviceParamsToSearch(p);
    expect(search).toBe("?labelSelector=env+in+%28dev%2Ctest%29");
    expect(parseDeviceParams(new URLSearchParams(search.slice(1))).selector).toBe("env in (dev,test)");
  });

  it("actions: writes labelSelector", () => {
    const p = parseActionParams(new URLSearchParams("selector=site%3Dlab&kind=exec"));
    expect(actionParamsToSearch(p)).toContain("labelSelector=site%3Dlab");
    expect(actionParamsToSearch(p)).not.toMatch(/(^|[?&])selector=/);
  });
});
