// Tests of the Oniguruma → JavaScript translation of tokenizer.json split regexes.
import { describe, expect, it } from 'vitest';
import { FormatError } from '../../src/errors.js';
import { compileSplitPattern, preTokenize, QWEN3_SPLIT_PATTERN } from '../../src/model/tokenizer/index.js';

const qwen3 = compileSplitPattern({ pattern: QWEN3_SPLIT_PATTERN, source: 'tokenizer.json', field: 'pre_tokenizer' });
const split = (text: string): string[] => preTokenize(text, [qwen3]);

function compileError(pattern: string): FormatError {
  try {
    compileSplitPattern({ pattern, source: '/models/x/tokenizer.json', field: 'pre_tokenizer.pattern.Regex' });
  } catch (error) {
    return error as FormatError;
  }
  throw new Error(`expected ${pattern} to be refused`);
}

describe('compileSplitPattern', () => {
  it('compiles Qwen3\'s pattern, which Node 20 rejects as written', () => {
    expect(() => new RegExp(QWEN3_SPLIT_PATTERN, 'gu')).toThrow();
    expect(qwen3.flags).toBe('gu');
  });

  it('splits words, contractions, digits, punctuation and whitespace as Qwen3 does', () => {
    expect(split("Hello world's  DON'T 123\r\n\n x")).toEqual([
      'Hello', ' world', "'s", ' ', ' DON', "'T", ' ', '1', '2', '3', '\r\n\n', ' x',
    ]);
    expect(split('a.b\r\n\r\n  c')).toEqual(['a', '.b', '\r\n\r\n', ' ', ' c']);
    expect(split('   x')).toEqual(['  ', ' x']);
    expect(split('x   ')).toEqual(['x', '   ']);
  });

  it('matches contractions in any letter case', () => {
    expect(split("We'Ll it's I'M they'RE")).toEqual(['We', "'Ll", ' it', "'s", ' I', "'M", ' they', "'RE"]);
  });

  it('folds the long s into s inside (?i:…), as Oniguruma does', () => {
    expect(split("x'\u017fome")).toEqual(['x', "'\u017f", 'ome']);
  });

  it('treats U+0085 as whitespace and U+FEFF as not, unlike JavaScript\'s \\s', () => {
    expect(split('x \u0085y')).toEqual(['x', ' ', '\u0085y']);
    expect(split('x \ufeffy')).toEqual(['x', ' \ufeff', 'y']);
    expect(split('a\u2028\u2028b')).toEqual(['a', '\u2028', '\u2028b']);
  });

  it('keeps every character: the pieces join back to the input', () => {
    const text = 'mixed 日本語, emoji 👍🏽\t\u00a0 end\n';
    expect(split(text).join('')).toBe(text);
  });

  it('translates line anchors and the dot to Oniguruma\'s meaning', () => {
    const anchored = compileSplitPattern({ pattern: '^.', source: 's', field: 'f' });
    expect(preTokenize('ab\ncd\r\ne', [anchored])).toEqual(['a', 'b\n', 'c', 'd\r\n', 'e']);
    const dot = compileSplitPattern({ pattern: 'a.b', source: 's', field: 'f' });
    expect(preTokenize('a\rb a\nb', [dot])).toEqual(['a\rb', ' a\nb']);
  });

  it('refuses constructs it cannot translate exactly, naming the file and the field', () => {
    for (const pattern of ['\\w+', '(?>ab)', '(?i)ab', '[[:alpha:]]', '[a&&b]', '(?i:[a-z])', '(?i:\\p{Lu})', '(?i:\\x41)', '\\d', '\\pL', 'a\\']) {
      const error = compileError(pattern);
      expect(error).toBeInstanceOf(FormatError);
      expect(error.message).toContain('/models/x/tokenizer.json');
      expect(error.message).toContain('pre_tokenizer.pattern.Regex');
    }
  });

  it('translates escaped punctuation, \\x{…} and \\S', () => {
    const escaped = compileSplitPattern({ pattern: "(?i:\\'s)|\\x{41}\\-|[\\-\\]]+|\\S\\.", source: 's', field: 'f' });
    expect(preTokenize("'S A- -]x. ", [escaped])).toEqual(["'S", ' ', 'A-', ' ', '-]', 'x.', ' ']);
  });

  it('reports a pattern JavaScript cannot compile as a FormatError', () => {
    expect(compileError('a++').message).toMatch(/cannot compile/);
  });

  it('steps over empty matches instead of looping', () => {
    const optional = compileSplitPattern({ pattern: 'x*', source: 's', field: 'f' });
    expect(preTokenize('axxb👍', [optional])).toEqual(['a', 'xx', 'b👍']);
  });
});
