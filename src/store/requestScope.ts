import Provider from 'oidc-provider';
import type { Store } from './types.js';

const SCOPE = Symbol('vc.storeScope');

/**
 * Store work a request does next to oidc-provider's own, so that it shares a round trip with other
 * operations of the request instead of costing one of its own (Redis: commands issued in the same tick
 * go out in one write and come back in one read). Every Redis round trip is a write and a read system
 * call and the client's work around them: on the 2-core bench machine it is worth about 1 % of an
 * issuance flow's CPU (bench/README.md).
 *
 * - Records read ahead: an edge that knows which record the provider is about to load reads it together
 *   with its own reads; the provider's next `find` of that record is answered from here, once.
 * - Writes alongside: a write that belongs with the next record of a model the provider saves in this
 *   request goes out with that record (and only if that record is written to the store).
 *
 * Kept on the request's `ctx.state`. oidc-provider's adapters (src/store/oidcAdapter.ts) find it through
 * `Provider.ctx`, the provider's own request context (AsyncLocalStorage), which is the same Koa context
 * the edges run on (koa-mount passes it through).
 */
export class StoreScope {
  readonly #ahead = new Map<string, unknown>();
  readonly #alongside = new Map<string, () => Promise<unknown>>();

  /** The request's scope, created on first use. */
  static of(state: Record<PropertyKey, unknown>): StoreScope {
    let scope = state[SCOPE] as StoreScope | undefined;
    if (!scope) {
      scope = new StoreScope();
      state[SCOPE] = scope;
    }
    return scope;
  }

  /** The scope of the request oidc-provider is serving right now, if it has one. */
  static current(): StoreScope | undefined {
    return (Provider.ctx?.state as Record<PropertyKey, unknown> | undefined)?.[SCOPE] as StoreScope | undefined;
  }

  /** `value` is what the store held under `key` (undefined: nothing) when the request read it, or the read under way. */
  readAhead(key: string, value: unknown): void {
    this.#ahead.set(key, value);
  }

  /**
   * Starts reading `key` now, so the read goes out with whatever else this turn of the event loop sends,
   * and keeps it for the provider's next `find` of that record. A failure is that find's (never an
   * unhandled rejection, also when nothing finds it). Returns the read, for a caller that wants it too.
   */
  read(store: Store, key: string): Promise<unknown> {
    const read = store.get(key);
    read.catch(() => undefined);
    this.readAhead(key, read);
    return read;
  }

  /** The record read ahead under `key`, handed out once; `found` is false when it was not read ahead. */
  take(key: string): { found: boolean; value?: unknown } {
    if (!this.#ahead.has(key)) return { found: false };
    const value = this.#ahead.get(key);
    this.#ahead.delete(key);
    return { found: true, value };
  }

  /** `write` is started with the next record of `model` saved in this request. */
  alongside(model: string, write: () => Promise<unknown>): void {
    this.#alongside.set(model, write);
  }

  /** The write to start with a record of `model`, handed out once. */
  takeAlongside(model: string): (() => Promise<unknown>) | undefined {
    const write = this.#alongside.get(model);
    if (write) this.#alongside.delete(model);
    return write;
  }
}
