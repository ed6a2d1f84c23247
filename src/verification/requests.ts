import { createHash, timingSafeEqual } from 'node:crypto';
import type { Store } from '../store/types.js';
import { said, say, type Say } from '../i18n/catalogues.js';
import type { Device, RequestStatus, VerificationRecord, VerificationResult } from './record.js';

/** What a link's request object reference finds: its request, which link it is, and the other links' (their keys' hashes). */
interface RequestObjectRef {
  requestId: string;
  device: Device;
  others?: string[];
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
const deviceKey = (requestId: string) => `vp:{${requestId}}:device`;
const responseCodeKey = (requestId: string) => `vp:{${requestId}}:response-code`;
const requestObjectKeyOfHash = (hash: string) => `vp:request-object:${hash}`;
const requestObjectKey = (reference: string) => requestObjectKeyOfHash(sha256(reference));
const stateKey = (state: string) => `vp:state:${sha256(state)}`;
const kidKey = (kid: string) => `vp:kid:${sha256(kid)}`;
// a refused request can be retired once: whoever takes this marker asks for the fresh request
const retirableKey = (requestId: string) => `vp:{${requestId}}:retirable`;

/** How long a wallet may hold a fetched request before the holder is offered a fresh one, by default: seconds. */
export const DEFAULT_FRESH_REQUEST_AFTER = 30;

/** The verification requests and their status in the shared store (D14), with TTLs: any instance serves any step. */
export class VerificationRequests {
  constructor(
    private readonly store: Store,
    /** seconds a fetched request may stay unanswered before it reads `stalled` */
    private readonly freshRequestAfter = DEFAULT_FRESH_REQUEST_AFTER,
  ) {}

