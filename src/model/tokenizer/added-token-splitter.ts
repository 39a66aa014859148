// Splitting text around added tokens (`<|im_start|>`, `<think>`, …) before normalization and
// pre-tokenization: matches are exact, the leftmost wins and among those the longest, and the
// matched tokens are emitted whole, never merged with their neighbours.

/** A stretch of input: ordinary text, or one added token. */
export type TextSegment = { text: string; addedTokenId?: undefined } | { text: string; addedTokenId: number };

/** Splits text at exact occurrences of a fixed set of added tokens. */
export class AddedTokenSplitter {
  private readonly pattern: RegExp | undefined;
  private readonly ids: ReadonlyMap<string, number>;

  /** Builds a splitter for the given token contents and their ids. */
  constructor(tokens: ReadonlyMap<string, number>) {
    this.ids = tokens;
    // Longest first, so that at one position the longest token is the alternative that matches.
    const contents = [...tokens.keys()].sort((a, b) => b.length - a.length || (a < b ? -1 : a > b ? 1 : 0));
    this.pattern =
      contents.length === 0
        ? undefined
        : new RegExp(contents.map((content) => content.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')).join('|'), 'gu');
  }

  /** The segments of `text` in order; empty text segments are left out. */
  split(text: string): TextSegment[] {
    if (this.pattern === undefined) return text === '' ? [] : [{ text }];
    const segments: TextSegment[] = [];
    let start = 0;
    this.pattern.lastIndex = 0;
    for (let match = this.pattern.exec(text); match !== null; match = this.pattern.exec(text)) {
      if (match.index > start) segments.push({ text: text.slice(start, match.index) });
      segments.push({ text: match[0], addedTokenId: this.ids.get(match[0]) as number });
      start = match.index + match[0].length;
    }
    if (start < text.length) segments.push({ text: text.slice(start) });
    return segments;
  }
}
