// English number words for 1..99 ("forty-two", "seventy-three"), how aggregation shows private
// numbers to agents (Section 4.2), and the reverse parse used by graders and analyses.

import { ConfigError } from '../../errors.js';

const UNITS = ['', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const TEENS = ['ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** The smallest number with a word form. */
export const MIN_WORD_NUMBER = 1;
/** The largest number with a word form. */
export const MAX_WORD_NUMBER = 99;

/** The English words for an integer in 1..99, lower case and hyphenated: 42 → "forty-two". */
export function numberToWords(value: number): string {
  if (!Number.isInteger(value) || value < MIN_WORD_NUMBER || value > MAX_WORD_NUMBER) {
    throw new ConfigError(`numberToWords: expected an integer in 1..99, got ${String(value)}.`);
  }
  if (value < 10) return UNITS[value];
  if (value < 20) return TEENS[value - 10];
  const unit = value % 10;
  return unit === 0 ? TENS[Math.floor(value / 10)] : `${TENS[Math.floor(value / 10)]}-${UNITS[unit]}`;
}

const WORD_VALUES: ReadonlyMap<string, number> = new Map(
  Array.from({ length: MAX_WORD_NUMBER }, (_, index) => [numberToWords(index + 1), index + 1] as const),
);

/** The integer an English number word names, or null: accepts any case and "forty two" or "forty-two". */
export function wordsToNumber(text: string): number | null {
  const normalized = text.trim().toLowerCase().replace(/[\s-]+/g, '-');
  return WORD_VALUES.get(normalized) ?? null;
}

/** A count word starting with a capital letter: 8 → "Eight" (for sentence starts). */
export function capitalizedNumberWords(value: number): string {
  const words = numberToWords(value);
  return words.charAt(0).toUpperCase() + words.slice(1);
}
