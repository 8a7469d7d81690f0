import { describe, expect, it } from "vitest";
import {
  formatSelector,
  isValidLabelKey,
  isValidLabelValue,
  matchesSelector,
  parseLabels,
  parseSelector,
  SelectorError,
  type LabelSelector,
  type Labels,
} from "./label-selector";

describe("parseSelector: valid selectors", () => {
  const rows: [string, LabelSelector][] = [
    ["", []],
    ["   ", []],
    ["site=lab", [{ key: "site", op: "=", values: ["lab"] }]],
    ["site==lab", [{ key: "site", op: "=", values: ["lab"] }]],
    ["tier!=db", [{ key: "tier", op: "!=", values: ["db"] }]],
    ["site=", [{ key: "site", op: "=", values: [""] }]],
    ["env in (dev,test)", [{ key: "env", op: "in", values: ["dev", "test"] }]],
    ["env in(dev)", [{ key: "env", op: "in", values: ["dev"] }]],
    ["env notin (prod)", [{ key: "env", op: "notin", values: ["prod"] }]],
    ["gpu", [{ key: "gpu", op: "exists", values: [] }]],
    ["!legacy", [{ key: "legacy", op: "!exists", values: [] }]],
    ["example.com/role=web", [{ key: "example.com/role", op: "=", values: ["web"] }]],
    ["k_1.x-y=V_1.2-3", [{ key: "k_1.x-y", op: "=", values: ["V_1.2-3"] }]],
    [
      "site=lab,env in (dev,test),!legacy,tier!=db,gpu",
      [
        { key: "site", op: "=", values: ["lab"] },
        { key: "env", op: "in", values: ["dev", "test"] },
        { key: "legacy", op: "!exists", values: [] },
        { key: "tier", op: "!=", values: ["db"] },
        { key: "gpu", op: "exists", values: [] },
      ],
    ],
    // commas inside parentheses belong to the value list, not the term list
    [
      "env in (dev,test,qa),zone notin (a,b)",
      [
        { key: "env", op: "in", values: ["dev", "test", "qa"] },
        { key: "zone", op: "notin", values: ["a", "b"] },
      ],
    ],
    // whitespace around everything
    [
      "  site = lab ,  env   in  ( dev , test ) ,  ! legacy , tier != db ",
      [
        { key: "site", op: "=", values: ["lab"] },
        { key: "env", op: "in", values: ["dev", "test"] },
        { key: "legacy", op: "!exists", values: [] },
        { key: "tier", op: "!=", values: ["db"] },
      ],
    ],
  ];
  it.each(rows)("%j", (input, expected) => {
    expect(parseSelector(input)).toEqual(expected);
  });
});

describe("parseSelector: invalid selectors throw SelectorError", () => {
  const rows: [string, string, RegExp][] = [
    ["empty term between commas", "a,,b", /empty requirement/],
    ["leading comma", ",a", /empty requirement/],
    ["trailing comma", "a=1,", /empty requirement/],
    ["bad key (leading dash)", "-bad=1", /invalid label key/],
    ["bad key (space inside)", "ke y=1", /invalid label key/],
    ["bad key (too long)", `${"k".repeat(64)}=1`, /invalid label key/],
    ["bad value (space)", "site=la b", /invalid label value/],
    ["bad value (too long)", `site=${"v".repeat(64)}`, /invalid label value/],
    ["bad value (second '=')", "a=b=c", /invalid label value/],
    ["bad value inside a set", "env in (dev,te st)", /invalid label value/],
    ["unbalanced '('", "env in (dev,test", /unbalanced '\('/],
    ["unbalanced ')'", "env in dev,test)", /unbalanced '\)'/],
    ["')' before '('", ")(", /unbalanced '\)'/],
    ["empty set", "env in ()", /needs at least one value/],
    ["empty set with blanks", "env notin (  )", /needs at least one value/],
    ["nested parentheses", "env in ((dev))", /invalid label value/],
    ["bare '!'", "!", /invalid label key/],
    ["operator without key", "=lab", /invalid label key/],
    ["set operator glued to key", "envin (dev)", /invalid label key/],
  ];
  it.each(rows)("%s: %j", (_what, input, message) => {
    expect(() => parseSelector(input)).toThrow(SelectorError);
    expect(() => parseSelector(input)).toThrow(message);
  });
});

