// Translation of a tokenizer.json `Split` regex (written for Oniguruma, the engine of Hugging Face's
// Rust tokenizers) into an equivalent JavaScript RegExp. Node 20 rejects inline modifiers such as
// Qwen3's `(?i:'s|'t|…)`, and several escapes mean different things in the two engines, so the
// pattern is rewritten construct by construct; anything not known to translate exactly is refused.

import { FormatError } from '../../errors.js';

/** Where a pattern comes from, for error messages. */
export interface SplitPatternOptions {
  /** The Oniguruma pattern as written in tokenizer.json. */
  pattern: string;
  /** The file (or other source) the pattern was read from. */
  source: string;
  /** The JSON path of the pattern inside that file. */
  field: string;
}

// Characters JavaScript's `u` mode allows after a backslash outside and inside classes.
const JS_SYNTAX_CHARS = new Set('^$\\.*+?()[]{}|/'.split(''));
const JS_CLASS_ESCAPABLE = new Set([...JS_SYNTAX_CHARS, '-']);
// Escapes whose meaning is the same in Oniguruma and JavaScript.
const SHARED_ESCAPES = new Set(['r', 'n', 't', 'f', 'v']);
// Unicode simple case folding maps exactly two non-ASCII characters onto ASCII letters
// (CaseFolding.txt: U+017F LATIN SMALL LETTER LONG S → s, U+212A KELVIN SIGN → k); Oniguruma's
// case-insensitive matching follows it, so "'ſ" is a contraction for Rust tokenizers.
const NON_ASCII_FOLDS: Readonly<Record<string, string>> = { s: '\u017f', k: '\u212a' };

/** Translates an Oniguruma split pattern into a global, Unicode-mode JavaScript RegExp. */
export function compileSplitPattern(options: SplitPatternOptions): RegExp {
  const translated = new PatternTranslator(options).translate();
  try {
    return new RegExp(translated, 'gu');
  } catch (error) {
    throw new FormatError(
      `${options.source}: ${options.field} holds the regex ${JSON.stringify(options.pattern)}, which ` +
        `translates to ${JSON.stringify(translated)} that JavaScript cannot compile ` +
        `(${(error as Error).message}); expected an Oniguruma pattern built from literals, classes, ` +
        `\\p{…}, \\s, groups, lookarounds and (?i:…) over ASCII literals`,
    );
  }
}

class PatternTranslator {
  private readonly pattern: string;
  private index = 0;
  private out = '';
  // One entry per open group: whether it is an inline case-insensitive group.
  private readonly groups: boolean[] = [];

  constructor(private readonly options: SplitPatternOptions) {
    this.pattern = options.pattern;
  }

  translate(): string {
    while (this.index < this.pattern.length) {
      const char = this.peekChar();
      if (char === '\\') this.out += this.translateEscape(false);
      else if (char === '[') this.translateClass();
      else if (char === '(') this.translateGroupOpen();
      else if (char === ')') {
        this.groups.pop();
        this.out += char;
        this.index += 1;
      } else {
        this.index += char.length;
        this.out += this.translateLiteral(char);
      }
    }
    return this.out;
  }

  private peekChar(): string {
    return String.fromCodePoint(this.pattern.codePointAt(this.index) as number);
  }

  private caseInsensitive(): boolean {
    return this.groups.includes(true);
  }

  private refuse(what: string): never {
    throw new FormatError(
      `${this.options.source}: ${this.options.field} holds the regex ${JSON.stringify(this.pattern)}, ` +
        `which uses ${what} at offset ${this.index}; s³ cannot translate that construct to JavaScript ` +
        `exactly. Supported: literals, character classes, \\p{…}/\\P{…}, \\s/\\S, \\r\\n\\t\\f\\v, \\x, ` +
        `groups, lookarounds, quantifiers, ^ $ . and (?i:…) over ASCII literals`,
    );
  }

