import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, fetch as undiciFetch, type Dispatcher, type RequestInit as UndiciInit } from 'undici';
import { bareHost, TargetRules } from '../rules/addresses.js';
import { isLoopbackHost } from '../rules/loopback.js';
import { readLimited } from '../verification/readLimited.js';

/**
 * Every fetch the service makes of keys, metadata and status lists, under one set of rules (docs/decisions.md,
 * "Outbound fetches"): https only (http on a loopback host, for development); no connection to a loopback,
 * private, link-local, CGNAT or unspecified address unless `outboundFetch.allowedPrivateTargets` allows it,
 * checked on the address actually connected to (the connection's own DNS lookup, so that a name cannot
 * resolve one way for a check and another for the connection); redirects refused, or followed within one
 * origin where the caller allows some, each hop under the same rules; a bounded time and size.
 */

export interface OutboundOptions {
  /** config `outboundFetch.allowedPrivateTargets`: addresses, CIDR networks and host names */
  allowedPrivateTargets?: readonly string[];
  /** our own origins (the base URL's): fetched whatever they resolve to */
  ownOrigins?: readonly string[];
  /** the DNS (node's dns.lookup; a test gives its own to name a host) */
  lookup?: LookupFunction;
}

/** The target is not one we fetch: its scheme, its address, or a redirect away from it. */
export class OutboundRefused extends Error {
  readonly code = 'ERR_OUTBOUND_REFUSED';
}
/** The target was allowed but gave nothing usable: network, HTTP status, size. */
export class OutboundUnavailable extends Error {}
/** No answer in time; named as fetch and jose name a timeout. */
export class OutboundTimeout extends Error {
  override readonly name = 'TimeoutError';
}

export interface GetOptions {
  /** what is fetched, in the words errors use: "the status list" */
  what: string;
  accept: string;
  maxBytes: number;
  /** the whole fetch, body included; or `signal` */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** same-origin redirects followed (default none: a redirect is refused) */
  redirects?: number;
}

/** The loopback networks: what a service on a loopback base URL (development) may fetch by default. */
export const LOOPBACK_TARGETS = ['127.0.0.0/8', '::1'];

/**
 * The service's rules from its configuration: `outboundFetch.allowedPrivateTargets`, by default the loopback
 * networks when the base URL is on a loopback host (development), else none; and its own origin.
 */
export function outboundFromConfig(
  config: { baseUrl: string; outboundFetch: { allowedPrivateTargets?: string[] } },
  lookup?: LookupFunction,
): OutboundFetch {
  const base = new URL(config.baseUrl);
  return new OutboundFetch({
    allowedPrivateTargets:
      config.outboundFetch.allowedPrivateTargets ?? (isLoopbackHost(base.hostname) ? LOOPBACK_TARGETS : []),
    ownOrigins: [base.origin],
    ...(lookup ? { lookup } : {}),
  });
}