describe("matchesSelector (Kubernetes semantics)", () => {
  const labels: Labels = { site: "lab", env: "dev", gpu: "true", blank: "" };
  const rows: [string, boolean][] = [
    ["", true],
    ["site=lab", true],
    ["site==lab", true],
    ["site=hq", false],
    ["zone=a", false], // missing key never equals
    ["blank=", true],
    ["site!=hq", true],
    ["site!=lab", false],
    ["zone!=a", true], // != matches when the key is missing
    ["env in (dev,test)", true],
    ["env in (prod)", false],
    ["zone in (a,b)", false], // missing key is in no set
    ["env notin (prod)", true],
    ["env notin (test,dev)", false],
    ["zone notin (a)", true], // notin matches when the key is missing
    ["gpu", true],
    ["blank", true], // exists with an empty value
    ["zone", false],
    ["!zone", true],
    ["!gpu", false],
    // inherited object properties are not labels
    ["constructor", false],
    ["!toString", true],
    ["constructor!=x", true],
    // every requirement must hold (AND)
    ["site=lab,env in (dev,test),!legacy,gpu", true],
    ["site=lab,env notin (dev)", false],
    ["site=hq,env=dev", false],
  ];
  it.each(rows)("%j on %j → %s", (selector, expected) => {
    expect(matchesSelector(parseSelector(selector), labels)).toBe(expected);
  });

  it("the empty selector matches a device with no labels; requirements on keys do so only for != / notin / !key", () => {
    expect(matchesSelector(parseSelector(""), {})).toBe(true);
    expect(matchesSelector(parseSelector("a!=1,b notin (2),!c"), {})).toBe(true);
    expect(matchesSelector(parseSelector("a"), {})).toBe(false);
  });
});

describe("formatSelector", () => {
  it.each([
    ["site=lab", "site=lab"],
    ["site==lab", "site=lab"],
    ["tier!=db", "tier!=db"],
    ["env in (dev,test)", "env in (dev,test)"],
    ["  env  notin ( a , b )", "env notin (a,b)"],
    ["gpu", "gpu"],
    ["!legacy", "!legacy"],
    ["site=lab,env in (dev,test),!legacy,tier!=db,gpu", "site=lab,env in (dev,test),!legacy,tier!=db,gpu"],
    ["", ""],
  ])("%j formats as %j", (input, expected) => {
    expect(formatSelector(parseSelector(input))).toBe(expected);
  });

  it.each([
    "site=lab",
    "a=,b!=",
    "example.com/role in (web,db),!legacy",
    " x notin (1, 2 ,3) , y , z==q ",
    "site=lab,env in (dev,test),!legacy,tier!=db,gpu",
  ])("round-trips %j: parse(format(parse(s))) equals parse(s)", (input) => {
    const parsed = parseSelector(input);
    expect(parseSelector(formatSelector(parsed))).toEqual(parsed);
  });
});

describe("parseLabels", () => {
  it.each([
    ["site=lab,env=dev", { site: "lab", env: "dev" }],
    [" site = lab , env=dev ", { site: "lab", env: "dev" }],
    ["", {}],
    ["a=1,,b=2", { a: "1", b: "2" }],
    ["a=", { a: "" }],
    ["a=1,a=2", { a: "2" }],
    ["example.com/role=web", { "example.com/role": "web" }],
  ] as [string, Labels][])("%j → %j", (input, expected) => {
    expect(parseLabels(input)).toEqual(expected);
  });

  it.each([
    ["no '='", "novalue", /not key=value/],
    ["empty key", "=v", /not key=value/],
    ["bad key", "bad key=v", /invalid label key/],
    ["bad value", "a=b c", /invalid label value/],
    ["second '='", "a=b=c", /invalid label value/],
  ])("rejects %s: %j", (_what, input, message) => {
    expect(() => parseLabels(input)).toThrow(SelectorError);
    expect(() => parseLabels(input)).toThrow(message);
  });
});

describe("label key and value syntax", () => {
  it.each([
    ["a", true],
    ["A1", true],
    ["a.b-c_d", true],
    ["k".repeat(63), true],
    ["k".repeat(64), false],
    ["prefix.io/name", true],
    ["Prefix.io/name", false], // DNS prefix is lowercase
    ["-a", false],
    ["a-", false],
    ["", false],
  ])("key %j → %s", (key, ok) => {
    expect(isValidLabelKey(key)).toBe(ok);
  });

  it.each([
    ["", true],
    ["v", true],
    ["v".repeat(63), true],
    ["v".repeat(64), false],
    ["a b", false],
    ["-a", false],
    ["a.", false],
  ])("value %j → %s", (value, ok) => {
    expect(isValidLabelValue(value)).toBe(ok);
  });
});
