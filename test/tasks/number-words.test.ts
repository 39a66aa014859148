// Tests of English number words 1..99 and their reverse parse.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { capitalizedNumberWords, numberToWords, wordsToNumber } from '../../src/tasks/aggregation/number-words.js';

describe('numberToWords', () => {
  it('writes the spot values by hand', () => {
    const cases: Array<[number, string]> = [
      [1, 'one'], [9, 'nine'], [10, 'ten'], [11, 'eleven'], [13, 'thirteen'], [15, 'fifteen'], [19, 'nineteen'],
      [20, 'twenty'], [21, 'twenty-one'], [40, 'forty'], [42, 'forty-two'], [58, 'fifty-eight'],
      [73, 'seventy-three'], [80, 'eighty'], [99, 'ninety-nine'],
    ];
    for (const [value, words] of cases) expect(numberToWords(value)).toBe(words);
  });

  it('round-trips every value 1..99 with distinct words', () => {
    const all = new Set<string>();
    for (let value = 1; value <= 99; value += 1) {
      const words = numberToWords(value);
      all.add(words);
      expect(wordsToNumber(words)).toBe(value);
    }
    expect(all.size).toBe(99);
  });

  it('refuses values outside 1..99', () => {
    for (const bad of [0, 100, -3, 4.5]) expect(() => numberToWords(bad)).toThrow(ConfigError);
  });

  it('capitalizes count words for sentence starts', () => {
    expect(capitalizedNumberWords(8)).toBe('Eight');
    expect(capitalizedNumberWords(16)).toBe('Sixteen');
  });
});

describe('wordsToNumber', () => {
  it('accepts any case, spaces or hyphens and surrounding whitespace', () => {
    expect(wordsToNumber('Forty Two')).toBe(42);
    expect(wordsToNumber('  seventy-three ')).toBe(73);
    expect(wordsToNumber('NINETY-nine')).toBe(99);
  });

  it('returns null for anything that is not a number word in range', () => {
    for (const text of ['fourty-two', 'zero', 'one hundred', '', '42', 'twenty-', 'forty-two-one']) {
      expect(wordsToNumber(text)).toBeNull();
    }
  });
});
