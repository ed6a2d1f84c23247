import { createHash } from 'node:crypto';
import type { Store } from '../store/types.js';

/** What the holder's prompt page shows about a verification request (D10: live progress, errors a person understands). */
export type RequestStatus = {
  status: 'pending' | 'scanned' | 'done' | 'failed' | 'expired';
  message?: string;
  /** failed: what the relying party is told (error_description); names the rule, never a claim value */
  description?: string;
};

export interface VerificationResult {
  /** RFC 7638 thumbprint of the first presented credential's `cnf.jwk`: the ID token `sub` (D2) */
  holderKeyThumbprint: string;
  /** the first presented credential's issuer */
  issuer: string;
  /** the value of the request's subject claim, when it has one and the holder disclosed it (D12) */
  subject?: unknown;
  /** one entry per requested attribute that was disclosed, from every requested type */
  claims: Record<string, unknown>;
  types: string[];
}

/** One verification request, kept while the wallet may answer it. Holds no claim values. */
export interface VerificationRecord {
  requestId: string;
  /** the credential types asked for (none for an identity request) */
  credentialTypes: string[];
  /** D12: a request for a person-identification credential, as the `identity.VerifiedIdentity` block asks */
  identity?: 'VerifiedIdentity';
  /** whom the claims are for: a pairwise subject is derived per client (D12) */
  clientId?: string;
  nonce: string;
  state: string;
  /** epoch seconds */
  createdAt: number;
  /** epoch seconds */
  expiresAt: number;
  /** the step is an External Client flow's (D13): its end is announced to the client */
  external?: boolean;
}

/** How long `done` / `failed` and the result stay readable after the wallet answered. */
export const STATUS_GRACE_SECONDS = 300;

const now = () => Math.floor(Date.now() / 1000);
const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

// Hash tags keep one request's keys in one Redis Cluster slot (D14). The request object reference and the
// state are looked up without the requestId; they are bearer values, so only their hashes name keys.
const requestKey = (requestId: string) => `vp:{${requestId}}:request`;
const statusKey = (requestId: string) => `vp:{${requestId}}:status`;
const resultKey = (requestId: string) => `vp:{${requestId}}:result`;
const requestObjectKey = (reference: string) => `vp:request-object:${sha256(reference)}`;
const stateKey = (state: string) => `vp:state:${sha256(state)}`;

/** The verification requests and their status in the shared store (D14), with TTLs: any instance serves any step. */
export class VerificationRequests {
  constructor(private readonly store: Store) {}

  async create(record: VerificationRecord, requestObjectReference: string): Promise<void> {
    const lifetime = record.expiresAt - record.createdAt;
    if (!(await this.store.setIfAbsent(requestKey(record.requestId), record, lifetime))) {
      throw new Error(`verification request ${record.requestId} already exists`);
    }
    // independent of each other once the request is known to be new: one round trip on Redis
    await Promise.all([
      this.store.set(requestObjectKey(requestObjectReference), record.requestId, lifetime),
      this.store.set(stateKey(record.state), record.requestId, lifetime),
      this.setStatus(record.requestId, { status: 'pending' }, lifetime + STATUS_GRACE_SECONDS),
    ]);
  }

  find(requestId: string): Promise<VerificationRecord | undefined> {
    return this.store.get<VerificationRecord>(requestKey(requestId));
  }

  /**
   * The wallet fetches the request object: single use (D14), so of concurrent fetches one gets it, and a
   * request_uri seen by someone else later is worthless. The prompt page shows `scanned`.
   */
  async takeRequestObject(reference: string): Promise<VerificationRecord | undefined> {
    const requestId = await this.store.consume<string>(requestObjectKey(reference));
    if (requestId === undefined) return undefined;
    // one round trip: both keys share the request's hash tag
    const [record, current] = (await this.store.getMany([requestKey(requestId), statusKey(requestId)])) as [VerificationRecord | undefined, RequestStatus | undefined];
    if (!record) return undefined;
    if (current?.status === 'pending') await this.setStatus(requestId, { status: 'scanned' }, record.expiresAt - now() + STATUS_GRACE_SECONDS);
    return record;
  }

  /** The wallet answers: a request is answered once (D14), whatever the answer; the state is consumed atomically. */
  async takeByState(state: string): Promise<VerificationRecord | undefined> {
    const requestId = await this.store.consume<string>(stateKey(state));
    return requestId === undefined ? undefined : this.find(requestId);
  }

  /**
   * The result, then the status that announces it, then the request gone: issued in this order in one
   * round trip (one connection, one slot: Redis applies them in order), so `done` is never read without
   * its result.
   */
  async done(requestId: string, result: VerificationResult): Promise<void> {
    await Promise.all([
      this.store.set(resultKey(requestId), result, STATUS_GRACE_SECONDS),
      this.setStatus(requestId, { status: 'done', message: 'Your credentials were verified.' }, STATUS_GRACE_SECONDS),
      this.store.delete(requestKey(requestId)),
    ]);
  }

  async failed(requestId: string, message: string, description: string): Promise<void> {
    await Promise.all([this.setStatus(requestId, { status: 'failed', message, description }, STATUS_GRACE_SECONDS), this.store.delete(requestKey(requestId))]);
  }

  async status(requestId: string): Promise<RequestStatus> {
    // one round trip: both keys share the request's hash tag
    const [status, request] = (await this.store.getMany([statusKey(requestId), requestKey(requestId)])) as [RequestStatus | undefined, VerificationRecord | undefined];
    if (status?.status === 'done' || status?.status === 'failed') return status;
    if (!status || !request) return { status: 'expired', message: 'This request has expired.' };
    return status;
  }

  async result(requestId: string): Promise<VerificationResult | undefined> {
    const [status, result] = (await this.store.getMany([statusKey(requestId), resultKey(requestId)])) as [RequestStatus | undefined, VerificationResult | undefined];
    return status?.status === 'done' ? result : undefined;
  }

  private setStatus(requestId: string, status: RequestStatus, ttl: number): Promise<void> {
    return this.store.set(statusKey(requestId), status, Math.max(1, ttl));
  }
}
