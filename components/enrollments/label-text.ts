/**
 * What an operator types in the labels editor, read with the server's own label rules
 * (lib/label-selector.ts, LabelsSchema): `key=value`, several separated by commas or spaces.
 * Pure, so the editor can say what is wrong while it is typed.
 */
import { isValidLabelKey, isValidLabelValue, type Labels } from "@/lib/label-selector";

/** As LabelsSchema (lib/protocol.ts): a device carries at most 64 labels. */
export const MAX_LABELS = 64;

export type LabelText = { ok: true; labels: Labels } | { ok: false; error: string };

export function parseLabelText(text: string): LabelText {
  const labels: Labels = {};
  for (const part of text.split(/[\s,]+/).filter(Boolean)) {
    const at = part.indexOf("=");
    if (at < 0) return { ok: false, error: `“${part}”: write key=value, e.g. site=lab` };
    const key = part.slice(0, at);
    const value = part.slice(at + 1);
    if (!isValidLabelKey(key)) {
      return { ok: false, error: `“${key}” is not a valid key: letters, digits, '-', '_' and '.' (63 at most, starting and ending alphanumeric), with an optional prefix such as example.com/` };
    }
    if (!isValidLabelValue(value)) {
      return { ok: false, error: `“${value}” is not a valid value for ${key}: letters, digits, '-', '_' and '.' (63 at most, starting and ending alphanumeric), or empty` };
    }
    labels[key] = value;
  }
  return { ok: true, labels };
}

/** The device's labels once approved: the requested ones with the operator's over them. */
export function mergedLabels(requested: Labels, added: Labels): Labels {
  return { ...requested, ...added };
}

/** Why these added labels cannot be sent for these requests, or null. */
export function labelsProblem(added: Labels, requested: Labels[]): string | null {
  const most = Math.max(0, ...requested.map((r) => Object.keys(mergedLabels(r, added)).length));
  return most > MAX_LABELS ? `A device would carry ${most} labels with these; ${MAX_LABELS} at most.` : null;
}
