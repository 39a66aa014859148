// The Bonferroni families of the paper's Table 9 (App. J.1), for `swarm compare --family table9`.
// Evaluations are given by role (`--as s3=DIR`), once per task; each family lists its contrasts
// (first minus second) at one team size on one metric. A family's size counts all its contrasts, the
// ones the table omits included, and so do the contrasts whose evaluations were not given: they are
// left out of the output but still count in the correction (J.1: "All contrasts in a family count
// toward its correction, including those omitted from the table").
//
// Where J.1 names a family's size but not all its members, the members are our reading, the same
// learners as the family the table shows in full:
//   Train / expl. (2): s³ vs Solo (SFT+RL) and s³ − SFT vs Solo RL (no SFT) ("two social-versus-solo
//     contrasts (with and without SFT)"); the same two for efficiency and for Scale at N = 6.
//   Abl. / expl. (3): s³ vs individual reward, s³ vs s³ − communication, individual reward vs Solo.
//   Comm. / expl. overlap (3): the same three contrasts as the exploration ablations.
//   Abl., Comm. and Scale / agg. (2): s³ vs individual reward and s³ vs online SFT.
import { taskFamily, type TaskFamily } from '../tasks/index.js';
import { ConfigError } from '../errors.js';
import type { CompareConfig, ComparisonFamily, ComparisonSpec } from './compare-config.js';
import type { MetricName } from './summary.js';

/** The roles an evaluation can play in Table 9. */
export const TABLE9_ROLES = ['s3', 'solo', 's3-no-sft', 'solo-no-sft', 'individual', 'no-comm', 'online-sft'] as const;

/** A role of Table 9. */
export type Table9Role = (typeof TABLE9_ROLES)[number];

type Task = TaskFamily;

interface FamilyPlan {
  readonly name: string;
  readonly task: Task;
  readonly n: number;
  readonly metric: MetricName;
  readonly contrasts: readonly (readonly [Table9Role, Table9Role])[];
}

const SOCIAL_VS_SOLO = [
  ['s3', 'solo'],
  ['s3-no-sft', 'solo-no-sft'],
] as const;
const EXPLORATION_ABLATIONS = [
  ['s3', 'individual'],
  ['s3', 'no-comm'],
  ['individual', 'solo'],
] as const;
const AGGREGATION_ABLATIONS = [
  ['s3', 'individual'],
  ['s3', 'online-sft'],
] as const;

/** Table 9's families, in its order. */
const FAMILIES: readonly FamilyPlan[] = [
  { name: 'Train / expl. success N=4', task: 'exploration', n: 4, metric: 'success', contrasts: SOCIAL_VS_SOLO },
  { name: 'Train / expl. efficiency N=4', task: 'exploration', n: 4, metric: 'tokenEfficiency', contrasts: SOCIAL_VS_SOLO },
  { name: 'Scale / expl. success N=6', task: 'exploration', n: 6, metric: 'success', contrasts: SOCIAL_VS_SOLO },
  { name: 'Scale / expl. efficiency N=6', task: 'exploration', n: 6, metric: 'tokenEfficiency', contrasts: SOCIAL_VS_SOLO },
  { name: 'Abl. / expl. success N=4', task: 'exploration', n: 4, metric: 'success', contrasts: EXPLORATION_ABLATIONS },
  { name: 'Abl. / agg. success N=4', task: 'aggregation', n: 4, metric: 'success', contrasts: AGGREGATION_ABLATIONS },
  { name: 'Abl. / agg. efficiency N=4', task: 'aggregation', n: 4, metric: 'tokenEfficiency', contrasts: AGGREGATION_ABLATIONS },
  { name: 'Comm. / expl. overlap N=4', task: 'exploration', n: 4, metric: 'roomOverlap', contrasts: EXPLORATION_ABLATIONS },
  { name: 'Comm. / agg. reciprocity N=4', task: 'aggregation', n: 4, metric: 'reciprocity', contrasts: AGGREGATION_ABLATIONS },
  ...[6, 8, 12].map((n): FamilyPlan => ({ name: `Scale / agg. success N=${n}`, task: 'aggregation', n, metric: 'success', contrasts: AGGREGATION_ABLATIONS })),
];


/** An evaluation given for a role: its label (directory), task, and whether it has a metric at a size. */
export interface Table9Evaluation {
  readonly role: Table9Role;
  readonly label: string;
  readonly task: string;
  readonly has: (n: number, metric: MetricName) => boolean;
}

/** A contrast of Table 9 that could not run: an evaluation not given, or without the size or metric. */
export interface SkippedContrast {
  readonly family: string;
  readonly a: Table9Role;
  readonly b: Table9Role;
  readonly reason: string;
}

/** Parses `ROLE=DIR` of --as; ConfigError names the roles. */
export function parseTable9Role(text: string): { role: Table9Role; dir: string } {
  const at = text.indexOf('=');
  const role = text.slice(0, at);
  if (at <= 0 || at === text.length - 1 || !(TABLE9_ROLES as readonly string[]).includes(role)) {
    throw new ConfigError(`--as ${JSON.stringify(text)}: expected ROLE=DIR with ROLE one of ${TABLE9_ROLES.join(', ')}.`);
  }
  return { role: role as Table9Role, dir: text.slice(at + 1) };
}

/** The comparison config of Table 9's families for the evaluations given, and the contrasts left out. */
export function table9Config(evaluations: readonly Table9Evaluation[]): { config: CompareConfig; skipped: SkippedContrast[] } {
  const byRole = new Map<string, Table9Evaluation>();
  for (const evaluation of evaluations) {
    const task = taskFamily(evaluation.task);
    if (task === null) throw new ConfigError(`--as ${evaluation.role}=${evaluation.label}: Table 9 covers aggregation and exploration, not ${evaluation.task}.`);
    const key = `${evaluation.role}/${task}`;
    const other = byRole.get(key);
    if (other !== undefined) throw new ConfigError(`--as ${evaluation.role}: both ${other.label} and ${evaluation.label} are ${task} evaluations; give one per role and task.`);
    byRole.set(key, evaluation);
  }
  const skipped: SkippedContrast[] = [];
  const families: ComparisonFamily[] = [];
  for (const plan of FAMILIES) {
    const comparisons: ComparisonSpec[] = [];
    for (const [a, b] of plan.contrasts) {
      const first = byRole.get(`${a}/${plan.task}`);
      const second = byRole.get(`${b}/${plan.task}`);
      const missing = [first === undefined ? a : null, second === undefined ? b : null].filter((role) => role !== null);
      if (first === undefined || second === undefined) {
        skipped.push({ family: plan.name, a, b, reason: `no ${plan.task} evaluation for ${missing.join(' and ')}` });
      } else if (!first.has(plan.n, plan.metric) || !second.has(plan.n, plan.metric)) {
        skipped.push({ family: plan.name, a, b, reason: `${plan.metric} at N=${plan.n} not in both evaluations` });
      } else comparisons.push({ a: first.label, b: second.label, n: plan.n, metric: plan.metric });
    }
    if (comparisons.length > 0) families.push({ name: plan.name, comparisons, size: plan.contrasts.length });
  }
  if (families.length === 0) {
    throw new ConfigError(`--family table9: no contrast of Table 9 has both its evaluations; give them with --as ROLE=DIR (roles: ${TABLE9_ROLES.join(', ')}).`);
  }
  return { config: { families }, skipped };
}
