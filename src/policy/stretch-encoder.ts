// Tokenizing chat text fast: a tokenizer splits text at its added tokens before anything else and
// encodes the stretches between them independently, so splitting at the chat markers first and
// caching each stretch's tokens gives exactly tokenizer.encode(text) while encoding recurring
// stretches ("user\n", "\n\n", a teammate's observation of the same room) once. Used by the harness
// for context and by scripted policies for their actions.

import { END_OF_TEXT, IM_END, IM_START, THINK_CLOSE, THINK_OPEN, TOOL_CALL_CLOSE, TOOL_CALL_OPEN, TOOL_RESPONSE_CLOSE, TOOL_RESPONSE_OPEN } from '../model/chat/chat-markers.js';
import type { Tokenizer } from '../model/tokenizer/tokenizer.js';

const CHAT_MARKERS = [IM_START, IM_END, END_OF_TEXT, TOOL_CALL_OPEN, TOOL_CALL_CLOSE, TOOL_RESPONSE_OPEN, TOOL_RESPONSE_CLOSE, THINK_OPEN, THINK_CLOSE];

/** One stretch of text and its tokens: a chat marker (one token) or the text between markers. */
export interface EncodedStretch {
  /** Character offset where the stretch starts. */
  readonly start: number;
  /** Character offset just past it. */
  readonly end: number;
  /** Its tokens. */
  readonly tokens: readonly number[];
}

/** Options of StretchEncoder. */
export interface StretchEncoderOptions {
  /** The tokenizer. */
  readonly tokenizer: Tokenizer;
  /** Stretches to keep; the cache is emptied when full. */
  readonly maxCachedStretches: number;
}

/** Encodes text like tokenizer.encode, caching the stretches between chat markers. */
export class StretchEncoder {
  private readonly tokenizer: Tokenizer;
  private readonly maxCached: number;
  private readonly markerPattern: RegExp;
  private readonly markerTokens = new Map<string, readonly number[]>();
  private readonly cache = new Map<string, readonly number[]>();

  /** An encoder over `tokenizer`; markers the tokenizer lacks as added tokens are left to it. */
  constructor(options: StretchEncoderOptions) {
    this.tokenizer = options.tokenizer;
    this.maxCached = options.maxCachedStretches;
    for (const marker of CHAT_MARKERS) {
      const id = this.tokenizer.addedTokens.get(marker);
      if (id !== undefined) this.markerTokens.set(marker, [id]);
    }
    const known = [...this.markerTokens.keys()].sort((a, b) => b.length - a.length);
    this.markerPattern = new RegExp(known.map((marker) => marker.replace(/[|]/g, '\\|')).join('|') || '(?!)', 'g');
  }

  /** The stretches of `text` in order, with their tokens. */
  split(text: string): EncodedStretch[] {
    const stretches: EncodedStretch[] = [];
    let start = 0;
    this.markerPattern.lastIndex = 0;
    for (let match = this.markerPattern.exec(text); match !== null; match = this.markerPattern.exec(text)) {
      if (match.index > start) stretches.push({ start, end: match.index, tokens: this.encodeStretch(text.slice(start, match.index)) });
      start = match.index + match[0].length;
      stretches.push({ start: match.index, end: start, tokens: this.markerTokens.get(match[0]) as readonly number[] });
    }
    if (start < text.length) stretches.push({ start, end: text.length, tokens: this.encodeStretch(text.slice(start)) });
    return stretches;
  }

  /** The tokens of `text`, equal to tokenizer.encode(text). */
  encode(text: string): number[] {
    const tokens: number[] = [];
    const add = (ids: readonly number[]): void => {
      for (let i = 0; i < ids.length; i += 1) tokens.push(ids[i]);
    };
    let start = 0;
    this.markerPattern.lastIndex = 0;
    for (let match = this.markerPattern.exec(text); match !== null; match = this.markerPattern.exec(text)) {
      if (match.index > start) add(this.encodeStretch(text.slice(start, match.index)));
      add(this.markerTokens.get(match[0]) as readonly number[]);
      start = match.index + match[0].length;
    }
    if (start < text.length) add(this.encodeStretch(text.slice(start)));
    return tokens;
  }

  private encodeStretch(stretch: string): readonly number[] {
    let tokens = this.cache.get(stretch);
    if (tokens === undefined) {
      tokens = this.tokenizer.encode(stretch);
      if (this.cache.size >= this.maxCached) this.cache.clear();
      this.cache.set(stretch, tokens);
    }
    return tokens;
  }
}