const size = (bytes: number) =>
  bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${Math.round(bytes / 1024)} KiB`;

export class OutboundFetch {
  readonly #rules: TargetRules;
  readonly #ownOrigins: Set<string>;
  /** connects to what a lookup checked: for every host not listed by name */
  readonly #guarded: Agent;
  /** for our own origins and listed names */
  readonly #open: Agent;

  constructor(o: OutboundOptions = {}) {
    this.#rules = new TargetRules(o.allowedPrivateTargets ?? []);
    this.#ownOrigins = new Set(o.ownOrigins ?? []);
    const resolve = o.lookup ?? (dnsLookup as LookupFunction);
    this.#guarded = new Agent({ connect: { lookup: this.#checkedLookup(resolve) } });
    this.#open = new Agent({ connect: { lookup: resolve } });
  }

  close(): Promise<void> {
    return Promise.all([this.#guarded.close(), this.#open.close()]).then(() => undefined);
  }

  /**
   * A lookup that resolves every address of the name and refuses the connection when any of them is one
   * the rules refuse: net.connect calls it for the connection itself, so the address checked is the
   * address connected to, and a name that resolves differently a moment later gains nothing.
   */
  #checkedLookup(resolve: LookupFunction): LookupFunction {
    return (hostname, options, callback) => {
      resolve(hostname, { ...options, all: true }, (err, found) => {
        if (err) return callback(err, '', 0);
        const addresses = found as unknown as LookupAddress[];
        for (const { address } of addresses) {
          const refusal = this.#rules.refusal(address);
          if (refusal) return callback(new OutboundRefused(refusal), '', 0);
        }
        if (addresses.length === 0) return callback(new OutboundUnavailable('no address'), '', 0);
        if (options.all) return (callback as (e: null, a: LookupAddress[]) => void)(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      });
    };
  }

  /**
   * Whether `url` may be fetched, and through which agent: its scheme, then its host (our own origin or a
   * listed name: any address; an address literal: checked here, as no lookup runs for it; any other
   * name: checked by the guarded agent's lookup as it connects). Throws OutboundRefused naming `what`.
   */
  #dispatcherFor(url: URL, what: string): Dispatcher {
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname)))
      throw new OutboundRefused(`${what} is not https (http only on a loopback host)`);
    if (url.username || url.password) throw new OutboundRefused(`${what} carries a user name or password`);
    if (this.#ownOrigins.has(url.origin) || this.#rules.allowsName(url.hostname)) return this.#open;
    const host = bareHost(url.hostname);
    if (isIP(host)) {
      const refusal = this.#rules.refusal(host);
      if (refusal) throw refusedAddress(what, refusal);
    }
    return this.#guarded;
  }

  /**
   * A fetch for a client library that speaks fetch (openid-client): the same rules for every target, no
   * redirect followed; the library bounds time and size, and sees fetch's own errors but for a refusal.
   */
  fetch = async (input: string | URL, init: RequestInit = {}, what = 'the URL'): Promise<Response> => {
    const url = new URL(String(input));
    const dispatcher = this.#dispatcherFor(url, what);
    try {
      return (await undiciFetch(url, {
        ...(init as UndiciInit),
        redirect: 'manual',
        dispatcher,
      })) as unknown as Response;
    } catch (err) {
      const refused = refusalIn(err);
      throw refused ? refusedAddress(what, refused.message) : err;
    }
  };

  /** One GET of a document: its text, or OutboundRefused, OutboundUnavailable or OutboundTimeout naming `o.what`. */
  async get(href: string, o: GetOptions): Promise<string> {
    let url: URL;
    try {
      url = new URL(href);
    } catch {
      throw new OutboundRefused(`${o.what} is not a URL`);
    }
    const signal = o.signal ?? AbortSignal.timeout(o.timeoutMs ?? 5000);
    for (let redirects = 0; ; redirects++) {
      const response = await this.#request(url, o, signal);
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel().catch(() => undefined);
        const next = new URL(location, url);
        if (!o.redirects) throw new OutboundRefused(`${o.what} redirects (HTTP ${response.status})`);
        if (next.origin !== url.origin) throw new OutboundRefused(`${o.what} redirects to another origin`);
        if (redirects >= o.redirects) throw new OutboundRefused(`${o.what} redirects too often`);
        url = next;
        continue;
      }
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => undefined);
        throw new OutboundUnavailable(`${o.what} answered HTTP ${response.status}`);
      }
      return await readBounded(response, o, signal);
    }
  }

  async #request(url: URL, o: GetOptions, signal: AbortSignal): Promise<Response> {
    const dispatcher = this.#dispatcherFor(url, o.what);
    try {
      return (await undiciFetch(url, {
        headers: { accept: o.accept },
        redirect: 'manual',
        signal,
        dispatcher,
      })) as unknown as Response;
    } catch (err) {
      throw signal.aborted ? new OutboundTimeout(`fetching ${o.what} timed out`) : causeOf(err, o.what);
    }
  }
}

const refusedAddress = (what: string, kind: string) =>
  new OutboundRefused(
    `${what} is at ${/^(un[^i]|[aeio])/i.test(kind) ? 'an' : 'a'} ${kind} address, which outboundFetch.allowedPrivateTargets does not allow`,
  );

/** fetch's failure as ours: a refused address (from the lookup) by its kind, anything else as unavailable. */
function causeOf(err: unknown, what: string): Error {
  const refused = refusalIn(err);
  if (refused) return refusedAddress(what, refused.message);
  return new OutboundUnavailable(`${what} cannot be fetched`);
}

/** The lookup's refusal, which fetch wraps as the cause of its TypeError. */
function refusalIn(err: unknown): OutboundRefused | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    if (e instanceof OutboundRefused) return e;
  return undefined;
}

/** The body as text, refused as soon as it is known to exceed `maxBytes` (readLimited), within the fetch's time. */
async function readBounded(response: Response, o: GetOptions, signal: AbortSignal): Promise<string> {
  const tooLarge = () => new OutboundUnavailable(`${o.what} is larger than ${size(o.maxBytes)}`);
  try {
    return await readLimited(response, o.maxBytes, tooLarge);
  } catch (err) {
    if (err instanceof OutboundUnavailable) throw err;
    if (signal.aborted) throw new OutboundTimeout(`fetching ${o.what} timed out`);
    throw new OutboundUnavailable(`reading ${o.what} failed`);
  }
}