  /** `references`: the request object's reference in each link (the cross-device one, and the same-device one when there is one). */
  async create(record: VerificationRecord, references: Partial<Record<Device, string>>): Promise<void> {
    const lifetime = record.expiresAt - record.createdAt;
    if (!(await this.store.setIfAbsent(requestKey(record.requestId), record, lifetime))) {
      throw new Error(`verification request ${record.requestId} already exists`);
    }
    // each link's request object names the other link's, which the first fetch removes (the request is
    // then bound to the device that fetched it); independent of each other once the request is known to
    // be new: one round trip on Redis
    const links = Object.entries(references) as [Device, string][];
    await Promise.all([
      ...links.map(([device, reference]) => {
        const others = links.filter(([d]) => d !== device).map(([, r]) => sha256(r));
        const value: RequestObjectRef = { requestId: record.requestId, device, ...(others.length ? { others } : {}) };
        return this.store.set(requestObjectKey(reference), value, lifetime);
      }),
      this.store.set(stateKey(record.state), record.requestId, lifetime),
      ...(record.encryptionKey?.kid
        ? [this.store.set(kidKey(record.encryptionKey.kid), record.requestId, lifetime)]
        : []),
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
    const taken = await this.store.consume<RequestObjectRef>(requestObjectKey(reference));
    if (taken === undefined) return undefined;
    const { requestId, device, others = [] } = taken;
    // one round trip: both keys share the request's hash tag; the other link's request object goes with it
    const [[record, current]] = (await Promise.all([
      this.store.getMany([requestKey(requestId), statusKey(requestId)]),
      others.length ? this.store.delete(...others.map(requestObjectKeyOfHash)) : undefined,
    ])) as [[VerificationRecord | undefined, RequestStatus | undefined], unknown];
    if (!record) return undefined;
    // the first link used decides how the request ends
    if (!(await this.store.setIfAbsent(deviceKey(requestId), device, record.expiresAt - now() + STATUS_GRACE_SECONDS)))
      return undefined;
    if (current?.status === 'pending')
      await this.setStatus(
        requestId,
        { status: 'scanned', since: now() },
        record.expiresAt - now() + STATUS_GRACE_SECONDS,
      );
    return record;
  }

  /** The request whose encryption key has this `kid` (OpenID4VP 1.0 §8.3); nothing is taken. */
  async findByKid(kid: string): Promise<VerificationRecord | undefined> {
    const requestId = await this.store.get<string>(kidKey(kid));
    return requestId === undefined ? undefined : this.find(requestId);
  }

  /** The wallet answers: a request is answered once (D14), whatever the answer; the state is consumed atomically. */
  async takeByState(state: string): Promise<{ record: VerificationRecord; device?: Device } | undefined> {
    const requestId = await this.store.consume<string>(stateKey(state));
    if (requestId === undefined) return undefined;
    const [record, device] = (await this.store.getMany([requestKey(requestId), deviceKey(requestId)])) as [
      VerificationRecord | undefined,
      Device | undefined,
    ];
    return record && { record, device };
  }

  /**
   * Same-device (OpenID4VP 1.0 §8.2): the presentation is verified, and its result waits for the browser the
   * wallet sends back with the response code (only its hash is kept). The request stays until then.
   */
  async awaitReturn(record: VerificationRecord, result: VerificationResult, responseCode: string): Promise<void> {
    await Promise.all([
      this.store.set(resultKey(record.requestId), result, STATUS_GRACE_SECONDS),
      this.store.set(responseCodeKey(record.requestId), sha256(responseCode), STATUS_GRACE_SECONDS),
      this.store.set(requestKey(record.requestId), record, STATUS_GRACE_SECONDS),
      this.setStatus(record.requestId, { status: 'returning' }, STATUS_GRACE_SECONDS),
    ]);
  }

  /**
   * The browser came back: its response code is taken once (D14) and must be this request's. Returns the
   * request and its result, or undefined (no such code, wrong code, already used, expired).
   */
  async redeem(
    requestId: string,
    responseCode: string,
  ): Promise<{ record: VerificationRecord; result: VerificationResult } | undefined> {
    const held = await this.store.consume<string>(responseCodeKey(requestId));
    if (held === undefined) return undefined;
    const presented = Buffer.from(sha256(responseCode));
    if (presented.length !== held.length || !timingSafeEqual(presented, Buffer.from(held))) return undefined;
    const [record, result] = (await this.store.getMany([requestKey(requestId), resultKey(requestId)])) as [
      VerificationRecord | undefined,
      VerificationResult | undefined,
    ];
    return record && result ? { record, result } : undefined;
  }

  /**
   * The result, then the status that announces it, then the request gone: issued in this order in one
   * round trip (one connection, one slot: Redis applies them in order), so `done` is never read without
   * its result.
   */
  async done(record: VerificationRecord, result: VerificationResult): Promise<void> {
    const { requestId } = record;
    await Promise.all([
      this.store.set(resultKey(requestId), result, STATUS_GRACE_SECONDS),
      this.setStatus(requestId, { status: 'done', message: 'Your credentials were verified.' }, STATUS_GRACE_SECONDS),
      this.#answered(record),
    ]);
  }

  async failed(record: VerificationRecord, message: Say, description: string): Promise<void> {
    await Promise.all([
      this.setStatus(record.requestId, { status: 'failed', ...said(message), description }, STATUS_GRACE_SECONDS),
      this.#answered(record),
    ]);
  }

  /**
   * The holder's browser finished its flow with the request's outcome: its status and result are kept only
   * `ttlSeconds` more (a second poll still reads them), not for the whole grace period.
   */
  finished(requestId: string, ttlSeconds: number): Promise<void> {
    return this.store.shorten([statusKey(requestId), resultKey(requestId)], ttlSeconds);
  }

  /** An answered request: what only an unanswered one needs is removed (the request, its key's id, its link). */
  async #answered(record: VerificationRecord): Promise<void> {
    const kid = record.encryptionKey?.kid;
    await Promise.all([
      this.store.delete(requestKey(record.requestId), deviceKey(record.requestId)),
      kid ? this.store.delete(kidKey(kid)) : undefined,
    ]);
  }

  /**
   * The wallet could not take the request (an error other than access_denied, OpenID4VP 1.0 §8.5): not an
   * end yet. The request stays until its expiry, answerable by nobody (its state is spent), so that the
   * holder may ask for a fresh one, or give up (`end`).
   */
  async refused(record: VerificationRecord, message: Say, description: string): Promise<void> {
    const ttl = record.expiresAt - now();
    await Promise.all([
      this.store.set(retirableKey(record.requestId), 1, Math.max(1, ttl)),
      this.setStatus(
        record.requestId,
        { status: 'refused', ...said(message), description },
        ttl + STATUS_GRACE_SECONDS,
      ),
    ]);
  }

  /**
   * Retires a stalled or refused request so that a fresh one replaces it: true when this call retired it.
   * A stalled request's state is taken, so a wallet answering at this moment keeps its request (false)
   * and a late answer afterwards is refused as unknown: the flow gets one outcome.
   */
  async retire(requestId: string): Promise<boolean> {
    const [status, record] = (await this.store.getMany([statusKey(requestId), requestKey(requestId)])) as [
      RequestStatus | undefined,
      VerificationRecord | undefined,
    ];
    if (!status || !record) return false;
    const stalled = this.#stalled(status);
    if (status.status !== 'refused' && !stalled) return false;
    // what is left of it reads as it did until its TTLs end: the prompt reads it until the fresh one replaces it
    return (await this.store.consume(stalled ? stateKey(record.state) : retirableKey(requestId))) !== undefined;
  }

  async status(requestId: string): Promise<RequestStatus> {
    // one round trip: both keys share the request's hash tag
    const [status, request] = (await this.store.getMany([statusKey(requestId), requestKey(requestId)])) as [
      RequestStatus | undefined,
      VerificationRecord | undefined,
    ];
    if (status?.status === 'done' || status?.status === 'failed') return status;
    if (!status || !request) return { status: 'expired', ...said(say('status.expired')) };
    if (status.status !== 'scanned') return status;
    return this.#stalled(status) ? { status: 'stalled' } : { status: 'scanned' };
  }

  /**
   * The holder gives up on a refused request: taken once (as `retire` takes it), with what its refusal
   * said, to end it for good.
   */
  async takeRefusal(requestId: string): Promise<{ record: VerificationRecord; status: RequestStatus } | undefined> {
    if ((await this.store.consume(retirableKey(requestId))) === undefined) return undefined;
    const [status, record] = (await this.store.getMany([statusKey(requestId), requestKey(requestId)])) as [
      RequestStatus | undefined,
      VerificationRecord | undefined,
    ];
    return status?.status === 'refused' && record ? { record, status } : undefined;
  }

  #stalled(status: RequestStatus): boolean {
    return status.status === 'scanned' && status.since !== undefined && now() - status.since >= this.freshRequestAfter;
  }

  async result(requestId: string): Promise<VerificationResult | undefined> {
    const [status, result] = (await this.store.getMany([statusKey(requestId), resultKey(requestId)])) as [
      RequestStatus | undefined,
      VerificationResult | undefined,
    ];
    return status?.status === 'done' ? result : undefined;
  }

  private setStatus(requestId: string, status: RequestStatus, ttl: number): Promise<void> {
    return this.store.set(statusKey(requestId), status, Math.max(1, ttl));
  }
}
