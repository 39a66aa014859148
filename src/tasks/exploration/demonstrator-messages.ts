// The two messages scripted explorers send (Appendix L), and how an explorer reads them back from
// teammates: a claim when it takes a branch at a junction, and a report once every onward door below
// the branch has been checked. A branch is named by its junction and the room one door beyond it.

/** A branch: the rooms reached from `junction` through its door to `entry`. */
export interface BranchName {
  /** The junction the branch leaves from. */
  readonly junction: string;
  /** The room one door beyond it. */
  readonly entry: string;
}

/** A claim or report read from a message. */
export type ExplorerNews = { readonly kind: 'claim' | 'report'; readonly branch: BranchName };

/** The key of a branch in maps and sets. */
export function branchKey(branch: BranchName): string {
  return `${branch.junction}>${branch.entry}`;
}

/** "I'm checking the branch from R1203 through R4410." (Appendix L, verbatim). */
export function claimText(branch: BranchName): string {
  return `I'm checking the branch from ${branch.junction} through ${branch.entry}.`;
}

/**
 * The report of an exhausted branch. Appendix L's sentence when the sender checked every onward door
 * itself; when it skipped part of the branch on teammates' reports, the second sentence says so (ours:
 * the paper says only that the report states what the conclusion rests on).
 */
export function reportText(branch: BranchName, reliedOnReports: boolean): string {
  const head = `Branch from ${branch.junction} through ${branch.entry} is exhausted; no exit.`;
  return reliedOnReports
    ? `${head} I followed it and checked every onward door except parts teammates reported exhausted.`
    : `${head} I followed it and checked every onward door before backtracking.`;
}

const CLAIM = /I'm checking the branch from (R\d+) through (R\d+)\./;
const REPORT = /Branch from (R\d+) through (R\d+) is exhausted/;

/** The claim or report a message holds, or null for any other text. */
export function readExplorerNews(text: string): ExplorerNews | null {
  const report = REPORT.exec(text);
  if (report !== null) return { kind: 'report', branch: { junction: report[1], entry: report[2] } };
  const claim = CLAIM.exec(text);
  if (claim !== null) return { kind: 'claim', branch: { junction: claim[1], entry: claim[2] } };
  return null;
}
