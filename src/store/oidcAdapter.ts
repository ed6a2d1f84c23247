import { AsyncLocalStorage } from 'node:async_hooks';
import { errors } from 'oidc-provider';
import type { Store } from './types.js';

/** Models whose records belong to a grant and are revoked with it. */
const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'ClientCredentials',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

type Payload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; exp?: number; consumed?: number };

const FALLBACK_TTL = 3600;

/**
 * Records an edge read on its way to the provider, handed to the provider's own read of the same record
 * in the same request instead of a second store read (the wallet token edge looks at the
 * pre-authorized code before the provider redeems it). Each kept record is handed out once; a write to
 * it drops it. Atomicity does not rest on reads: redeeming is one atomic `markConsumed`.
 */
export class RequestReads {
  readonly #kept = new Map<string, Payload | undefined>();
  #keeping = false;

  /** Runs `fn`, keeping what the adapters read meanwhile. */
  async keep<T>(fn: () => Promise<T>): Promise<T> {
    this.#keeping = true;
    try {
      return await requestReads.run(this, fn);
    } finally {
      this.#keeping = false;
    }
  }

  /** Runs `fn` (the provider), whose reads of kept records are answered from them. */
  serve<T>(fn: () => Promise<T>): Promise<T> {
    return requestReads.run(this, fn);
  }

  /** @internal the adapter's side */
  take(key: string): { payload: Payload | undefined } | undefined {
    if (this.#keeping || !this.#kept.has(key)) return undefined;
    const payload = this.#kept.get(key);
    this.#kept.delete(key);
    return { payload };
  }

  /** @internal */
  read(key: string, payload: Payload | undefined): void {
    if (this.#keeping) this.#kept.set(key, payload);
  }

  /** @internal */
  written(key: string): void {
    this.#kept.delete(key);
  }
}

const requestReads = new AsyncLocalStorage<RequestReads>();

/**
 * oidc-provider's adapter interface over our Store, so its models and our records share one store.
 * `consume` is made atomic: of concurrent redemptions of one code, only the first marks it consumed;
 * the others fail with invalid_grant before any token is issued (D14, D16). `ttlCaps` shortens a
 * model's lifetime below what oidc-provider asks for (PAR requests: the configured lifetime); `notKept`
 * names models never written (their values never leave the service, so nothing can present them).
 */
export function createOidcAdapterFactory(
  store: Store,
  namespace: string,
  ttlCaps: Record<string, number> = {},
  /** models whose records can never be presented back, so are not kept at all */
  notKept: ReadonlySet<string> = new Set(),
) {
  const prefix = `oidc:${namespace}:`;
  return class StoreAdapter {
    readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    key(id: string): string {
      return `${prefix}${this.model}:${id}`;
    }

    async upsert(id: string, payload: Payload, expiresIn: number): Promise<void> {
      requestReads.getStore()?.written(this.key(id));
      if (notKept.has(this.model)) return;
      const cap = ttlCaps[this.model];
      const ttl = Math.min(expiresIn > 0 ? expiresIn : FALLBACK_TTL, cap ?? Infinity);
      // the record and its indexes are independent writes: issued together (one round trip on Redis)
      const writes = [store.set(this.key(id), payload, ttl)];
      if (this.model === 'Session' && payload.uid) writes.push(store.set(`${prefix}uid:${payload.uid}`, id, ttl));
      if (payload.userCode) writes.push(store.set(`${prefix}userCode:${payload.userCode}`, id, ttl));
      if (GRANTABLE.has(this.model) && payload.grantId) writes.push(store.addToSet(`${prefix}grant:${payload.grantId}`, this.key(id), ttl));
      await (writes.length === 1 ? writes[0] : Promise.all(writes));
    }

    async find(id: string): Promise<Payload | undefined> {
      const key = this.key(id);
      const reads = requestReads.getStore();
      const kept = reads?.take(key);
      if (kept) return kept.payload;
      const payload = await store.get<Payload>(key);
      reads?.read(key, payload);
      return payload;
    }

    async findByUid(uid: string): Promise<Payload | undefined> {
      const id = await store.get<string>(`${prefix}uid:${uid}`);
      return id ? this.find(id) : undefined;
    }

    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      const id = await store.get<string>(`${prefix}userCode:${userCode}`);
      return id ? this.find(id) : undefined;
    }

    async consume(id: string): Promise<void> {
      requestReads.getStore()?.written(this.key(id));
      // one atomic step (D16): of concurrent redemptions only the first marks it; a record gone meanwhile cannot be redeemed either
      if (!(await store.markConsumed(this.key(id), Math.floor(Date.now() / 1000)))) throw new errors.InvalidGrant('grant request is invalid');
    }

    async destroy(id: string): Promise<void> {
      requestReads.getStore()?.written(this.key(id));
      await store.delete(this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const setKey = `${prefix}grant:${grantId}`;
      const keys = await store.members(setKey);
      const reads = requestReads.getStore();
      for (const key of keys) reads?.written(key);
      await store.delete(...keys, setKey);
    }
  };
}
