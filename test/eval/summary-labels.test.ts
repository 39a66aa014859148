// Report legend labels: the policy name, told apart by the messaging condition where two summaries of
// a task share it, a message ablation always named, then a running number for true twins.
import { describe, expect, it } from 'vitest';
import { summaryLabels } from '../../src/eval/report/summary-labels.js';
import { buildSummary } from './summary-builder.js';

const sizes = { 2: { success: [0.5, 0.6, 0.7] } };

describe('summaryLabels', () => {
  it('names the messaging condition and any message ablation', () => {
    const intact = buildSummary({ name: 'sft', sizes });
    const silent = buildSummary({ name: 'sft', comm: false, sizes });
    const dropped = { ...buildSummary({ name: 'sft', sizes }), messages: 'drop' };
    expect(summaryLabels([intact, silent, dropped])).toEqual(['sft (messaging)', 'sft (no messaging)', 'sft (messaging) (messages drop)']);
    expect(summaryLabels([intact, dropped])).toEqual(['sft', 'sft (messages drop)']);
    expect(summaryLabels([intact, intact])).toEqual(['sft #1', 'sft #2']);
  });
});
