// Branch claims and "exhausted" reports in exploration messages, read with the sentences the scripted
// explorers of Appendix L write and models trained on their demonstrations reproduce:
//
//   claim:  "I'm checking the branch from R1203 through R4410."
//           CLAIM  = /I['’]m checking the branch from (R\d+) through (R\d+)/g
//   report: "Branch from R1203 through R4410 is exhausted; no exit. I followed it and ..."
//           REPORT = /Branch from (R\d+) through (R\d+) is exhausted/gi
//
// A message may hold several claims and reports; each counts. Against the problem's tree: a duplicate
// claim names a branch that a different agent claimed first in the episode (in message order; the
// first claimant repeating its own claim is no duplicate); a false
// report says a branch is exhausted that holds the exit. Reports naming rooms that are not adjacent in
// the tree are not judged.

import type { EpisodeTrace } from '../../harness/trace.js';
import { branchHoldsExit, type BranchRef, type ExplorationTree } from '../../tasks/index.js';

// The claim sentence (straight or curly apostrophe).
const CLAIM_PATTERN = /I['’]m checking the branch from (R\d+) through (R\d+)/g;
// The report sentence (any case).
const REPORT_PATTERN = /Branch from (R\d+) through (R\d+) is exhausted/gi;

/** A claim or report in a message. */
export interface BranchMention {
  /** A claim of the branch, or a report that it is exhausted. */
  readonly kind: 'claim' | 'report';
  /** The branch named. */
  readonly branch: BranchRef;
}

/** Every claim and report a message text holds, claims first, each in text order. */
export function branchMentions(text: string): BranchMention[] {
  const mentions = (kind: BranchMention['kind'], pattern: RegExp): BranchMention[] =>
    [...text.matchAll(pattern)].map((match) => ({ kind, branch: { junction: match[1], entry: match[2] } }));
  return [...mentions('claim', CLAIM_PATTERN), ...mentions('report', REPORT_PATTERN)];
}

/** Claim and report counts of one exploration episode. */
export interface ClaimCounts {
  /** Claims in all messages. */
  readonly claims: number;
  /** Claims of a branch that a different agent had claimed first. */
  readonly duplicateClaims: number;
  /** Reports in all messages. */
  readonly reports: number;
  /** Reports of a branch that holds the exit. */
  readonly falseExhaustedReports: number;
  /** Some agent read a message holding a false report (App. K.3: "some agent had read a false report"). */
  readonly falseReportRead: boolean;
}

/** Options of claimCountsOf. */
export interface ClaimCountsOptions {
  /** The episode. */
  readonly episode: EpisodeTrace;
  /** The problem's tree (where the exit is). */
  readonly tree: ExplorationTree;
}

/** Counts claims, duplicate claims, reports and false "exhausted" reports in an episode's messages. */
export function claimCountsOf(options: ClaimCountsOptions): ClaimCounts {
  const firstClaimant = new Map<string, string>();
  let claims = 0;
  let duplicateClaims = 0;
  let reports = 0;
  let falseExhaustedReports = 0;
  const falseReportMessages = new Set<number>();
  let falseReportRead = false;
  for (const event of options.episode.events) {
    if (event.type === 'read' && event.messageIds.some((id) => falseReportMessages.has(id))) falseReportRead = true;
    if (event.type !== 'message') continue;
    // What the recipients read (a message ablation may cut the text; docs/trace-format.md).
    for (const mention of branchMentions(event.deliveredText ?? event.text)) {
      if (mention.kind === 'report') {
        reports += 1;
        if (branchHoldsExit(options.tree, mention.branch) === true) {
          falseExhaustedReports += 1;
          falseReportMessages.add(event.messageId);
        }
        continue;
      }
      claims += 1;
      const key = `${mention.branch.junction}>${mention.branch.entry}`;
      const first = firstClaimant.get(key);
      if (first === undefined) firstClaimant.set(key, event.agent);
      else if (first !== event.agent) duplicateClaims += 1;
    }
  }
  return { claims, duplicateClaims, reports, falseExhaustedReports, falseReportRead };
}
