// The server's end of a weight link (`swarm train --inference-servers … --weight-transfer tcp|nccl`):
// rank 1 of a two-rank collective whose rank 0 is the trainer, which sends each weights version over
// it (native/model/weight_link.h) instead of writing a folder the server must read. The trainer opens
// the link (POST /v1/weight_link), then asks for each version (POST /v1/weight_link/receive) while
// it sends; requests in flight keep running and the engine swaps between batches. A link that fails
// is closed; the trainer opens a new one (a restarted server, a trainer that came back).

import { Collective } from '../native/collective.js';
import type { InferenceEngine } from '../native/engine.js';
import { badRequest, HttpError } from './http-error.js';

/** What POST /v1/weight_link asks for. */
export interface WeightLinkRequest {
  readonly transport: 'tcp' | 'nccl';
  /** tcp: the trainer's listening port. */
  readonly port?: number;
  /** tcp: the trainer's address (default: where the request came from). */
  readonly host?: string;
  /** nccl: the group id rank 0 made (ncclUniqueId), base64. */
  readonly id?: string;
  /** Longest wait for any step of the link (connecting, each piece of a transfer). */
  readonly timeoutMs: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const NCCL_ID_BYTES = 128;

/** Checks a POST /v1/weight_link body; a 400 naming the field otherwise. */
export function parseWeightLinkRequest(body: unknown): WeightLinkRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body', 'The body must be a JSON object {transport, port | id, host?, timeoutMs?}.');
  const b = body as Record<string, unknown>;
  const timeoutMs = b.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 3_600_000) {
    throw badRequest('timeoutMs', `timeoutMs must be an integer from 100 to 3600000, got ${JSON.stringify(b.timeoutMs)}.`);
  }
  if (b.transport === 'tcp') {
    if (typeof b.port !== 'number' || !Number.isInteger(b.port) || b.port < 1 || b.port > 65535) throw badRequest('port', `port must be the trainer's TCP port (1-65535), got ${JSON.stringify(b.port)}.`);
    if (b.host !== undefined && (typeof b.host !== 'string' || b.host === '')) throw badRequest('host', `host must be the trainer's address, got ${JSON.stringify(b.host)}.`);
    return { transport: 'tcp', port: b.port, ...(b.host === undefined ? {} : { host: b.host as string }), timeoutMs };
  }
  if (b.transport === 'nccl') {
    const id = typeof b.id === 'string' ? Buffer.from(b.id, 'base64') : null;
    if (id === null || id.length !== NCCL_ID_BYTES) throw badRequest('id', `id must be the trainer's ncclUniqueId, ${NCCL_ID_BYTES} bytes in base64.`);
    return { transport: 'nccl', id: b.id as string, timeoutMs };
  }
  throw badRequest('transport', `transport must be "tcp" or "nccl", got ${JSON.stringify(b.transport)}.`);
}

/** The address a host ring can dial for a request's peer (IPv4; "::ffff:" prefixes dropped, ::1 is loopback). */
export function ringAddress(remote: string | undefined): string {
  if (remote === undefined) return '127.0.0.1';
  if (remote === '::1') return '127.0.0.1';
  return remote.startsWith('::ffff:') ? remote.slice('::ffff:'.length) : remote;
}

/** Where a host ring listens beside an HTTP server listening at `host` (host rings are IPv4). */
function ringBindAddress(host: string): string {
  return /^\d+\.\d+\.\d+\.\d+$/.test(host) ? host : '0.0.0.0';
}

/** The link's state, as /health reports it. */
export interface WeightLinkStatus {
  readonly transport: 'tcp' | 'nccl';
  readonly state: 'connecting' | 'ready' | 'receiving' | 'failed';
  readonly description: string;
  readonly received: number;
  readonly error?: string;
}

export class WeightLinkReceiver {
  private link: Collective | null = null;
  private transport: 'tcp' | 'nccl' = 'tcp';
  private connected: Promise<void> | null = null;
  private state: WeightLinkStatus['state'] = 'connecting';
  private error: string | undefined;
  private received = 0;

  /** @param bindHost where the ring listens: the HTTP server's own address (IPv4; any other listens on every IPv4 address). */
  constructor(private readonly bindHost: () => string) {}

  /** Opens a new link to the trainer (closing any earlier one); resolves with this end's port (tcp) before it is connected. */
  open(request: WeightLinkRequest, peer: string): { port?: number } {
    if (this.state === 'receiving') throw new HttpError(409, 'A transfer is running on the current weight link; open a new one after it ends.', null, 'weight_link_busy');
    this.close();
    this.transport = request.transport;
    this.state = 'connecting';
    this.error = undefined;
    this.received = 0;
    try {
      if (request.transport === 'tcp') {
        const link = Collective.hostRing({ rank: 1, ranks: 2, timeoutMs: request.timeoutMs, bindHost: ringBindAddress(this.bindHost()) });
        this.link = link;
        this.connected = link.connect({ host: request.host ?? peer, port: request.port as number });
      } else {
        const link = Collective.nccl({ rank: 1, ranks: 2, timeoutMs: request.timeoutMs, id: new Uint8Array(Buffer.from(request.id as string, 'base64')) });
        this.link = link;
        this.connected = link.connect();
      }
    } catch (error) {
      this.fail((error as Error).message);
      throw new HttpError(400, `Cannot open a ${request.transport} weight link: ${(error as Error).message}`, 'transport', 'weight_link_failed');
    }
    const link = this.link;
    this.connected.then(
      () => {
        if (this.link === link && this.state === 'connecting') this.state = 'ready';
      },
      (error: Error) => {
        if (this.link === link) this.fail(error.message);
      },
    );
    return request.transport === 'tcp' ? { port: (this.link as Collective).port } : {};
  }

  /** Receives one weights version into `engine` (the trainer sends meanwhile); resolves once it is swapped in. */
  async receive(engine: InferenceEngine): Promise<{ weightsVersion: number; bytes: number; seconds: number }> {
    const link = this.link;
    if (link === null || this.connected === null) throw new HttpError(409, 'No weight link is open; POST /v1/weight_link first.', null, 'no_weight_link');
    if (this.state === 'receiving') throw new HttpError(409, 'A transfer is already running on this weight link.', null, 'weight_link_busy');
    if (this.state === 'failed') throw new HttpError(409, `The weight link failed (${this.error}); open a new one.`, null, 'weight_link_failed');
    try {
      await this.connected;
    } catch (error) {
      throw new HttpError(409, `The weight link did not connect: ${(error as Error).message}`, null, 'weight_link_failed');
    }
    this.state = 'receiving';
    try {
      const result = await engine.receiveWeights(link);
      this.received += 1;
      this.state = 'ready';
      return result;
    } catch (error) {
      // A refusal leaves the ring usable, a broken transfer does not; the trainer opens a new link either way.
      this.fail((error as Error).message);
      if (this.link === link) this.close();
      throw badRequest('weights', (error as Error).message, 'weights_not_loaded');
    }
  }

  status(): WeightLinkStatus | null {
    if (this.link === null && this.error === undefined) return null;
    return {
      transport: this.transport,
      state: this.state,
      description: this.link?.description ?? 'closed',
      received: this.received,
      ...(this.error === undefined ? {} : { error: this.error }),
    };
  }

  /** Closes the link (a transfer running on it fails on both ends). */
  close(): void {
    if (this.link === null) return;
    try {
      this.link.close();
    } catch {
      // A transfer is running: the native side refuses to close under it; it ends with the link's timeout.
    }
    this.link = null;
    this.connected = null;
  }

  private fail(message: string): void {
    this.state = 'failed';
    this.error = message;
  }
}
