// A stand-in SGLang server for tests (no SGLang here): answers SGLang's native /generate from a real
// `swarm serve` behind it, in SGLang's form (output_ids, meta_info.output_token_logprobs, prompt_tokens,
// weight_version), and loads weights through /update_weights_from_disk by forwarding the folder to the
// server's /v1/load_weights, reporting the weight_version it was given as SGLang does ("default" until
// the first load). It records every request body it received, with its endpoint.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SglangStandIn {
  readonly url: string;
  /** Every request received, in order: its endpoint and JSON body. */
  readonly seen: { endpoint: string; body: Record<string, unknown> }[];
  close(): void;
}

/** Starts a stand-in in front of the `swarm serve` at `target`; `lie` adds one to every prompt_tokens it reports. */
export async function sglangStandIn(target: string, options: { lie?: boolean } = {}): Promise<SglangStandIn> {
  const seen: { endpoint: string; body: Record<string, unknown> }[] = [];
  let weightVersion = 'default';
  const post = async (endpoint: string, body: unknown): Promise<unknown> =>
    (await fetch(`${target}${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', async () => {
      response.setHeader('content-type', 'application/json');
      if (request.url === '/v1/models') {
        response.end(await (await fetch(`${target}/v1/models`)).text());
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      seen.push({ endpoint: request.url ?? '', body });
      if (request.url === '/update_weights_from_disk') {
        const loaded = (await post('/v1/load_weights', { path: body.model_path })) as { weightsVersion?: number; error?: { message: string } };
        if (typeof loaded.weightsVersion !== 'number') {
          response.end(JSON.stringify({ success: false, message: loaded.error?.message ?? 'load failed' }));
          return;
        }
        weightVersion = String(body.weight_version);
        response.end(JSON.stringify({ success: true, message: 'Succeeded to update model weights.', num_paused_requests: 0 }));
        return;
      }
      if (request.url !== '/generate') {
        response.statusCode = 404;
        response.end(JSON.stringify({ detail: 'Not Found' }));
        return;
      }
      const input = body as { input_ids: number[]; sampling_params: Record<string, unknown> };
      const p = input.sampling_params;
      const upstream = (await post('/v1/completions', {
        prompt: input.input_ids,
        max_tokens: p.max_new_tokens,
        temperature: p.temperature,
        seed: p.sampling_seed,
        stop_token_ids: p.stop_token_ids,
        logprobs: 1,
        return_token_ids: true,
      })) as { choices: { token_ids: number[]; logprobs: { token_logprobs: number[] }; finish_reason: string }[] };
      const choice = upstream.choices[0]!;
      response.end(
        JSON.stringify({
          text: '',
          output_ids: choice.token_ids,
          meta_info: {
            prompt_tokens: input.input_ids.length + (options.lie ? 1 : 0),
            completion_tokens: choice.token_ids.length,
            output_token_logprobs: choice.token_ids.map((id, i) => [choice.logprobs.token_logprobs[i], id, null]),
            finish_reason: choice.finish_reason === 'stop' ? { type: 'stop', matched: choice.token_ids.at(-1) } : { type: 'length', length: choice.token_ids.length },
            weight_version: weightVersion,
          },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => server.close() };
}
