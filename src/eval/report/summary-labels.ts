// Legend labels of evaluated policies: the policy name, made unique among the summaries of the same
// task (they share plots) by adding the messaging condition where that tells them apart, then a
// running number; a message ablation (`swarm eval --messages`) and thinking off are always named.

import type { Summary } from '../summary.js';

/** One label per summary, in order: policy.name, plus " (messaging)"/" (no messaging)" or " #k" where another summary of the same task has the same name. */
export function summaryLabels(summaries: readonly Summary[]): string[] {
  const sameTask = (index: number): number[] => summaries.flatMap((other, j) => (other.task === summaries[index].task ? [j] : []));
  const withComm = summaries.map((summary, index) => {
    const namesakes = sameTask(index).filter((j) => summaries[j].policy.name === summary.policy.name);
    const commDiffers = namesakes.some((j) => summaries[j].comm !== summary.comm);
    const name = commDiffers ? `${summary.policy.name} (${summary.comm ? 'messaging' : 'no messaging'})` : summary.policy.name;
    // A message ablation and thinking off always show: each is a different condition from the same policy.
    const notes = [...(summary.messages === undefined ? [] : [`messages ${summary.messages}`]), ...(summary.thinking === false ? ['no thinking'] : [])];
    return notes.length === 0 ? name : `${name} (${notes.join(', ')})`;
  });
  return withComm.map((label, index) => {
    const twins = sameTask(index).filter((j) => withComm[j] === label);
    return twins.length === 1 ? label : `${label} #${twins.indexOf(index) + 1}`;
  });
}
