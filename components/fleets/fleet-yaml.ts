/**
 * The fleet editor's model: the YAML text is the one source of truth; the form reads its
 * common fields from the parsed document and writes them back into it (the `yaml` package's
 * Document keeps the rest, comments included). Validation is lib/fleet-spec's FleetInput,
 * the schema the server checks with, through lib/yaml-problems (each problem at its line). Pure.
 */
import YAML, { isMap, isScalar, isSeq, type Document } from "yaml";
import { FleetInput } from "@/lib/fleet-spec";
import { parseYamlWith, type YamlProblem } from "@/lib/yaml-problems";
import type { Fleet } from "./types";

/** Paths of the fields the form edits. */
export const PATHS = {
  name: ["metadata", "name"],
  version: ["spec", "template", "spec", "version"],
  artifact: ["spec", "template", "spec", "artifact"],
  artifactUrl: ["spec", "template", "spec", "artifact", "url"],
  artifactSha256: ["spec", "template", "spec", "artifact", "sha256"],
  applications: ["spec", "template", "spec", "applications"],
  matchLabels: ["spec", "selector", "matchLabels"],
} as const;

const TO_STRING = { flowCollectionPadding: false, lineWidth: 0 } as const;

export type Problem = YamlProblem;

export interface ParsedFleet {
  doc: Document | null;
  /** The plain value, when the YAML parsed. */
  value: unknown;
  /** Syntax errors first, else the schema's complaints; empty when valid. */
  problems: Problem[];
  /** The validated object, ready to send. */
  input: FleetInput | null;
}

/** Parses and validates; `expectedName` is the fleet being edited (its name cannot change here). */
export function parseFleetYaml(text: string, expectedName?: string): ParsedFleet {
  const { doc, value, problems, input, lineOf } = parseYamlWith(text, FleetInput, "write a Fleet object");
  if (input && expectedName !== undefined && input.metadata.name !== expectedName) {
    return {
      doc,
      value,
      problems: [{ line: lineOf(PATHS.name), path: "metadata.name", message: `is "${input.metadata.name}": this page edits fleet "${expectedName}" (create a new fleet for another name)` }],
      input: null,
    };
  }
  return { doc, value, problems, input };
}

// ---------------------------------------------------------------------------------------
// From the server's fleet to YAML

/** The template without the defaults the server fills in when empty, so the YAML stays short (same template after defaults). */
function compactTemplate(spec: Fleet["spec"]["template"]["spec"]): Record<string, unknown> {
  const { config, hooks, ...rest } = spec as Fleet["spec"]["template"]["spec"] & { config?: { files?: unknown[] }; hooks?: Record<string, unknown> };
  return {
    ...rest,
    ...(config && (config.files?.length ?? 0) > 0 ? { config } : {}),
    ...(hooks && Object.keys(hooks).length > 0 ? { hooks } : {}),
  };
}

/** A fleet as the editor's YAML: what `drover get fleet NAME -o yaml` applies back, without its status. */
export function fleetToYaml(fleet: Pick<Fleet, "apiVersion" | "kind" | "metadata" | "spec">): string {
  const labels = fleet.metadata.labels;
  const object = {
    apiVersion: fleet.apiVersion,
    kind: fleet.kind,
    metadata: { name: fleet.metadata.name, ...(Object.keys(labels).length > 0 ? { labels } : {}) },
    spec: {
      selector: fleet.spec.selector,
      template: { spec: compactTemplate(fleet.spec.template.spec) },
      ...(fleet.spec.rolloutPolicy ? { rolloutPolicy: fleet.spec.rolloutPolicy } : {}),
    },
  };
  return YAML.stringify(object, TO_STRING);
}

export const NEW_FLEET_YAML = `apiVersion: drover/v1
kind: Fleet
metadata:
  name: my-fleet
spec:
  # Devices whose labels match join the fleet (a device belongs to at most one).
  selector:
    matchLabels:
      fleet: my-fleet
  template:
    spec:
      version: 1.0.0
      applications: []
  # Without a rolloutPolicy a template change goes to every member at once.
  # rolloutPolicy:
  #   canary:
  #     replicas: 1
  #     duration: 10m
  #   successThreshold: 90%
`;

// ---------------------------------------------------------------------------------------
// The form's fields, read from and written into the document

export interface FormApplication {
  name: string;
  /** argv joined by spaces. */
  command: string;
  /** False when an argument holds whitespace or is not a string: edit it in the YAML. */
  editable: boolean;
}

