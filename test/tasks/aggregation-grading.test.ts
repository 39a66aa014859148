// Tests of aggregation answer parsing and exact-match grading.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectedAnswer, gradeAggregationAnswer, parseFinalAnswer } from '../../src/tasks/aggregation/grading.js';

const numbers = [42, 7, 42, 99];
const grade = (text: string): boolean => gradeAggregationAnswer({ text, numbers });

describe('expectedAnswer', () => {
  it('sorts ascending and keeps duplicates', () => {
    expect(expectedAnswer(numbers)).toEqual([7, 42, 42, 99]);
    expect(numbers).toEqual([42, 7, 42, 99]);
  });
});

describe('gradeAggregationAnswer', () => {
  it('accepts the sorted list with duplicates, with or without spaces', () => {
    expect(grade('#### [7, 42, 42, 99]')).toBe(true);
    expect(grade('####[7,42,42,99]')).toBe(true);
    expect(grade('  #### [7, 42, 42, 99]  ')).toBe(true);
  });

  it('accepts an answer line after reasoning text', () => {
    expect(grade('I have heard from everyone.\n#### [7, 42, 42, 99]\n')).toBe(true);
  });

  it('grades the last answer line', () => {
    expect(grade('#### [1, 2]\nWait, I missed one.\n#### [7, 42, 42, 99]')).toBe(true);
    expect(grade('#### [7, 42, 42, 99]\n#### [7, 42, 99]')).toBe(false);
  });

  it('rejects a list with a duplicate dropped or an extra entry', () => {
    expect(grade('#### [7, 42, 99]')).toBe(false);
    expect(grade('#### [7, 42, 42, 42, 99]')).toBe(false);
  });

  it('rejects the right numbers in the wrong order', () => {
    expect(grade('#### [99, 42, 42, 7]')).toBe(false);
    expect(grade('#### [42, 7, 42, 99]')).toBe(false);
  });

  it('rejects extra text on the answer line and a line not starting with ####', () => {
    expect(grade('#### [7, 42, 42, 99] is my answer')).toBe(false);
    expect(grade('My answer: #### [7, 42, 42, 99]')).toBe(false);
    expect(grade('[7, 42, 42, 99]')).toBe(false);
  });

  it('rejects malformed arrays', () => {
    for (const text of ['#### 7, 42, 42, 99', '#### ["7", 42, 42, 99]', '#### [7, 42, 42.5, 99]', '#### [7, 42, 42, 99', '#### {}', '####', '##### [7, 42, 42, 99]']) {
      expect(grade(text)).toBe(false);
    }
  });

  it('never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (before, after) => {
        expect(typeof grade(`${before}\n#### ${after}`)).toBe('boolean');
        expect(typeof grade(before)).toBe('boolean');
      }),
    );
  });
});

describe('parseFinalAnswer', () => {
  it('returns the integers or null', () => {
    expect(parseFinalAnswer('#### [3, 1]')).toEqual([3, 1]);
    expect(parseFinalAnswer('#### []')).toEqual([]);
    expect(parseFinalAnswer('no answer')).toBeNull();
    expect(parseFinalAnswer('#### [1e400]')).toBeNull();
  });
});
