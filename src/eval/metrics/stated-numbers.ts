// The numbers 1..99 a message states, the way the paper's content rules read aggregation messages
// (Appendix K.1: "rules that parse English and numeric numbers in the message text"): standalone
// digits ("42", "(42)"; not the 17 of "agent_17") and English number words ("forty-two", "forty two",
// "Seven"). A tens word followed by a unit word is one number ("forty two" is 42, not 40 and 2).

const UNIT_WORDS = 'one|two|three|four|five|six|seven|eight|nine';
const TEEN_WORDS = 'ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen';
const TENS_WORDS = 'twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety';
const UNIT_VALUES = UNIT_WORDS.split('|');
const TEEN_VALUES = TEEN_WORDS.split('|');
const TENS_VALUES = TENS_WORDS.split('|');

/** Digits not joined to a letter, digit or underscore on either side. */
const DIGITS = /(?<![\w])(\d+)(?![\w])/g;
/** A tens word with an optional unit ("forty", "forty-two", "forty two"), a teen, or a unit. */
const WORDS = new RegExp(`\\b(?:(${TENS_WORDS})(?:[\\s-]+(${UNIT_WORDS}))?|(${TEEN_WORDS})|(${UNIT_WORDS}))\\b`, 'gi');

/** The distinct numbers in 1..99 that a text states in digits or in English words. */
export function statedNumbers(text: string): Set<number> {
  const numbers = new Set<number>();
  for (const match of text.matchAll(DIGITS)) {
    const value = Number(match[1]);
    if (value >= 1 && value <= 99) numbers.add(value);
  }
  for (const match of text.matchAll(WORDS)) {
    const [, tens, tensUnit, teen, unit] = match;
    if (tens !== undefined) {
      const base = 20 + 10 * TENS_VALUES.indexOf(tens.toLowerCase());
      numbers.add(tensUnit === undefined ? base : base + 1 + UNIT_VALUES.indexOf(tensUnit.toLowerCase()));
    } else if (teen !== undefined) {
      numbers.add(10 + TEEN_VALUES.indexOf(teen.toLowerCase()));
    } else if (unit !== undefined) {
      numbers.add(1 + UNIT_VALUES.indexOf(unit.toLowerCase()));
    }
  }
  return numbers;
}