export interface FormModel {
  name: string;
  version: string;
  artifactUrl: string;
  artifactSha256: string;
  applications: FormApplication[];
  matchLabels: { key: string; value: string }[];
  /** Fields whose YAML is not the shape the form edits (it shows them read-only). */
  unsupported: string[];
}

const text = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : "");

export function formFromValue(value: unknown): FormModel {
  const get = (path: readonly string[]): unknown => path.reduce<unknown>((v, k) => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>)[k] : undefined), value);
  const unsupported: string[] = [];
  const apps = get(PATHS.applications);
  const applications: FormApplication[] = [];
  if (Array.isArray(apps)) {
    for (const a of apps) {
      const o = a && typeof a === "object" && !Array.isArray(a) ? (a as Record<string, unknown>) : {};
      const cmd = Array.isArray(o.command) ? o.command : [];
      const editable = cmd.every((c) => typeof c === "string" && c !== "" && !/\s/.test(c));
      applications.push({ name: text(o.name), command: cmd.map(text).join(" "), editable });
    }
  } else if (apps !== undefined && apps !== null) unsupported.push("applications");
  const labels = get(PATHS.matchLabels);
  const matchLabels: FormModel["matchLabels"] = [];
  if (labels && typeof labels === "object" && !Array.isArray(labels)) for (const [key, v] of Object.entries(labels)) matchLabels.push({ key, value: text(v) });
  else if (labels !== undefined && labels !== null) unsupported.push("matchLabels");
  return {
    name: text(get(PATHS.name)),
    version: text(get(PATHS.version)),
    artifactUrl: text(get(PATHS.artifactUrl)),
    artifactSha256: text(get(PATHS.artifactSha256)),
    applications,
    matchLabels,
    unsupported,
  };
}

/** argv from what is typed in the command box: whitespace separates arguments. */
export function splitCommand(line: string): string[] {
  return line.split(/\s+/).filter(Boolean);
}

/** One form edit applied to the YAML text; the text comes back unchanged if it does not parse. */
export type FormEdit =
  | { field: "name" | "version"; value: string }
  | { field: "artifact"; url: string; sha256: string }
  | { field: "application"; index: number; name?: string; command?: string }
  | { field: "addApplication" }
  | { field: "removeApplication"; index: number }
  | { field: "matchLabels"; entries: { key: string; value: string }[] };

/** Sets a scalar; the style is chosen afresh (an empty string was quoted, its next value need not be). */
function setScalar(doc: Document, path: readonly (string | number)[], value: string): void {
  const node = doc.getIn(path, true);
  if (isScalar(node)) {
    node.value = value;
    delete node.type;
  } else doc.setIn(path, value);
}

export function applyFormEdit(source: string, edit: FormEdit): string {
  const doc = YAML.parseDocument(source);
  if (doc.errors.length > 0) return source;
  switch (edit.field) {
    case "name":
      setScalar(doc, PATHS.name, edit.value);
      break;
    case "version":
      setScalar(doc, PATHS.version, edit.value);
      break;
    case "artifact":
      if (edit.url === "" && edit.sha256 === "") doc.deleteIn(PATHS.artifact);
      else {
        setScalar(doc, PATHS.artifactUrl, edit.url);
        setScalar(doc, PATHS.artifactSha256, edit.sha256);
      }
      break;
    case "application": {
      const base = [...PATHS.applications, edit.index];
      if (edit.name !== undefined) setScalar(doc, [...base, "name"], edit.name);
      if (edit.command !== undefined) doc.setIn([...base, "command"], doc.createNode(splitCommand(edit.command), { flow: true }));
      break;
    }
    case "addApplication": {
      const apps = doc.getIn(PATHS.applications, true);
      const app = doc.createNode({ name: "", command: [] });
      if (isSeq(apps)) {
        // `applications: []` is written in flow style: the new entry reads better as a block.
        apps.flow = false;
        apps.items.push(app);
      } else doc.setIn(PATHS.applications, doc.createNode([{ name: "", command: [] }]));
      const added = doc.getIn([...PATHS.applications, (isSeq(apps) ? apps.items.length : 1) - 1, "command"], true);
      if (isSeq(added)) added.flow = true;
      break;
    }
    case "removeApplication":
      doc.deleteIn([...PATHS.applications, edit.index]);
      break;
    case "matchLabels": {
      const map = doc.createNode(Object.fromEntries(edit.entries.map((e) => [e.key, e.value])));
      if (isMap(map) && edit.entries.length === 0) map.flow = true;
      doc.setIn(PATHS.matchLabels, map);
      break;
    }
  }
  return doc.toString(TO_STRING);
}
