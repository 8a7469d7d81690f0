/**
 * Text widths measured with the page's own font, so a state's box fits its name whatever font
 * the browser picks (DejaVu Sans on Linux is a fifth wider than the estimate's average).
 */
import { estimateText, type TextMeasure } from "./layout";
import { DIAGRAM_FONT_PX } from "./sizing";

let measurer: TextMeasure | null = null;

export function browserTextMeasure(): TextMeasure {
  if (measurer) return measurer;
  if (typeof document === "undefined") return estimateText;
  const ctx = document.createElement("canvas").getContext("2d");
  if (!ctx) return estimateText;
  const family = getComputedStyle(document.body).fontFamily || "sans-serif";
  const cache = new Map<string, number>();
  measurer = (text, weight) => {
    const key = `${weight}\u0000${text}`;
    let w = cache.get(key);
    if (w === undefined) {
      ctx.font = `${weight === "medium" ? 500 : 400} ${DIAGRAM_FONT_PX}px ${family}`;
      // A pixel of slack per ten characters: canvas and DOM text can differ by sub-pixels.
      w = ctx.measureText(text).width + text.length / 10;
      cache.set(key, w);
    }
    return w;
  };
  return measurer;
}