  private translateLiteral(char: string): string {
    if (char === '.') return '[^\\n]';
    // Oniguruma's ^ and $ are line anchors (Ruby syntax): they match next to any \n.
    if (char === '^') return '(?<![^\\n])';
    if (char === '$') return '(?![^\\n])';
    if (!this.caseInsensitive()) return char;
    if (/^[A-Za-z]$/.test(char)) {
      const lower = char.toLowerCase();
      return `[${lower}${lower.toUpperCase()}${NON_ASCII_FOLDS[lower] ?? ''}]`;
    }
    if (char.toLowerCase() !== char.toUpperCase()) this.refuse(`the cased non-ASCII letter ${JSON.stringify(char)} inside (?i:…)`);
    return char;
  }

  private translateGroupOpen(): void {
    const rest = this.pattern.slice(this.index);
    if (rest.startsWith('(?i:')) {
      this.groups.push(true);
      this.out += '(?:';
      this.index += 4;
      return;
    }
    const prefix = ['(?:', '(?=', '(?!', '(?<=', '(?<!'].find((candidate) => rest.startsWith(candidate));
    if (prefix === undefined && rest.startsWith('(?')) this.refuse(`the group syntax ${JSON.stringify(rest.slice(0, 4))}`);
    const opener = prefix ?? '(';
    this.groups.push(false);
    this.out += opener;
    this.index += opener.length;
  }

  private translateClass(): void {
    if (this.caseInsensitive()) this.refuse('a character class inside (?i:…)');
    this.out += '[';
    this.index += 1;
    if (this.pattern[this.index] === '^') {
      this.out += '^';
      this.index += 1;
    }
    let first = true;
    while (this.index < this.pattern.length) {
      const char = this.peekChar();
      if (char === ']' && !first) {
        this.out += ']';
        this.index += 1;
        return;
      }
      if (char === '[') this.refuse('a nested character class or POSIX bracket');
      if (char === '&' && this.pattern[this.index + 1] === '&') this.refuse('a class intersection (&&)');
      if (char === '\\') this.out += this.translateEscape(true);
      else {
        // A leading ']' is literal in Oniguruma; JavaScript needs it escaped.
        this.out += char === ']' ? '\\]' : char;
        this.index += char.length;
      }
      first = false;
    }
    this.refuse('an unterminated character class');
  }

  private translateEscape(inClass: boolean): string {
    if (this.index + 1 >= this.pattern.length) this.refuse('a trailing backslash');
    const next = String.fromCodePoint(this.pattern.codePointAt(this.index + 1) as number);
    const named = /[0-9A-Za-z]/.test(next);
    if (named && this.caseInsensitive()) this.refuse(`the escape \\${next} inside (?i:…)`);
    const rest = this.pattern.slice(this.index);
    const braced = /^\\([pPx])\{([^}]*)\}/.exec(rest);
    if (braced !== null) {
      this.index += braced[0].length;
      return braced[1] === 'x' ? `\\u{${braced[2]}}` : `\\${braced[1]}{${braced[2]}}`;
    }
    const hex = /^\\x[0-9A-Fa-f]{2}|^\\u[0-9A-Fa-f]{4}/.exec(rest);
    if (hex !== null) {
      this.index += hex[0].length;
      return hex[0];
    }
    if (named && next !== 's' && next !== 'S' && !SHARED_ESCAPES.has(next)) this.refuse(`the escape \\${next}`);
    this.index += 1 + next.length;
    // Oniguruma's \s is Unicode White_Space: it includes U+0085 and excludes U+FEFF, unlike JavaScript's.
    if (next === 's') return '\\p{White_Space}';
    if (next === 'S') return '\\P{White_Space}';
    if (named) return `\\${next}`;
    if ((inClass ? JS_CLASS_ESCAPABLE : JS_SYNTAX_CHARS).has(next)) return `\\${next}`;
    return inClass ? next : this.translateLiteral(next);
  }
}
