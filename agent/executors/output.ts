/**
 * Bounded capture of an action's output: at most `limit` bytes are kept, the head and the
 * tail (where a command says what it is doing and how it ended), with a marker saying how
 * much was cut from the middle, the marker included in the limit (so that the server,
 * which keeps 64 Ki characters, never cuts again). Cuts fall on UTF-8 character boundaries.
 */
export const MAX_OUTPUT_BYTES = 64 * 1024;

export class OutputCapture {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  /** Every byte written, kept or not. */
  total = 0;

  constructor(limit = MAX_OUTPUT_BYTES) {
    this.headLimit = Math.floor(limit / 2);
    this.tailLimit = limit - this.headLimit;
  }

  write(chunk: Buffer | string): void {
    let data = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    this.total += data.length;
    if (this.headBytes < this.headLimit) {
      const take = Math.min(data.length, this.headLimit - this.headBytes);
      this.head.push(data.subarray(0, take));
      this.headBytes += take;
      data = data.subarray(take);
    }
    if (data.length === 0) return;
    this.tail.push(data);
    this.tailBytes += data.length;
    // Drop whole chunks that fall out of the tail window; text() trims the rest.
    while (this.tail.length > 1 && this.tailBytes - (this.tail[0]?.length ?? 0) >= this.tailLimit) {
      this.tailBytes -= this.tail.shift()?.length ?? 0;
    }
  }

  /** The output kept; when cut, the marker fits in the limit too (the whole is at most `limit` bytes). */
  text(): string {
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    if (this.total <= this.headLimit + this.tailLimit) return Buffer.concat([head, tail]).toString("utf8");
    // Room for the marker: its length with the largest count it could show.
    const reserve = Buffer.byteLength(marker(this.total));
    const headKeep = Math.max(0, this.headLimit - Math.ceil(reserve / 2));
    const tailKeep = Math.max(0, this.tailLimit - Math.floor(reserve / 2));
    const headCut = wholeChars(head.subarray(0, headKeep));
    let tailCut = tail.subarray(tail.length - tailKeep);
    let skip = 0;
    while (skip < tailCut.length && skip < 4 && isContinuation(tailCut[skip])) skip++;
    tailCut = tailCut.subarray(skip);
    const dropped = this.total - headCut.length - tailCut.length;
    return `${headCut.toString("utf8")}${marker(dropped)}${tailCut.toString("utf8")}`;
  }
}

function marker(dropped: number): string {
  return `\n…[truncated ${dropped} bytes]…\n`;
}

/** `text` cut to at most `limit` bytes (head and tail kept, as OutputCapture does). */
export function truncateOutput(text: string, limit = MAX_OUTPUT_BYTES): string {
  if (text.length * 3 <= limit) return text; // cannot exceed the limit in bytes
  const capture = new OutputCapture(limit);
  capture.write(text);
  return capture.text();
}

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** `buf` without an incomplete UTF-8 sequence at its end. */
function wholeChars(buf: Buffer): Buffer {
  let i = buf.length - 1;
  while (i >= 0 && buf.length - i <= 4 && isContinuation(buf[i])) i--;
  if (i < 0) return buf;
  const lead = buf[i] ?? 0;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return buf.length - i >= need ? buf : buf.subarray(0, i);
}
