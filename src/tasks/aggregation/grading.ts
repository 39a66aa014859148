// Aggregation grading (Appendix H): a final answer is the last line that begins with #### (surrounding
// whitespace ignored), and the rest of that line must be a JSON array of integers and nothing else; it
// is correct when it equals the ascending sort of the team's numbers, duplicates kept. Anything
// malformed is simply wrong; nothing here throws on model text.

/** The marker that starts a final-answer line. */
export const ANSWER_MARKER = '####';

/** The integers of the last line beginning with ####, or null when there is none or it is malformed. */
export function parseFinalAnswer(text: string): number[] | null {
  const answerLines = text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line.startsWith(ANSWER_MARKER));
  if (answerLines.length === 0) return null;
  const payload = answerLines[answerLines.length - 1].slice(ANSWER_MARKER.length).trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || !parsed.every((item) => Number.isSafeInteger(item))) return null;
  return parsed as number[];
}

/** The correct answer: the numbers in ascending order, equal values kept once per owner. */
export function expectedAnswer(numbers: readonly number[]): number[] {
  return numbers.slice().sort((x, y) => x - y);
}

/** Options of gradeAggregationAnswer. */
export interface GradeAggregationAnswerOptions {
  /** The agent's answer text. */
  readonly text: string;
  /** The numbers of the team's agents (problem.numbers truncated to N). */
  readonly numbers: readonly number[];
}

/** Whether the answer's array equals the sorted numbers exactly (same length, order and duplicates). */
export function gradeAggregationAnswer(options: GradeAggregationAnswerOptions): boolean {
  const answer = parseFinalAnswer(options.text);
  const expected = expectedAnswer(options.numbers);
  return answer !== null && answer.length === expected.length && answer.every((value, index) => value === expected[index]);
}
