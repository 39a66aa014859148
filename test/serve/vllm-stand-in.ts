// A stand-in vLLM server for tests (no vLLM here): forwards /v1/completions to a real `swarm serve`
// behind it and strips the s3_* fields from the answers (vLLM names no weights version), and serves
// vLLM's dev-mode weight reload as vLLM does: POST /pause?mode=wait waits for the requests in flight,
// POST /collective_rpc {method: "reload_weights", kwargs: {weights_path}} loads the folder into the
// server behind it (/v1/load_weights), POST /resume ends the pause. It records the calls in order, and
// any completion that arrived while paused (which RemotePolicy must never send).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface VllmStandIn {
  readonly url: string;
  /** The weight-reload calls in order: 'pause', 'reload <weights_path>', 'resume'. */
  readonly calls: string[];
  /** Completions that arrived while paused. */
  readonly sentWhilePaused: number;
  close(): void;
}

/** Starts a stand-in in front of the `swarm serve` at `target`, on `port` (default: any free one). */
export async function vllmStandIn(target: string, port = 0): Promise<VllmStandIn> {
  const calls: string[] = [];
  let inFlight = 0;
  let paused = false;
  let sentWhilePaused = 0;
  const idle: (() => void)[] = [];
  const post = async (endpoint: string, body: unknown): Promise<Response> =>
    fetch(`${target}${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', async () => {
      response.setHeader('content-type', 'application/json');
      const endpoint = (request.url ?? '').split('?')[0];
      const text = Buffer.concat(chunks).toString('utf8');
      if (endpoint === '/v1/models') {
        response.end(await (await fetch(`${target}/v1/models`)).text());
      } else if (endpoint === '/pause') {
        calls.push('pause');
        paused = true;
        if (new URL(request.url ?? '', 'http://x').searchParams.get('mode') === 'wait' && inFlight > 0) await new Promise<void>((resolve) => idle.push(resolve));
        response.end('{}');
      } else if (endpoint === '/resume') {
        calls.push('resume');
        paused = false;
        response.end('{}');
      } else if (endpoint === '/collective_rpc') {
        const body = JSON.parse(text) as { method: string; kwargs: { weights_path: string } };
        calls.push(`${body.method} ${body.kwargs.weights_path}`);
        const loaded = await post('/v1/load_weights', { path: body.kwargs.weights_path });
        response.statusCode = loaded.status;
        response.end(JSON.stringify({ results: [null] }));
      } else if (endpoint === '/v1/completions') {
        if (paused) sentWhilePaused += 1;
        inFlight += 1;
        try {
          const { skip_special_tokens: _skip, ...body } = JSON.parse(text) as Record<string, unknown>;
          const upstream = (await (await post('/v1/completions', body)).json()) as { choices: Record<string, unknown>[] } & Record<string, unknown>;
          const strip = (record: Record<string, unknown>) => Object.fromEntries(Object.entries(record).filter(([key]) => !key.startsWith('s3_')));
          response.end(JSON.stringify({ ...strip(upstream), choices: upstream.choices.map(strip) }));
        } finally {
          inFlight -= 1;
          if (inFlight === 0) for (const resolve of idle.splice(0)) resolve();
        }
      } else {
        response.statusCode = 404;
        response.end(JSON.stringify({ detail: 'Not Found' }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    get sentWhilePaused() {
      return sentWhilePaused;
    },
    close: () => {
      server.close();
      server.closeAllConnections();
    },
  };
}
