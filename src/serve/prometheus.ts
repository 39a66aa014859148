// `GET /metrics` of `swarm serve` in Prometheus' text exposition format (version 0.0.4): the
// engine's queues, KV blocks, token counters and throughput, the weights version, and the server's
// own request counters by endpoint and status.

import type { NativeEngineStats } from '../native/binding.js';

/** The server's own counters. */
export interface ServerCounters {
  /** Requests being answered now. */
  readonly inFlight: number;
  /** Finished requests by "endpoint status" (e.g. "/v1/completions 200"). */
  readonly requests: ReadonlyMap<string, number>;
  /** Completion tokens and prompt tokens handed out. */
  readonly completionTokens: number;
  readonly promptTokens: number;
}

interface Sample {
  readonly name: string;
  readonly help: string;
  readonly type: 'gauge' | 'counter';
  readonly value: number;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** The metrics page. */
export function prometheusText(stats: NativeEngineStats, counters: ServerCounters): string {
  const samples: Sample[] = [
    { name: 's3_sequences_running', help: 'Sequences in the running batch', type: 'gauge', value: stats.running },
    { name: 's3_sequences_waiting', help: 'Sequences waiting for a slot or KV blocks', type: 'gauge', value: stats.waiting },
    { name: 's3_kv_blocks_used', help: 'KV cache blocks in use', type: 'gauge', value: stats.kvBlocksUsed },
    { name: 's3_kv_blocks_total', help: 'KV cache blocks in all', type: 'gauge', value: stats.kvBlocksTotal },
    { name: 's3_tokens_per_second', help: 'Generated tokens per second of engine busy time', type: 'gauge', value: stats.tokensPerSecond },
    { name: 's3_weights_version', help: 'Version of the weights new pieces are sampled with', type: 'gauge', value: stats.policyVersion },
    { name: 's3_generated_tokens_total', help: 'Tokens the engine sampled', type: 'counter', value: stats.generatedTokens },
    { name: 's3_processed_tokens_total', help: 'Prompt and history tokens the engine computed', type: 'counter', value: stats.processedTokens },
    { name: 's3_prefix_cache_hit_tokens_total', help: 'History positions taken from the prefix cache instead of computed', type: 'counter', value: stats.prefixCacheHitTokens },
    { name: 's3_preemptions_total', help: 'Sequences preempted for KV blocks', type: 'counter', value: stats.preemptions },
    { name: 's3_engine_steps_total', help: 'Engine batch steps', type: 'counter', value: stats.steps },
    { name: 's3_http_requests_in_flight', help: 'HTTP requests being answered', type: 'gauge', value: counters.inFlight },
    { name: 's3_prompt_tokens_total', help: 'Prompt tokens of answered completions', type: 'counter', value: counters.promptTokens },
    { name: 's3_completion_tokens_total', help: 'Completion tokens of answered completions', type: 'counter', value: counters.completionTokens },
  ];
  const lines: string[] = [];
  for (const sample of samples) {
    lines.push(`# HELP ${sample.name} ${sample.help}`, `# TYPE ${sample.name} ${sample.type}`, `${sample.name} ${sample.value}`);
  }
  lines.push('# HELP s3_http_requests_total HTTP requests answered, by endpoint and status', '# TYPE s3_http_requests_total counter');
  for (const [key, count] of [...counters.requests].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const [endpoint, status] = key.split(' ');
    lines.push(`s3_http_requests_total{endpoint="${escapeLabel(endpoint)}",status="${escapeLabel(status)}"} ${count}`);
  }
  return lines.join('\n') + '\n';
}
