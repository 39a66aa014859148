// The trainer's ends of weight links to our inference servers (`swarm train --inference-servers …
// --weight-transfer tcp|nccl`): one two-rank collective per server, the trainer rank 0, over which
// each weights version goes as its checkpoint would hold it (native/model/weight_link.h), so the
// servers need no filesystem shared with the trainer. A link is opened on first use (POST
// /v1/weight_link on the server, which dials back: tcp to the address the request came from and the
// port given, nccl with the group id given); each version is a POST /v1/weight_link/receive while the
// trainer sends. A link that fails (a restarted server, a dropped connection) is opened again once
// and the version sent again; a second failure is the caller's error, with both reasons.
//
// One link per server, not one group for all: a server that dies or restarts touches only its own
// link, at the cost of the trainer sending each version once per server.

import { Collective, ncclUniqueId } from '../native/collective.js';
import type { WeightsSnapshot } from '../native/weights-snapshot.js';
import { PolicyError } from './policy-error.js';

/** How the trainer's weights reach the servers: a folder they read, or weight links over TCP or NCCL. */
export type WeightTransfer = 'folder' | 'tcp' | 'nccl';
export const WEIGHT_TRANSFERS: readonly WeightTransfer[] = ['folder', 'tcp', 'nccl'];

/** Longest wait for any step of a link (connecting, each piece of a transfer), on both ends. */
const LINK_TIMEOUT_MS = 120_000;

async function post(url: string, endpoint: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> | null; text: string }> {
  let response: Response;
  try {
    response = await fetch(`${url}${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  } catch (error) {
    const cause = (error as { cause?: Error }).cause;
    throw new Error(`POST ${endpoint} failed: ${(error as Error).message}${cause ? ` (${cause.message})` : ''}`);
  }
  const text = await response.text();
  let parsed: Record<string, unknown> | null = null;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = null;
  }
  return { status: response.status, body: parsed, text };
}

function reason(reply: { status: number; body: Record<string, unknown> | null; text: string }): string {
  const error = reply.body?.error as { message?: unknown } | undefined;
  return `HTTP ${reply.status}: ${typeof error?.message === 'string' ? error.message : reply.text.slice(0, 200)}`;
}

export class ServerWeightLinks {
  private readonly links = new Map<string, Collective>();

  constructor(
    readonly transport: Exclude<WeightTransfer, 'folder'>,
    private readonly timeoutMs = LINK_TIMEOUT_MS,
  ) {}

  /** Sends `snapshot` to the server at `url`; resolves with the weights version the server reports for it. */
  async send(url: string, snapshot: WeightsSnapshot): Promise<number> {
    const existing = this.links.get(url);
    let first: string | null = null;
    if (existing !== undefined) {
      try {
        return await this.transfer(url, existing, snapshot);
      } catch (error) {
        first = (error as Error).message;
        this.drop(url);
      }
    }
    try {
      return await this.transfer(url, await this.open(url), snapshot);
    } catch (error) {
      this.drop(url);
      const before = first === null ? '' : ` (before that, on the link already open: ${first})`;
      throw new PolicyError(`inference server ${url}: sending the weights over a ${this.transport} weight link failed: ${(error as Error).message}${before}`);
    }
  }

  /** Closes every link (the servers' ends fail their next transfer and wait for a new link). */
  close(): void {
    for (const url of [...this.links.keys()]) this.drop(url);
  }

  private async open(url: string): Promise<Collective> {
    if (this.transport === 'tcp') {
      const link = Collective.hostRing({ rank: 0, ranks: 2, timeoutMs: this.timeoutMs, bindHost: '0.0.0.0' });
      try {
        const reply = await post(url, '/v1/weight_link', { transport: 'tcp', port: link.port, timeoutMs: this.timeoutMs });
        if (reply.status !== 200 || typeof reply.body?.port !== 'number') throw new Error(`POST /v1/weight_link: ${reason(reply)}`);
        await link.connect({ host: new URL(url).hostname.replace(/^\[|\]$/g, ''), port: reply.body.port });
      } catch (error) {
        link.close();
        throw error;
      }
      this.links.set(url, link);
      return link;
    }
    const id = ncclUniqueId();
    const link = Collective.nccl({ rank: 0, ranks: 2, timeoutMs: this.timeoutMs, id });
    const reply = await post(url, '/v1/weight_link', { transport: 'nccl', id: Buffer.from(id).toString('base64'), timeoutMs: this.timeoutMs });
    if (reply.status !== 200) throw new Error(`POST /v1/weight_link: ${reason(reply)}`);
    await link.connect();
    this.links.set(url, link);
    return link;
  }

  private async transfer(url: string, link: Collective, snapshot: WeightsSnapshot): Promise<number> {
    const [received, sent] = await Promise.allSettled([post(url, '/v1/weight_link/receive', {}), snapshot.send(link)]);
    if (received.status === 'rejected') throw received.reason as Error;
    const reply = received.value;
    // The server's account first: it says why it refused or what broke on its end.
    if (reply.status !== 200 || typeof reply.body?.weightsVersion !== 'number') {
      throw new Error(`POST /v1/weight_link/receive: ${reason(reply)}${sent.status === 'rejected' ? `; here: ${(sent.reason as Error).message}` : ''}`);
    }
    if (sent.status === 'rejected') throw sent.reason as Error;
    return reply.body.weightsVersion;
  }

  private drop(url: string): void {
    const link = this.links.get(url);
    this.links.delete(url);
    try {
      link?.close();
    } catch {
      // Still in use by a transfer that is failing: it ends with the link's timeout.
    }
  }
}
