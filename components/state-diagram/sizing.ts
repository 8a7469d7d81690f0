/**
 * How big a state diagram is drawn: pure functions from the laid-out diagram's bounds and the
 * box it is drawn in to a zoom, a box height and a viewport. The rule they keep: text is never
 * drawn below MIN_TEXT_PX on screen. A diagram wider than its box is not shrunk past that; it
 * is panned instead, centred on the current state.
 */

/** The smallest on-screen text size a diagram may show (state names, edge labels, group names). */
export const MIN_TEXT_PX = 12;
/** Every text in a diagram is drawn at this CSS size (nodes.tsx, transition-edge.tsx) at zoom 1. */
export const DIAGRAM_FONT_PX = 13;
/** The smallest zoom anyone can reach, by fitting or by the zoom-out button: text stays ≥ MIN_TEXT_PX. */
export const READABLE_ZOOM = MIN_TEXT_PX / DIAGRAM_FONT_PX;
/** Space kept between the diagram and its box's edges, in screen pixels. */
export const VIEW_PADDING = 16;

export interface Bounds {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Size {
  width: number;
  height: number;
}

export interface Viewport {
  x: number;
  y: number;
  zoom: number;
}

export interface ZoomRange {
  minZoom: number;
  maxZoom: number;
}

/** Text never below READABLE_ZOOM; a small diagram may be drawn larger than its designed size. */
export const EXPANDED_ZOOM: ZoomRange = { minZoom: READABLE_ZOOM, maxZoom: 1.5 };
/** How far the zoom-in button goes. */
export const MAX_ZOOM = 2.5;

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** The zoom that fits `content` across `width` (and within `height`, when given), kept in range. */
export function fitZoom(content: Size, box: { width: number; height?: number }, range: ZoomRange, padding = VIEW_PADDING): number {
  if (content.width <= 0 || content.height <= 0) return range.maxZoom;
  const across = (box.width - 2 * padding) / content.width;
  const down = box.height === undefined ? Infinity : (box.height - 2 * padding) / content.height;
  return clamp(Math.min(across, down), range.minZoom, range.maxZoom);
}

/** One axis: centre the content when it fits; otherwise show `focus` in the middle, never past an edge. */
function place(start: number, length: number, box: number, zoom: number, padding: number, focus: number | undefined): number {
  const drawn = length * zoom;
  if (drawn <= box - 2 * padding) return (box - drawn) / 2 - start * zoom;
  const first = padding - start * zoom; // content's start at the box's start
  const last = box - padding - (start + length) * zoom; // content's end at the box's end
  if (focus === undefined) return first;
  return clamp(box / 2 - focus * zoom, last, first);
}

/**
 * The viewport that shows `content` in `box`: fitted within the zoom range, centred, or when
 * it cannot fit at the smallest readable zoom, centred on `focus` (the current state).
 */
export function fitViewport(content: Bounds, box: Size, range: ZoomRange, focus?: { x: number; y: number } | null, padding = VIEW_PADDING): Viewport {
  const zoom = fitZoom(content, box, range, padding);
  return {
    zoom,
    x: place(content.x, content.width, box.width, zoom, padding, focus?.x),
    y: place(content.y, content.height, box.height, zoom, padding, focus?.y),
  };
}

/** How much of a diagram would be out of view (0: none, 1: all) in a box `boxWidth` wide, at most `maxHeight` tall. */
export function hiddenShare(content: Size, boxWidth: number, maxHeight: number, range: ZoomRange, padding = VIEW_PADDING): number {
  if (content.width <= 0 || content.height <= 0) return 0;
  const zoom = fitZoom(content, { width: boxWidth, height: maxHeight }, range, padding);
  const shownAcross = Math.min(1, (boxWidth - 2 * padding) / (content.width * zoom));
  const shownDown = Math.min(1, (maxHeight - 2 * padding) / (content.height * zoom));
  return 1 - Math.max(0, shownAcross) * Math.max(0, shownDown);
}

/**
 * Which of several layouts of one diagram (left-to-right, top-to-bottom) to draw in a box:
 * the one that leaves the least out of view at a readable zoom; the first (the diagram's own
 * direction) when they do equally well.
 */
export function chooseLayout(candidates: readonly Size[], boxWidth: number, maxHeight: number, range: ZoomRange, padding = VIEW_PADDING): number {
  let best = 0;
  let bestHidden = Infinity;
  candidates.forEach((c, i) => {
    const hidden = hiddenShare(c, boxWidth, maxHeight, range, padding);
    if (hidden < bestHidden - 0.02) {
      best = i;
      bestHidden = hidden;
    }
  });
  return best;
}

/** The zoom one press of zoom in / zoom out reaches, kept within [minZoom, MAX_ZOOM]. */
export function stepZoom(zoom: number, direction: 1 | -1, minZoom: number = READABLE_ZOOM): number {
  const next = direction > 0 ? zoom * 1.25 : zoom / 1.25;
  // Within a hair of the floor counts as the floor, so one press never leaves a sliver.
  return clamp(next < minZoom * 1.01 ? minZoom : next, minZoom, MAX_ZOOM);
}

/** Whether some of the diagram is out of view at this viewport: the view then says it pans. */
export function overflows(content: Bounds, box: Size, zoom: number, padding = VIEW_PADDING): boolean {
  return content.width * zoom > box.width - 2 * padding + 0.5 || content.height * zoom > box.height - 2 * padding + 0.5;
}
