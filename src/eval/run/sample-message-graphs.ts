// Message graphs of sample episodes for the report: for each evaluation with messaging, one episode at
// the largest team size up to 4, the paper's training team size (a team of 8 that broadcasts draws 56
// edges, too dense to read; the smallest size above 1 when all are larger): the first problem of the
// first seed on which the team sent a message, read back from its trace file. Evaluations without episode records or traces (a summary copied alone) give none.

import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { splitEpisodes } from '../../harness/index.js';
import type { Evaluation } from '../compare.js';
import { messageGraphOf } from '../metrics/message-graph.js';
import type { MessageGraph } from '../report/message-graph.js';
import { summarySizes } from '../summary.js';
import { EPISODE_LOG_FILE_NAME, readEpisodeLog } from './episode-log.js';
import { readTraceFile } from './trace-files.js';

/** The largest team size whose message graph is sampled (the training team size, Table 4). */
export const MAX_SAMPLE_GRAPH_SIZE = 4;

/** One evaluation directory to sample from. */
export interface SampleSource {
  /** The evaluation directory. */
  readonly dir: string;
  /** Its summary and the label the report shows. */
  readonly evaluation: Evaluation;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** The sample message graph of one evaluation, or null when it has none to show. */
export async function sampleMessageGraph(source: SampleSource): Promise<MessageGraph | null> {
  const { summary, label } = source.evaluation;
  if (!summary.comm) return null;
  const sizes = summarySizes(summary);
  const legible = sizes.filter((n) => n <= MAX_SAMPLE_GRAPH_SIZE && n > 1);
  const n = legible.length > 0 ? legible[legible.length - 1] : sizes.find((size) => size > 1);
  if (n === undefined) return null;
  const { records } = await readEpisodeLog(join(source.dir, EPISODE_LOG_FILE_NAME));
  const order = (problemId: string): number => summary.problems.ids.indexOf(problemId);
  const candidates = records
    .filter((record) => record.n === n && record.seed === summary.seeds[0] && record.messageCalls > 0 && order(record.problemId) >= 0)
    .sort((x, y) => order(x.problemId) - order(y.problemId));
  const chosen = candidates[0];
  if (chosen === undefined || !(await exists(join(source.dir, chosen.trace)))) return null;
  const [episode] = splitEpisodes(await readTraceFile(join(source.dir, chosen.trace)));
  const graph = messageGraphOf(episode);
  return { title: `${label}: ${summary.task} N=${n}, seed ${chosen.seed}, problem ${chosen.problemId}`, ...graph };
}
